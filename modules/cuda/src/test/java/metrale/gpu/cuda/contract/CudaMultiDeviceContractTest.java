// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.MultiDeviceContract;
import metrale.gpu.cuda.RequiresCuda;

/** {@link MultiDeviceContract} on CUDA with every GPU of the machine (one GPU: device choice, peer copies to itself and between two runtimes on it). */
@RequiresCuda
class CudaMultiDeviceContractTest extends MultiDeviceContract {

    @Override
    protected GpuBuilder builder(int device) {
        return Gpu.builder().backend("cuda").device(device);
    }

    @Override
    protected int deviceCount() {
        return Gpu.builder().backend("cuda").devices().size();
    }

    @Override
    protected void prepareKernels(Gpu gpu) {
        metrale.gpu.contract.GpuContract.loadContractModule(gpu);
    }
}
