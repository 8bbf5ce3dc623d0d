package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.TimingContract;

/** The timing cases on the simulator, where {@code spin}'s twin declares its duration on the virtual clock. */
class SimTimingContractTest extends TimingContract {

    @Override
    protected GpuBuilder builder() {
        return SimContractSupport.builder();
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        SimContractSupport.prepareKernels(gpu);
    }

    @Override
    protected boolean observableAsync() {
        return true;
    }
}
