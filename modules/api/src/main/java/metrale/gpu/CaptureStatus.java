// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/** A stream's capture status ({@code CUstreamCaptureStatus}). */
public enum CaptureStatus {
    /** Not capturing. */
    NONE,
    /** Capturing: work is recorded, not run. */
    ACTIVE,
    /** Capturing, but an illegal call invalidated the capture; ending it fails with 901. */
    INVALIDATED;

    /**
     * {@return the status for the driver's value 0, 1 or 2}
     *
     * @param code a {@code CUstreamCaptureStatus}
     * @throws IllegalArgumentException for any other value
     */
    public static CaptureStatus of(int code) {
        return switch (code) {
            case 0 -> NONE;
            case 1 -> ACTIVE;
            case 2 -> INVALIDATED;
            default -> throw new IllegalArgumentException("CUstreamCaptureStatus " + code);
        };
    }
}
