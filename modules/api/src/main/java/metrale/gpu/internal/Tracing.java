// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.concurrent.atomic.AtomicInteger;
import metrale.gpu.Dim3;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.TraceEntry;

/**
 * Where a traced op goes: the launch trace, and the step recorder of the calling thread while it
 * runs a captured step's traced run. Thread-safe.
 *
 * <p>The launch trace gets the op's values through its record methods, which allocate nothing; a
 * {@link TraceEntry} is built only for a step recorder, which keeps entries.
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

    /** Hands a kernel launch to the launch trace and to the calling thread's step recorder, if any. */
    void kernel(long func, LaunchConfig cfg, KernelArgs args) {
        Dim3 g = cfg.grid();
        Dim3 b = cfg.block();
        trace.recordKernel(func, g.x(), g.y(), g.z(), b.x(), b.y(), b.z(), cfg.sharedMemBytes(), args);
        StepRecorder r = stepRecorder();
        if (r != null) {
            r.add(TraceEntry.kernel(func, g.x(), g.y(), g.z(), b.x(), b.y(), b.z(), cfg.sharedMemBytes(),
                    args.words(), args.argKinds()), args);
        }
    }

    /** Hands an asynchronous memset to the launch trace and to the calling thread's step recorder, if any. */
    void memset(long ptr, int value, long bytes) {
        trace.recordMemset(ptr, value, bytes);
        StepRecorder r = stepRecorder();
        if (r != null) {
            r.add(TraceEntry.memset(ptr, value, bytes), null);
        }
    }

    /** Hands a device-to-device copy to the launch trace and to the calling thread's step recorder, if any. */
    void d2d(long src, long dst, long bytes) {
        trace.recordD2d(src, dst, bytes);
        StepRecorder r = stepRecorder();
        if (r != null) {
            r.add(TraceEntry.d2d(src, dst, bytes), null);
        }
    }

    /** {@return the calling thread's step recorder, or {@code null} outside a captured step's traced run} */
    private StepRecorder stepRecorder() {
        return stepTracers.getPlain() != 0 ? stepRecorder.get() : null;
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
