// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.CountingDriver;
import metrale.gpu.contract.PoolSoakContract;
import metrale.gpu.cuda.RequiresCuda;

/** {@link PoolSoakContract} on the CUDA backend, with the contract kernels' PTX. */
@RequiresCuda
class CudaPoolSoakContractTest extends PoolSoakContract {

    @Override
    protected GpuBuilder builder() {
        return CountingDriver.over(Gpu.builder().backend("cuda"));
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        loadContractModule(gpu);
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        assertCountedReleases(closed);
    }
}
