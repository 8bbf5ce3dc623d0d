// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashMap;
import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * A context's events by handle, and the rules of their flags and of timing between two of them
 * ({@code cuEventCreate}, {@code cuEventElapsedTime}) on the virtual clock. The device calls these
 * doors under its lock; not thread-safe on its own.
 */
final class SimEvents {

    private final Map<Long, SimEvent> events = new HashMap<>();

    /** {@return the live event {@code h}, else {@code INVALID_HANDLE}} */
    SimEvent get(long h, String op) {
        SimEvent e = events.get(h);
        if (e == null) {
            throw err(CudaError.INVALID_HANDLE, op, "event=" + hex(h) + ": not a live event (destroyed, or never created)");
        }
        return e;
    }

    /** {@code cuEventCreate}: {@return the new event's handle} */
    long create(int flags, String op) {
        if ((flags & ~7) != 0) {
            throw err(CudaError.INVALID_VALUE, op, "flags=" + flags
                    + ": only BLOCKING_SYNC (1), DISABLE_TIMING (2) and INTERPROCESS (4) are flags");
        }
        if ((flags & SimEvent.INTERPROCESS) != 0 && (flags & SimEvent.DISABLE_TIMING) == 0) {
            throw err(CudaError.INVALID_VALUE, op, "flags=" + flags + ": INTERPROCESS (4) requires DISABLE_TIMING (2)");
        }
        long h = Ids.handle();
        events.put(h, new SimEvent(h, flags));
        return h;
    }

    void destroy(long event, String op) {
        if (events.remove(event) == null) {
            throw err(CudaError.INVALID_HANDLE, op, "event=" + hex(event) + ": not a live event");
        }
    }

    /**
     * {@code cuEventElapsedTime}: {@return the virtual milliseconds between the two records' ends,
     * what the twins between them declared}
     *
     * @param now   the virtual clock, in nanoseconds: both records must have completed by then
     * @param rules the capture rules: an event recorded in a live capture is refused, invalidating it
     */
    float elapsedMillis(long start, long end, long now, CaptureRules rules, String op) {
        SimEvent a = get(start, op);
        SimEvent b = get(end, op);
        for (SimEvent ev : new SimEvent[] {a, b}) {
            if ((ev.flags & SimEvent.DISABLE_TIMING) != 0) {
                throw err(CudaError.INVALID_HANDLE, op, ev + " was created with DISABLE_TIMING");
            }
            rules.checkNotCaptured(ev, op);
            if (ev.op == null) {
                throw err(CudaError.INVALID_HANDLE, op, ev + " has never been recorded");
            }
        }
        for (SimEvent ev : new SimEvent[] {a, b}) {
            if (!ev.op.completeAt(now)) {
                throw err(CudaError.NOT_READY, op, ev + " has not completed at virtual time " + now
                        + " ns; synchronize it first");
            }
        }
        return (float) ((b.op.end - a.op.end) / 1e6);
    }

    /** {@return how many events are live} */
    int count() {
        return events.size();
    }

    void clear() {
        events.clear();
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
