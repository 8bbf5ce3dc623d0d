// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

/**
 * Whether a backend can be opened, and why not.
 *
 * @param available whether it can be opened
 * @param reason    why not (empty when available)
 * @param present   whether what the backend needs is here (for CUDA: an NVIDIA driver) even though
 *                  the backend cannot be used; an automatic choice that passes over a present
 *                  backend logs a warning with the reason, since that is a set-up mistake
 */
public record Availability(boolean available, String reason, boolean present) {

    /**
     * An availability with {@code present} equal to {@code available}.
     *
     * @param available whether it can be opened
     * @param reason    why not (empty when available)
     */
    public Availability(boolean available, String reason) {
        this(available, reason, available);
    }

    /** {@return an available backend} */
    public static Availability yes() {
        return new Availability(true, "");
    }

    /**
     * {@return an unavailable backend, whose requirements are absent here}
     *
     * @param reason why, naming what is missing and how to fix it
     */
    public static Availability no(String reason) {
        return new Availability(false, reason);
    }

    /**
     * {@return a backend that is installed here but cannot be used (for example a driver is present
     * but native access is not enabled)}
     *
     * @param reason why, naming the fix (a flag, a setting)
     */
    public static Availability presentButUnusable(String reason) {
        return new Availability(false, reason, true);
    }
}
