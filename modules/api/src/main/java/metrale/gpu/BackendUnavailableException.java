// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A backend that cannot be opened here: no driver library ({@code libcuda.so.1} did not load), a
 * JVM without {@code --enable-native-access} for the backend's module, no device, or no backend on
 * the path at all. The message leads with that reason; the error is {@link CudaError#NO_DEVICE},
 * what CUDA's own {@code cuInit} reports when it finds no usable device.
 *
 * <pre>{@code
 * try (Gpu gpu = Gpu.open("cuda")) {
 *     ...
 * } catch (BackendUnavailableException e) {
 *     // e.g. "Gpu.open: no available backend named 'cuda': cuda: libcuda.so.1 did not load (...)
 *     //       (CUDA_ERROR_NO_DEVICE (100))"
 *     System.err.println(e.reason());
 * }
 * }</pre>
 */
public final class BackendUnavailableException extends GpuException {

    private static final long serialVersionUID = 1L;

    /** Why the backend cannot be opened. */
    private final String reason;

    /**
     * Creates the exception.
     *
     * @param operation the call that could not open a backend, e.g. {@code Gpu.open}
     * @param reason    why, naming the backend and what is missing
     */
    public BackendUnavailableException(String operation, String reason) {
        super(operation + ": " + reason + " (" + CudaError.NO_DEVICE.cudaName() + " (" + CudaError.NO_DEVICE.code() + "))",
                CudaError.NO_DEVICE, operation, reason, null);
        this.reason = reason;
    }

    /** {@return why the backend cannot be opened, without the operation and the error code} */
    public String reason() {
        return reason;
    }
}
