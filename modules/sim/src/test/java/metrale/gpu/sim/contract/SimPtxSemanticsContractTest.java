// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.PtxSemanticsContract;

/**
 * The PTX-semantics contract on the simulator: {@code ops.cu} has no twins, so every kernel runs
 * its PTX on the engine, and every result PTX leaves open must be the engine's documented choice.
 */
class SimPtxSemanticsContractTest extends PtxSemanticsContract {

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
