// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * How the blocks of a grid run in {@link SimLaunch#forEachThread} and {@link SimLaunch#forEachBlock}.
 * CUDA promises no order among blocks, so a twin that depends on one (a block reading what another
 * block wrote in the same launch, a read-modify-write without an atomic) is wrong on a GPU; the
 * shuffled and parallel orders make it show. Set with option {@code sim.blocks}
 * ({@link SimOptions#BLOCKS}) or {@link SimControls#setBlockOrder}.
 */
public enum SimBlockOrder {
    /** One thread, blocks in index order, x fastest: deterministic, the default. */
    ORDERED,
    /**
     * One thread, blocks in an order drawn from the schedule's seed ({@code sim.seed},
     * {@link SimControls#setScheduleSeed}): deterministic for a seed, different across seeds.
     */
    SHUFFLED,
    /**
     * Blocks spread over several threads at once (one per available processor, at least two): races
     * between blocks happen for real, so a result may change from run to run. The threads of one
     * block still run on one thread, in order. Each thread runs contiguous runs of blocks in index
     * order and takes over what a slower thread has not started. A fault stops the launch: blocks
     * past the lowest faulting one may not run, every block before it does, and the fault reported
     * is that block's, as in {@link #ORDERED}.
     */
    PARALLEL
}
