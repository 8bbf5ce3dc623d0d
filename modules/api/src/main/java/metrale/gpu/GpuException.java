// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Objects;

/**
 * A failed device operation: the {@link CudaError} (name and number), the call that failed and
 * its arguments.
 *
 * <p>Unchecked. Argument errors such as {@link CudaError#INVALID_VALUE} leave the runtime usable;
 * a sticky device fault is latched and reported by every later call as a
 * {@link StickyFaultException}.
 */
public class GpuException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The error, by name and number. */
    private final CudaError error;
    /** The status number the driver returned. */
    private final int rawCode;
    /** The call that failed. */
    private final String operation;
    /** The call's arguments and context. */
    private final String details;

    /**
     * Creates an exception for {@code error} raised by {@code operation}.
     *
     * @param error     the error; not {@code null}
     * @param operation the call that failed, e.g. {@code cuMemAlloc_v2} or {@code alloc}
     * @param details   the call's arguments and anything else that explains the failure; may be empty
     */
    public GpuException(CudaError error, String operation, String details) {
        this(error, error.code(), operation, details, null);
    }

    /**
     * Creates an exception with the driver's raw status and a cause.
     *
     * @param error     the error; not {@code null}
     * @param rawCode   the status number the driver returned (differs from {@code error.code()} only for {@link CudaError#UNKNOWN})
     * @param operation the call that failed
     * @param details   the call's arguments and context; may be empty
     * @param cause     the underlying exception, or {@code null}
     */
    public GpuException(CudaError error, int rawCode, String operation, String details, Throwable cause) {
        super(format(error, rawCode, operation, details), cause);
        this.error = Objects.requireNonNull(error, "error");
        this.rawCode = rawCode;
        this.operation = operation == null ? "" : operation;
        this.details = details == null ? "" : details;
    }

    /** Used by subclasses that compose their own message. */
    GpuException(String message, CudaError error, String operation, String details, Throwable cause) {
        super(message, cause);
        this.error = Objects.requireNonNull(error, "error");
        this.rawCode = error.code();
        this.operation = operation == null ? "" : operation;
        this.details = details == null ? "" : details;
    }

    private static String format(CudaError error, int rawCode, String operation, String details) {
        StringBuilder sb = new StringBuilder();
        sb.append(operation == null || operation.isEmpty() ? "GPU call" : operation).append(" failed: ");
        if (error == CudaError.UNKNOWN && rawCode != CudaError.UNKNOWN.code()) {
            sb.append("CUresult ").append(rawCode).append(" (unlisted)");
        } else {
            sb.append(error.cudaName()).append(" (").append(error.code()).append("): ").append(error.description());
        }
        if (details != null && !details.isEmpty()) {
            sb.append(" [").append(details).append(']');
        }
        return sb.toString();
    }

    /** {@return the CUDA error} */
    public CudaError error() {
        return error;
    }

    /** {@return the status number the driver returned} */
    public int rawCode() {
        return rawCode;
    }

    /** {@return the call that failed} */
    public String operation() {
        return operation;
    }

    /** {@return the call's arguments and context, possibly empty} */
    public String details() {
        return details;
    }
}
