// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.AdoptionContract;
import metrale.gpu.contract.CountingDriver;
import metrale.gpu.cuda.RequiresCuda;

/**
 * {@link AdoptionContract} on the CUDA backend: the foreign memory belongs to a second runtime on
 * the same device, which shares the device's primary context with the runtime under test (as
 * cuBLAS or NCCL in the same process do) and keeps it alive after that runtime closes.
 */
@RequiresCuda
class CudaAdoptionContractTest extends AdoptionContract {

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

    @Override
    protected Foreign foreign(Gpu gpu) {
        Gpu owner = Gpu.builder().backend("cuda").device(gpu.deviceOrdinal()).open();
        return new Foreign() {
            @Override
            public long alloc(long bytes) {
                return owner.alloc(bytes).address();
            }

            @Override
            public void free(long ptr) {
                owner.free(new DevicePtr(ptr));
            }

            @Override
            public boolean stillAllocatedAfterClose(long ptr) {
                // Its owner still lists it, and the driver still copies from it.
                owner.copyD2H(new DevicePtr(ptr), new byte[1]);
                return owner.liveAllocations().stream().anyMatch(a -> a.ptr().address() == ptr);
            }

            @Override
            public void close() {
                owner.close();
            }
        };
    }
}
