package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.ModuleImageContract;
import metrale.gpu.cuda.RequiresCuda;

/** {@link ModuleImageContract} on the CUDA backend: the driver's own loader and JIT. */
@RequiresCuda
class CudaModuleImageContractTest extends ModuleImageContract {

    @Override
    protected GpuBuilder builder() {
        return Gpu.builder().backend("cuda");
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        loadContractModule(gpu);
    }
}
