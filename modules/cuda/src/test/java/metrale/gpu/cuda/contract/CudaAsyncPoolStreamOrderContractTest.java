// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.CountingDriver;
import metrale.gpu.contract.PoolStreamOrderContract;
import metrale.gpu.cuda.RequiresCuda;

/** {@link PoolStreamOrderContract} on the CUDA backend with {@code allocator=cuda}: {@code cuMemAllocAsync} and the default memory pool. */
@RequiresCuda
class CudaAsyncPoolStreamOrderContractTest extends PoolStreamOrderContract {

    @Override
    protected GpuBuilder builder() {
        return CountingDriver.over(Gpu.builder().backend("cuda"));
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        loadContractModule(gpu);
    }

    @Override
    protected String allocator() {
        return "cuda";
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        assertCountedReleases(closed);
    }
}
