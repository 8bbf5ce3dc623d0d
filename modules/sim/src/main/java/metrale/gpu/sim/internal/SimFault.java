package metrale.gpu.sim.internal;

import metrale.gpu.CudaError;

/**
 * A device-side fault raised while work executes (an out-of-bounds view access, an injected fault,
 * a failing kernel twin). The device latches it as a sticky error; it never reaches user code as
 * this type.
 */
final class SimFault extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The CUDA error the fault stands for; sticky. */
    final transient CudaError error;

    SimFault(CudaError error, String message) {
        super(message);
        this.error = error;
    }

    SimFault(CudaError error, String message, Throwable cause) {
        super(message, cause);
        this.error = error;
    }
}
