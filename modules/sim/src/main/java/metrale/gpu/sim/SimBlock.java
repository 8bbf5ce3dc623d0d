// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * One thread block, seen by a {@link BlockBody}. Each {@link #forEachThread} call is one phase that
 * runs every thread of the block; consecutive phases are separated by an implicit
 * {@code __syncthreads()}. The shared-memory views cover the launch's dynamic shared memory
 * ({@link SimLaunch#sharedMemBytes()} bytes), fresh and zeroed for each block; an access past its
 * end is an illegal address.
 */
public interface SimBlock {

    /** {@return {@code blockIdx.x}} */
    int blockX();

    /** {@return {@code blockIdx.y}} */
    int blockY();

    /** {@return {@code blockIdx.z}} */
    int blockZ();

    /**
     * Runs one phase: {@code body} for every thread of this block, x fastest.
     *
     * @param body the thread body
     */
    void forEachThread(ThreadBody body);

    /** {@return the dynamic shared memory as floats} */
    FloatView sharedFloats();

    /** {@return the dynamic shared memory as ints} */
    IntView sharedInts();

    /** {@return the dynamic shared memory as doubles} */
    DoubleView sharedDoubles();

    /** {@return the dynamic shared memory as bytes} */
    ByteView sharedBytes();
}
