package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.TimingContract;
import metrale.gpu.cuda.RequiresCuda;

/** {@link TimingContract} on the CUDA backend: {@code spin} spins the GPU's global timer. */
@RequiresCuda
class CudaTimingContractTest extends TimingContract {

    @Override
    protected GpuBuilder builder() {
        return Gpu.builder().backend("cuda");
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        loadContractModule(gpu);
    }
}
