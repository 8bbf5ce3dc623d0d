// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * One CUDA thread's built-in variables: {@code threadIdx}, {@code blockIdx}, {@code blockDim},
 * {@code gridDim}, and the global index {@code blockIdx * blockDim + threadIdx} per axis (computed in
 * 32-bit arithmetic, as CUDA C computes it with {@code int}s).
 *
 * <p>The simulator passes one reused cursor to every thread of a loop, so a thread body must never
 * keep it past {@link ThreadBody#run}.
 */
public interface SimThread {

    /** {@return {@code threadIdx.x}} */
    int threadX();

    /** {@return {@code threadIdx.y}} */
    int threadY();

    /** {@return {@code threadIdx.z}} */
    int threadZ();

    /** {@return {@code blockIdx.x}} */
    int blockX();

    /** {@return {@code blockIdx.y}} */
    int blockY();

    /** {@return {@code blockIdx.z}} */
    int blockZ();

    /** {@return {@code blockDim.x}} */
    int blockDimX();

    /** {@return {@code blockDim.y}} */
    int blockDimY();

    /** {@return {@code blockDim.z}} */
    int blockDimZ();

    /** {@return {@code gridDim.x}} */
    int gridDimX();

    /** {@return {@code gridDim.y}} */
    int gridDimY();

    /** {@return {@code gridDim.z}} */
    int gridDimZ();

    /** {@return {@code blockIdx.x * blockDim.x + threadIdx.x}} */
    int globalX();

    /** {@return {@code blockIdx.y * blockDim.y + threadIdx.y}} */
    int globalY();

    /** {@return {@code blockIdx.z * blockDim.z + threadIdx.z}} */
    int globalZ();
}
