// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/** The body of one thread block, for kernels that need block phases, barriers and shared memory. */
@FunctionalInterface
public interface BlockBody {

    /**
     * Runs one block.
     *
     * @param b the block: its coordinates, its phases and its shared memory; valid only during this call
     */
    void run(SimBlock b);
}
