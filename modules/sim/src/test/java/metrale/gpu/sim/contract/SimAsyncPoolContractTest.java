// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.PoolContract;

/** The pool contract on the simulator with {@code allocator=cuda}: the simulator's {@code cuMemAllocAsync}. */
class SimAsyncPoolContractTest extends PoolContract {

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
    protected boolean observableAsync() {
        return true;
    }

    @Override
    protected String allocator() {
        return "cuda";
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        SimContractSupport.assertReleased(closed);
    }
}
