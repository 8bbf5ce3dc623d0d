// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Through the runtime core: a kernel storing to an illegal address is latched, every later call
 * is refused naming the original fault, and close completes. Its own JVM (tag
 * {@code sticky-runtime}): CUDA cannot recover from a sticky fault inside a process.
 */
@RequiresCuda
@Tag("sticky-runtime")
class CudaGpuStickyFaultTest {

    @Test
    void anIllegalStoreIsLatchedAndReportedByEveryLaterCallWhileCloseCompletes() {
        Gpu gpu = Gpu.builder().backend("cuda").open();
        DevicePtr p;
        try (KernelArgs args = new KernelArgs()) {
            gpu.loadModule("kernels", TestKernels.ptx("kernels"));
            KernelHandle storeTo = gpu.kernel("kernels", "store_to");
            p = gpu.alloc(1024);
            gpu.launch(storeTo, LaunchConfig.of(1, 1), Stream.DEFAULT, args.i64(0x10L).i32(1));
            GpuException first = catchThrowableOfType(GpuException.class, () -> gpu.synchronize());
            assertThat(first).as("synchronize after the illegal store").isNotNull();
            assertThat(first.error().isSticky()).as(first.getMessage()).isTrue();
            assertThat(gpu.fault()).isPresent();
            CudaError sticky = gpu.fault().get().error();
            assertThat(sticky).isEqualTo(first.error());

            for (Runnable call : new Runnable[] {
                    () -> gpu.alloc(64),
                    () -> gpu.copyH2D(new int[4], p),
                    () -> gpu.synchronize(Stream.DEFAULT),
                    () -> gpu.createStream(),
                    () -> gpu.launch(storeTo, LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().i64(0x10L).i32(1))}) {
                StickyFaultException e = catchThrowableOfType(StickyFaultException.class, call::run);
                assertThat(e).isNotNull();
                assertThat(e.error()).isEqualTo(sticky);
                assertThat(e.getMessage()).contains(sticky.cudaName());
            }
        } finally {
            gpu.close(); // never throws, even now
        }
        assertThat(gpu.isClosed()).isTrue();
    }
}
