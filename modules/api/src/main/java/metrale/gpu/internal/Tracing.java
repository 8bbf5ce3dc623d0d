// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.concurrent.atomic.AtomicInteger;
import metrale.gpu.KernelArgs;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.TraceEntry;

/**
 * Where a traced op goes: the launch trace, and the step recorder of the calling thread while it
 * runs a captured step's traced run. Thread-safe.
 */
final class Tracing {

    private final LaunchTrace trace;
    /** Threads running a captured step's traced run, and each one's recorder. */
    private final AtomicInteger stepTracers = new AtomicInteger();
    private final ThreadLocal<StepRecorder> stepRecorder = new ThreadLocal<>();

    Tracing(LaunchTrace trace) {
        this.trace = trace;
    }

    /**
     * Whether an op must be traced: the launch trace is on, or some thread runs a captured step's
     * traced run. A plain read of the step count is enough: a step's own thread sees its own
     * increment, and another thread that sees a stale count finds no recorder of its own.
     */
    boolean on() {
        return trace.on() || stepTracers.getPlain() != 0;
    }

    /** Hands an op to the launch trace and to the calling thread's step recorder, if any. */
    void record(TraceEntry e, KernelArgs args) {
        trace.record(e);
        if (stepTracers.getPlain() != 0) {
            StepRecorder r = stepRecorder.get();
            if (r != null) {
                r.add(e, args);
            }
        }
    }

    /**
     * Makes the calling thread's ops go to {@code r} until {@link #endStep}.
     *
     * @return the recorder it replaces (a step run inside another step's region), for {@link #endStep}
     */
    StepRecorder beginStep(StepRecorder r) {
        StepRecorder outer = stepRecorder.get();
        stepRecorder.set(r);
        stepTracers.incrementAndGet();
        return outer;
    }

    /** Ends the calling thread's {@link #beginStep}, giving the thread back {@code outer}. */
    void endStep(StepRecorder outer) {
        if (outer == null) {
            stepRecorder.remove();
        } else {
            stepRecorder.set(outer);
        }
        stepTracers.decrementAndGet();
    }
}
