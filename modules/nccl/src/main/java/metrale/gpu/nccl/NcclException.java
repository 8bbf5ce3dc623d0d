// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * A failed collective call: the {@link NcclResult}, the NCCL function and its arguments, with
 * NCCL's own text ({@code ncclGetErrorString}, and {@code ncclGetLastError} where there is one).
 * As a {@link GpuException} its {@link #error()} is the nearest CUDA error: {@code INVALID_VALUE}
 * for bad arguments and usage, {@code NOT_READY} for an operation still in progress (a rank that
 * never joined), {@code UNKNOWN} otherwise.
 */
public final class NcclException extends GpuException {

    private static final long serialVersionUID = 1L;

    /** The NCCL result. */
    private final NcclResult result;

    /**
     * Creates the exception.
     *
     * @param result    what NCCL returned (or what the simulated communicator would have)
     * @param rawCode   the number NCCL returned
     * @param operation the NCCL function, e.g. {@code ncclAllReduce}
     * @param details   its arguments and NCCL's text
     */
    public NcclException(NcclResult result, int rawCode, String operation, String details) {
        super(cudaErrorOf(result), cudaErrorOf(result).code(), operation,
                result.ncclName() + " (" + rawCode + ")" + (details == null || details.isEmpty() ? "" : ": " + details), null);
        this.result = result;
    }

    /** {@return the NCCL result} */
    public NcclResult result() {
        return result;
    }

    private static CudaError cudaErrorOf(NcclResult r) {
        return switch (r) {
            case INVALID_ARGUMENT, INVALID_USAGE -> CudaError.INVALID_VALUE;
            case IN_PROGRESS -> CudaError.NOT_READY;
            default -> CudaError.UNKNOWN;
        };
    }
}
