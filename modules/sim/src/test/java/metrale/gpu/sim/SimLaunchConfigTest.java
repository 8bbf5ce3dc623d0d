package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import org.junit.jupiter.api.Test;

/** cuLaunchKernel's configuration checks and cuModule* rules. */
class SimLaunchConfigTest {

    private static final String PTX = """
            .version 8.0
            .target sm_90
            .address_size 64
            .visible .entry fill(
                .param .u64 p, .param .u32 v, .param .u32 n
            )
            { ret; }
            """;

    private static void rejects(Fixture fx, LaunchConfig cfg, String why) {
        try (KernelArgs args = new KernelArgs()) {
            long p = fx.dev.memAlloc(4);
            args.ptr(p).i32(1).i32(1);
            fails(CudaError.INVALID_VALUE, () -> fx.dev.launchKernel(fx.f("fill"), cfg, 0, args))
                    .hasMessageContaining("t::fill").hasMessageContaining(why);
        }
    }

    @Test
    void invalidConfigurationsAreInvalidValueAndNotSticky() {
        try (Fixture fx = new Fixture()) {
            rejects(fx, LaunchConfig.of(1, 1025), "at most 1024");
            rejects(fx, LaunchConfig.of(Dim3.of(1), Dim3.of(1024, 2)), "2048 threads");
            rejects(fx, LaunchConfig.of(Dim3.of(1), Dim3.of(1, 1, 65)), "blockDim.z=65");
            rejects(fx, LaunchConfig.of(0, 32), "below 1");
            rejects(fx, LaunchConfig.of(Dim3.of(1), Dim3.of(0, 1, 1)), "below 1");
            rejects(fx, LaunchConfig.of(Dim3.of(1, 65536), Dim3.of(32)), "at most 65535");
            rejects(fx, LaunchConfig.of(Dim3.of(1, 1, 65536), Dim3.of(32)), "at most 65535");
            rejects(fx, LaunchConfig.of(Integer.MIN_VALUE, 32), "2^31");
            rejects(fx, LaunchConfig.of(1, 32).withSharedMem(-1), "negative");
            fx.dev.ctxSynchronize();
            assertThat(fx.dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void dynamicSharedMemoryNeedsAnOptInAbove48KiB() {
        try (Fixture fx = new Fixture(); KernelArgs args = new KernelArgs()) {
            long p = fx.dev.memAlloc(4);
            args.ptr(p).i32(1).i32(1);
            long f = fx.f("fill");
            fx.dev.launchKernel(f, LaunchConfig.of(1, 32).withSharedMem(49152), 0, args);
            rejects(fx, LaunchConfig.of(1, 32).withSharedMem(49153), "cuFuncSetAttribute");
            fx.dev.funcSetMaxDynamicSharedMemory(f, 100000);
            fx.dev.launchKernel(f, LaunchConfig.of(1, 32).withSharedMem(100000), 0, args);
            rejects(fx, LaunchConfig.of(1, 32).withSharedMem(100001), "100000");
            fails(CudaError.INVALID_VALUE, () -> fx.dev.funcSetMaxDynamicSharedMemory(f, SimDevice.MAX_SHARED_OPTIN + 1));
            fx.dev.funcSetMaxDynamicSharedMemory(f, SimDevice.MAX_SHARED_OPTIN);
            fx.dev.ctxSynchronize();
        }
    }

    @Test
    void functionHandleAndArgumentChecks() {
        try (Fixture fx = new Fixture(); KernelArgs args = new KernelArgs()) {
            fails(CudaError.INVALID_HANDLE, () -> fx.dev.launchKernel(0, LaunchConfig.of(1, 1), 0, args)).hasMessageContaining("NULL");
            fails(CudaError.INVALID_HANDLE, () -> fx.dev.launchKernel(0x77, LaunchConfig.of(1, 1), 0, args));
            fails(CudaError.INVALID_HANDLE, () -> fx.dev.funcSetMaxDynamicSharedMemory(0, 1));
            fails(CudaError.INVALID_VALUE, () -> fx.dev.launchKernel(fx.f("fill"), LaunchConfig.of(1, 1), 0, null));
            fails(CudaError.INVALID_HANDLE, () -> fx.dev.launchKernel(fx.f("fill"), LaunchConfig.of(1, 1), 0x999, args));
        }
    }

    @Test
    void moduleImageRules() {
        try (SimDevice dev = new SimDevice()) {
            fails(CudaError.INVALID_IMAGE, () -> dev.moduleLoadData("m", new byte[0]));
            fails(CudaError.INVALID_IMAGE, () -> dev.moduleLoadData("m", new byte[] {1, 2, 3, (byte) 0xff}));
            fails(CudaError.INVALID_IMAGE, () -> dev.moduleLoadData("m", "hello world".getBytes(StandardCharsets.US_ASCII)));
            fails(CudaError.INVALID_PTX, () -> dev.moduleLoadData("m", ".visible .entry k() { ret; }".getBytes(StandardCharsets.US_ASCII)));
            fails(CudaError.INVALID_IMAGE, () -> dev.moduleLoadData("m", SimKernels.image("other")))
                    .hasMessageContaining("another module");
            assertThat(dev.moduleLoadData("m", new byte[] {0x7f, 'E', 'L', 'F', 2, 1})).isNotZero();
            assertThat(dev.moduleLoadData("m", new byte[] {0x50, (byte) 0xED, 0x55, (byte) 0xBA, 1, 0})).isNotZero();
            byte[] nulTerminated = (PTX + "\0").getBytes(StandardCharsets.US_ASCII);
            assertThat(dev.moduleLoadData("t", nulTerminated)).isNotZero();
        }
    }

    @Test
    void functionLookupRules() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            fails(CudaError.NOT_FOUND, () -> dev.moduleGetFunction(fx.module, "nope"))
                    .hasMessageContaining("SimKernels.register(\"t\", \"nope\"");
            assertThat(fx.f("fill")).isNotZero().isEqualTo(fx.f("fill"));
            // PTX lists its entries: a twin without a matching .entry is NOT_FOUND, so twins cannot drift.
            long ptx = dev.moduleLoadData("t", PTX.getBytes(StandardCharsets.US_ASCII));
            assertThat(dev.moduleGetFunction(ptx, "fill")).isNotZero();
            fails(CudaError.NOT_FOUND, () -> dev.moduleGetFunction(ptx, "add")).hasMessageContaining(".entry add");
            dev.moduleUnload(ptx);
            fails(CudaError.INVALID_HANDLE, () -> dev.moduleGetFunction(ptx, "fill"));
            fails(CudaError.INVALID_HANDLE, () -> dev.moduleUnload(ptx));
            long f = fx.f("add");
            dev.moduleUnload(fx.module);
            try (KernelArgs args = new KernelArgs()) {
                fails(CudaError.INVALID_HANDLE, () -> dev.launchKernel(f, LaunchConfig.of(1, 1), 0, args)).hasMessageContaining("unloaded");
            }
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void deviceInfoAndCompileToPtx() {
        try (SimDevice dev = new SimDevice()) {
            assertThat(dev.name()).isEqualTo("sim");
            assertThat(dev.deviceInfo().name()).isEqualTo("metrale simulator");
            assertThat(dev.deviceInfo().smCount()).isEqualTo(132);
            assertThat(dev.deviceInfo().computeMajor()).isEqualTo(9);
            assertThat(dev.deviceInfo().computeMinor()).isZero();
            assertThat(dev.deviceInfo().maxSharedPerBlockOptin()).isEqualTo(232448);
            assertThat(dev.deviceInfo().totalMemory()).isEqualTo(4L << 30);
            assertThat(dev.supportsCaptureQuery()).isTrue();
            fails(CudaError.NOT_SUPPORTED, () -> dev.compileToPtx("k", "__global__ void k() {}"));
        }
    }

    @Test
    void theProviderIsFoundAndAlwaysAvailable() {
        var providers = java.util.ServiceLoader.load(metrale.gpu.spi.BackendProvider.class).stream()
                .map(java.util.ServiceLoader.Provider::get).filter(p -> p.name().equals("sim")).toList();
        assertThat(providers).hasSize(1);
        assertThat(providers.getFirst().priority()).isZero();
        assertThat(providers.getFirst().availability().available()).isTrue();
        try (var driver = providers.getFirst().open(new metrale.gpu.spi.DriverConfig(java.util.Map.of("sim.sms", "8")))) {
            assertThat(driver.deviceInfo().smCount()).isEqualTo(8);
        }
    }
}
