// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.AdoptionContract;
import metrale.gpu.sim.SimControls;

/**
 * {@link AdoptionContract} on the simulator: the foreign memory is allocated in the simulated
 * context behind the runtime ({@link SimControls#allocForeign}), as another library's
 * {@code cuMemAlloc} would be.
 */
class SimAdoptionContractTest extends AdoptionContract {

    @Override
    protected GpuBuilder builder() {
        return SimContractSupport.builder();
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        SimContractSupport.prepareKernels(gpu);
    }

    @Override
    protected void assertBackendReleased(Gpu closed) {
        SimContractSupport.assertReleased(closed);
    }

    @Override
    protected Foreign foreign(Gpu gpu) {
        SimControls c = gpu.unwrap(SimControls.class).orElseThrow();
        return new Foreign() {
            @Override
            public long alloc(long bytes) {
                return c.allocForeign(bytes);
            }

            @Override
            public void free(long ptr) {
                // Closing the simulated context (the runtime's close) released its memory, as a
                // destroyed CUDA context does.
                if (!c.isClosed()) {
                    c.freeForeign(ptr);
                }
            }

            @Override
            public boolean stillAllocatedAfterClose(long ptr) {
                // The runtime freed its own memory before closing the context; what the context
                // still held then is the foreign allocation.
                return c.isClosed() && c.liveAtClose().contains("1 device allocation(s)");
            }

            @Override
            public void close() {
            }
        };
    }
}
