// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/** The body of one CUDA thread, run for every thread of a grid or of a block. */
@FunctionalInterface
public interface ThreadBody {

    /**
     * Runs one thread.
     *
     * @param t the thread's coordinates: a reused cursor, never to be kept past this call
     */
    void run(SimThread t);
}
