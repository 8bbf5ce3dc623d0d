// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * An event handle ({@code CUevent}), created by {@link Gpu#createEvent} and destroyed with
 * {@link Gpu#destroyEvent}. A plain value that owns nothing.
 *
 * @param handle the backend's event handle
 */
public record Event(long handle) {

    @Override
    public String toString() {
        return "event@0x" + Long.toHexString(handle);
    }
}
