// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.MemoryDetectorContract;

/** {@link MemoryDetectorContract} on the simulator: red zones ordered for every stream, scans at every free, the quarantine. */
class SimMemoryDetectorContractTest extends MemoryDetectorContract {

    @Override
    protected GpuBuilder builder() {
        return SimContractSupport.builder();
    }

    @Override
    protected boolean kernelsReachRedZones() {
        return !SimContractSupport.twinsOff();
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        SimContractSupport.prepareKernels(gpu);
    }

    @Override
    protected boolean quarantinesByDefault() {
        return true;
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
