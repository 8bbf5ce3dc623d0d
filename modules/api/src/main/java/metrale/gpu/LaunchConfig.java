// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Objects;

/**
 * A kernel launch configuration: grid, block and dynamic shared memory in bytes.
 *
 * <p>Immutable. The backend checks it as {@code cuLaunchKernel} does, so an invalid
 * configuration is a {@link GpuException} with {@link CudaError#INVALID_VALUE} at launch time.
 *
 * @param grid            blocks per grid
 * @param block           threads per block
 * @param sharedMemBytes  dynamic shared memory per block, in bytes
 */
public record LaunchConfig(Dim3 grid, Dim3 block, int sharedMemBytes) {

    /** Checks for {@code null} only. */
    public LaunchConfig {
        Objects.requireNonNull(grid, "grid");
        Objects.requireNonNull(block, "block");
    }

    /**
     * {@return a 1D configuration with no dynamic shared memory}
     *
     * @param gridX  blocks
     * @param blockX threads per block
     */
    public static LaunchConfig of(int gridX, int blockX) {
        return new LaunchConfig(Dim3.of(gridX), Dim3.of(blockX), 0);
    }

    /**
     * {@return a configuration with no dynamic shared memory}
     *
     * @param grid  blocks per grid
     * @param block threads per block
     */
    public static LaunchConfig of(Dim3 grid, Dim3 block) {
        return new LaunchConfig(grid, block, 0);
    }

    /**
     * {@return a 1D configuration with enough blocks of {@code blockSize} threads to cover
     * {@code elements} threads}
     *
     * @param elements  the number of threads wanted, at least 1
     * @param blockSize threads per block, at least 1
     * @throws IllegalArgumentException if either is not positive or the grid would not fit an int
     */
    public static LaunchConfig forElements(long elements, int blockSize) {
        if (elements <= 0 || blockSize <= 0) {
            throw new IllegalArgumentException(
                    "forElements(elements=" + elements + ", blockSize=" + blockSize + "): both must be positive");
        }
        long blocks = (elements + blockSize - 1) / blockSize;
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "forElements(elements=" + elements + ", blockSize=" + blockSize + "): " + blocks + " blocks do not fit gridDim.x");
        }
        return of((int) blocks, blockSize);
    }

    /**
     * {@return this configuration with {@code bytes} of dynamic shared memory}
     *
     * @param bytes dynamic shared memory per block
     */
    public LaunchConfig withSharedMem(int bytes) {
        return new LaunchConfig(grid, block, bytes);
    }

    @Override
    public String toString() {
        return "grid " + grid + " block " + block + " smem " + sharedMemBytes;
    }
}
