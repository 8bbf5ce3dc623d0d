package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.OpSequenceProperties;
import metrale.gpu.sim.SimOptions;

/** Random op sequences on the simulator, with the program's seed as the scheduler's seed. */
class SimOpSequenceProperties extends OpSequenceProperties {

    @Override
    protected GpuBuilder builder() {
        return SimContractSupport.builder();
    }

    @Override
    protected GpuBuilder builder(long seed) {
        return builder().backendOption(SimOptions.SEED, Long.toString(seed));
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        SimContractSupport.prepareKernels(gpu);
    }

    @Override
    protected boolean exactMemInfo() {
        return true;
    }
}
