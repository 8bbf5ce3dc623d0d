// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.CountingDriver;
import metrale.gpu.contract.FaultContract;
import metrale.gpu.cuda.RequiresCuda;
import org.junit.jupiter.api.Tag;

/**
 * {@link FaultContract} on the CUDA backend. Every test makes a sticky fault, after which CUDA
 * refuses new work in the whole process (CUDA_SEMANTICS.md section 4), so each test method needs a
 * JVM of its own: the bundle's run-tests.sh runs them one by one (tag {@code sticky-contract});
 * the Maven build leaves them out.
 */
@RequiresCuda
@Tag("sticky-contract")
class CudaFaultContractTest extends FaultContract {

    @Override
    protected GpuBuilder builder() {
        return CountingDriver.over(Gpu.builder().backend("cuda"));
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        loadContractModule(gpu);
    }

    @Override
    protected boolean runtimesAreIsolated() {
        return false;
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        assertCountedReleases(closed);
    }
}
