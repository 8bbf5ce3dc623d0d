// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.HeapCopyContract;

/** The contract for blocking copies of Java heap memory, on the simulator. */
class SimHeapCopyContractTest extends HeapCopyContract {

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

    @Override
    protected void assertBackendReleased(Gpu closed) {
        SimContractSupport.assertReleased(closed);
    }
}
