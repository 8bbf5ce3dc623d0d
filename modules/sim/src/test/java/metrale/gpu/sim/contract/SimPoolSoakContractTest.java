// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.PoolSoakContract;
import metrale.gpu.sim.SimOptions;

/** The threaded soak of the allocation path, on the simulator; everything on includes parallel blocks. */
class SimPoolSoakContractTest extends PoolSoakContract {

    @Override
    protected GpuBuilder builder() {
        return SimContractSupport.builder();
    }

    @Override
    protected GpuBuilder everythingOn(GpuBuilder b) {
        return super.everythingOn(b).backendOption(SimOptions.BLOCKS, "parallel");
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        SimContractSupport.prepareKernels(gpu);
    }

    @Override
    protected boolean observableAsync() {
        return true;
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        SimContractSupport.assertReleased(closed);
    }
}
