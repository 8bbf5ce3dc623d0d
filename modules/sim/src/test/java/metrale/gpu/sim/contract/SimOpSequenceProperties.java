// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.OpSequenceProperties;
import metrale.gpu.sim.SimOptions;

/** Random op sequences on the simulator, with the program's seed as the scheduler's seed. */
class SimOpSequenceProperties extends OpSequenceProperties {

    @Override
    protected GpuBuilder builder() {
        // The model gives freed memory back at the free, as CUDA's defaults do: no quarantine.
        return SimContractSupport.builder().quarantineBytes(0);
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
