// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import metrale.gpu.sim.internal.ptx.PtxLaunch.Thr;

/**
 * One function compiled to JVM bytecode by {@link PtxCompiler}: {@link #run} has exactly the
 * contract of {@link Interp#run}. It runs the thread from its frame's pc until it exits (state
 * {@code EXITED}) or waits at {@code bar.sync} or a warp operation (state {@code AT_BAR} /
 * {@code AT_WARP}, the frame's pc left at that instruction, its registers in the frame's register
 * file), counting the same steps, raising the same faults with the same messages, and moving the
 * same timers.
 */
interface CompiledCode {

    /** Runs {@code t} from its frame's pc, as {@link Interp#run} does. */
    void run(Thr t);

    /**
     * Runs {@code t} from pc 0 as a thread that just started, as {@link #run} does, except with
     * what its register file holds beyond the special registers ignored (the registers start at
     * zero) and left as it is at the exit: for a record reused thread after thread, whose register
     * file no one reads after a thread exits ({@code PtxLaunch.Block#runEach}). A wait or a
     * hand-over to the interpreter stores the registers as {@link #run} does.
     */
    void runFresh(Thr t);
}
