// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * Three launch dimensions, as CUDA's {@code dim3}. Values are taken as given; the backend checks
 * them as {@code cuLaunchKernel} does (for example a dimension of 0 is {@code INVALID_VALUE}).
 *
 * @param x the x extent
 * @param y the y extent
 * @param z the z extent
 */
public record Dim3(int x, int y, int z) {

    /**
     * {@return the dimensions {@code (x, 1, 1)}}
     *
     * @param x the x extent
     */
    public static Dim3 of(int x) {
        return new Dim3(x, 1, 1);
    }

    /**
     * {@return the dimensions {@code (x, y, 1)}}
     *
     * @param x the x extent
     * @param y the y extent
     */
    public static Dim3 of(int x, int y) {
        return new Dim3(x, y, 1);
    }

    /**
     * {@return the dimensions {@code (x, y, z)}}
     *
     * @param x the x extent
     * @param y the y extent
     * @param z the z extent
     */
    public static Dim3 of(int x, int y, int z) {
        return new Dim3(x, y, z);
    }

    /** {@return {@code x * y * z}, each read as unsigned} */
    public long count() {
        return Integer.toUnsignedLong(x) * Integer.toUnsignedLong(y) * Integer.toUnsignedLong(z);
    }

    @Override
    public String toString() {
        return "[" + x + ", " + y + ", " + z + "]";
    }
}
