// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * Stream capture modes ({@code CUstreamCaptureMode}): which "unsafe" calls (allocation, free,
 * synchronization of other work) a live capture forbids, and where.
 */
public enum CaptureMode {
    /** Forbids unsafe calls in every thread while the capture is live. */
    GLOBAL(0),
    /** Forbids unsafe calls only in the capturing thread. */
    THREAD_LOCAL(1),
    /** Forbids only inherent conflicts. */
    RELAXED(2);

    private final int code;

    CaptureMode(int code) {
        this.code = code;
    }

    /** {@return the driver's {@code CUstreamCaptureMode} value} */
    public int code() {
        return code;
    }
}
