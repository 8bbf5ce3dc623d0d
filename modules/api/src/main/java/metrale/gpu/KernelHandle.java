// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A resolved kernel function ({@code CUfunction}), as returned by {@link Gpu#kernel}.
 *
 * <p>A plain value that owns nothing; it stays valid while its module is loaded on the
 * {@link Gpu} that returned it. The launch trace names it {@code module::func}.
 *
 * @param value the backend's function handle; never {@code 0} for a handle {@link Gpu#kernel} returned
 */
public record KernelHandle(long value) {

    @Override
    public String toString() {
        return "fn@0x" + Long.toHexString(value);
    }
}
