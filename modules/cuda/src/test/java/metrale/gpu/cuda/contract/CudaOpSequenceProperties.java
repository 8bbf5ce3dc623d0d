// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.contract.OpSequenceProperties;
import metrale.gpu.cuda.CudaCondition;
import metrale.gpu.cuda.internal.CudaBackend;
import metrale.gpu.spi.Availability;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * {@link OpSequenceProperties} on the CUDA backend: seeded op sequences checked against the Java
 * model. jqwik runs no JUnit Jupiter extensions, so {@link CudaSkipHook} skips it without CUDA, and
 * opening the runtime fails where {@code metrale.gpu.required=true}.
 */
@AddLifecycleHook(CudaSkipHook.class)
class CudaOpSequenceProperties extends OpSequenceProperties {

    @Override
    protected GpuBuilder builder() {
        Availability a = CudaBackend.availability();
        if (!a.available()) {
            throw new AssertionError(CudaCondition.REQUIRED_PROPERTY + "=true but CUDA is unavailable: " + a.reason());
        }
        return Gpu.builder().backend("cuda");
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        GpuContract.loadContractModule(gpu);
    }
}
