// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import metrale.gpu.CudaError;

/**
 * A fault a PTX kernel raised while it ran (an illegal or misaligned address, a trap, a barrier
 * only part of a block reached, a shared-memory race), with the CUDA error the launch latches.
 * The message names the thread, the PTX line and the instruction.
 */
public final class PtxFault extends RuntimeException {

    private final CudaError error;

    /**
     * @param error   the error the launch fails with
     * @param message what happened, where
     */
    public PtxFault(CudaError error, String message) {
        super(message, null, false, false);
        this.error = error;
    }

    /** {@return the CUDA error the launch fails with} */
    public CudaError error() {
        return error;
    }
}
