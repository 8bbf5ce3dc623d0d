// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.cuda.internal.CudaDevice;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A kernel that stores to an illegal address latches a sticky error in the context: every later
 * call reports it, and close still completes. CUDA cannot recover from this inside the process
 * (CUDA_SEMANTICS.md section 4), so this class is tagged {@code sticky-driver} and runs in its own JVM.
 */
@RequiresCuda
@Tag("sticky-driver")
class CudaStickyFaultTest {

    @Test
    void anIllegalStoreIsLatchedReportedByEveryCallAndCloseCompletes() {
        CudaDevice gpu = TestKernels.open();
        long module = gpu.moduleLoadData("kernels", TestKernels.ptx("kernels"));
        long storeTo = gpu.moduleGetFunction(module, "store_to");
        long addOne = gpu.moduleGetFunction(module, "add_one");
        long p = gpu.memAlloc(256);
        try (KernelArgs args = new KernelArgs()) {
            // The faulting launch itself succeeds; the fault surfaces at the next synchronizing call.
            gpu.launchKernel(storeTo, LaunchConfig.of(1, 1), 0, args.i64(0x10L).i32(7));
            GpuException first = catchThrowableOfType(GpuException.class, gpu::ctxSynchronize);
            assertThat(first).as("cuCtxSynchronize after an illegal store").isNotNull();
            CudaError sticky = first.error();
            assertThat(sticky.isSticky()).as(first.getMessage()).isTrue();
            // An H200 (driver 580.159.04) answers ILLEGAL_ADDRESS (700) for a store to address 0x10.
            assertThat(sticky).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(first.getMessage()).contains("cuCtxSynchronize", sticky.cudaName(), "driver: " + sticky.cudaName());
            assertThat(gpu.probe()).isEqualTo(sticky);

            // Every later call reports the same code, named by the call that saw it.
            assertSticky(sticky, "cuCtxSynchronize", gpu::ctxSynchronize);
            assertSticky(sticky, "cuMemAlloc_v2", () -> gpu.memAlloc(64));
            assertSticky(sticky, "cuMemcpyDtoH_v2", () -> gpu.memcpyDtoH(MemorySegment.ofArray(new byte[16]), p, 16));
            assertSticky(sticky, "cuStreamSynchronize", () -> gpu.streamSynchronize(0));
            assertSticky(sticky, "cuStreamCreate", () -> gpu.streamCreate(0));
            assertSticky(sticky, "cuEventCreate", () -> gpu.eventCreate(0));
            assertSticky(sticky, "cuLaunchKernel", () -> gpu.launchKernel(addOne, LaunchConfig.of(1, 1), 0, args.clear().ptr(p).i32(1)));
            assertSticky(sticky, "cuModuleLoadData", () -> gpu.moduleLoadData("again", TestKernels.ptx("kernels")));
            assertThat(gpu.probe()).isEqualTo(sticky);
        } finally {
            // close() never throws, even now.
            gpu.close();
        }
        assertThat(gpu.closeFailure()).as("primary-context release after a sticky fault").isEmpty();
        assertThat(gpu.probe()).isEqualTo(CudaError.CONTEXT_IS_DESTROYED);
    }

    private static void assertSticky(CudaError sticky, String operation, Runnable call) {
        GpuException e = catchThrowableOfType(GpuException.class, call::run);
        assertThat(e).as(operation + " after the fault").isNotNull();
        assertThat(e.error()).as(e.getMessage()).isEqualTo(sticky);
        assertThat(e.operation()).isEqualTo(operation);
    }
}
