// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

/** {@code ncclResult_t}: what an NCCL call returned. */
public enum NcclResult {
    /** 0: {@code ncclSuccess}. */
    SUCCESS(0),
    /** 1: {@code ncclUnhandledCudaError}: a CUDA call inside NCCL failed. */
    UNHANDLED_CUDA_ERROR(1),
    /** 2: {@code ncclSystemError}: a system call failed. */
    SYSTEM_ERROR(2),
    /** 3: {@code ncclInternalError}: an NCCL bug or memory corruption. */
    INTERNAL_ERROR(3),
    /** 4: {@code ncclInvalidArgument}: a bad argument. */
    INVALID_ARGUMENT(4),
    /** 5: {@code ncclInvalidUsage}: a call in the wrong order or state (the ranks disagree, for example). */
    INVALID_USAGE(5),
    /** 6: {@code ncclRemoteError}: a remote rank failed or the network did. */
    REMOTE_ERROR(6),
    /** 7: {@code ncclInProgress}: a non-blocking call has not finished; also a rank that never joined in time. */
    IN_PROGRESS(7),
    /** Any number this binding does not list. */
    UNKNOWN(-1);

    private final int code;

    NcclResult(int code) {
        this.code = code;
    }

    /** {@return the {@code ncclResult_t} number} */
    public int code() {
        return code;
    }

    /**
     * {@return the result with this number, or {@link #UNKNOWN}}
     *
     * @param code an {@code ncclResult_t}
     */
    public static NcclResult of(int code) {
        for (NcclResult r : values()) {
            if (r.code == code && r != UNKNOWN) {
                return r;
            }
        }
        return UNKNOWN;
    }

    /** {@return the C name, e.g. {@code ncclInvalidUsage}} */
    public String ncclName() {
        return switch (this) {
            case SUCCESS -> "ncclSuccess";
            case UNHANDLED_CUDA_ERROR -> "ncclUnhandledCudaError";
            case SYSTEM_ERROR -> "ncclSystemError";
            case INTERNAL_ERROR -> "ncclInternalError";
            case INVALID_ARGUMENT -> "ncclInvalidArgument";
            case INVALID_USAGE -> "ncclInvalidUsage";
            case REMOTE_ERROR -> "ncclRemoteError";
            case IN_PROGRESS -> "ncclInProgress";
            case UNKNOWN -> "ncclResult(unlisted)";
        };
    }
}
