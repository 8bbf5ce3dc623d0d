// SPDX-License-Identifier: Apache-2.0
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

    @Override
    protected boolean runsCubinKernels() {
        return !SimContractSupport.twinsOff();
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        SimContractSupport.assertReleased(closed);
    }
}
