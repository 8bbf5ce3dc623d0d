// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

/**
 * Thrown by a CUDA benchmark's setup on a machine where the CUDA backend cannot open, with the
 * backend's reason. It carries no stack trace: JMH prints a failed setup's exception, and here the
 * one line of the reason is all there is to say.
 */
public final class CudaUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param reason why the CUDA backend is unavailable
     */
    public CudaUnavailableException(String reason) {
        super("CUDA benchmarks need a CUDA driver and device; skipped here: " + reason, null, false, false);
    }
}
