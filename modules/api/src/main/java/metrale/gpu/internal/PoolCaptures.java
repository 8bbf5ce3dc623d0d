// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CaptureMode;

/**
 * The captures the pool knows to be live, with their mode and capturing thread, so that it refuses
 * what CUDA's {@code cuMemAlloc}/{@code cuMemFree} refuse: under {@code GLOBAL} every thread's
 * "potentially unsafe" calls, under {@code THREAD_LOCAL} the capturing thread's; {@code RELAXED}
 * refuses none. The driver would answer 900 and invalidate the capture; the pool answers 900 and
 * leaves the capture valid, since it has not touched the driver.
 */
final class PoolCaptures {

    private record Live(long stream, String name, int mode, Thread owner) {
    }

    private final List<Live> live = new ArrayList<>();
    // The size of live, read without the lock: every pool call asks, and almost always none is live.
    private volatile int count;

    /**
     * A capture began on this thread.
     *
     * @param stream the capturing stream's driver handle
     * @param name   the stream as its user knows it
     * @param mode   the capture's {@code CUstreamCaptureMode}
     */
    synchronized void began(long stream, String name, int mode) {
        live.add(new Live(stream, name, mode, Thread.currentThread()));
        count = live.size();
    }

    /** The capture on {@code stream} ended, was aborted or failed to end. */
    synchronized void ended(long stream) {
        for (int i = 0; i < live.size(); i++) {
            if (live.get(i).stream() == stream) {
                live.remove(i);
                count = live.size();
                return;
            }
        }
    }

    /** {@return whether any capture may be live} */
    boolean any() {
        return count > 0;
    }

    /**
     * {@return the capture that forbids this thread an unsafe call, described; {@code null} when none}
     * CUDA's rule for a thread in the default capture mode (GLOBAL): a GLOBAL capture of any thread,
     * or a THREAD_LOCAL capture of this thread.
     */
    synchronized String forbidding() {
        Thread me = Thread.currentThread();
        for (Live c : live) {
            if (c.mode() == CaptureMode.GLOBAL.code() || (c.mode() == CaptureMode.THREAD_LOCAL.code() && c.owner() == me)) {
                return c.name() + " is capturing in " + (c.mode() == CaptureMode.GLOBAL.code() ? "GLOBAL" : "THREAD_LOCAL")
                        + " mode (begun on thread \"" + c.owner().getName() + "\")";
            }
        }
        return null;
    }
}
