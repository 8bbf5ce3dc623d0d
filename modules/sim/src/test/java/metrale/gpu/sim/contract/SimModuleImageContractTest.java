package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.ModuleImageContract;

/** The module-image cases on the simulator. */
class SimModuleImageContractTest extends ModuleImageContract {

    @Override
    protected GpuBuilder builder() {
        return SimContractSupport.builder();
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        SimContractSupport.prepareKernels(gpu);
    }
}
