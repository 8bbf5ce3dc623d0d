// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.Function;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A pool block freed while work on it is still pending, whose address the pool hands out again
 * at once, is released exactly: the block being freed, not an older block still releasing at the
 * same base. A user's byte kernel ({@code pool_reuse.cu}, built by nvcc with its default flags,
 * run from its PTX) touching the reused address after the free faults naming the block and the
 * line that allocated it. The quarantine is off here, as on CUDA by default, so that the pool
 * reuses addresses at once.
 */
class PoolReuseTest {

    private static final String MODULE = "pool_reuse";

    /** How a test gets its stream. */
    enum StreamKind {
        DEFAULT(Gpu::defaultStream), CREATED(Gpu::createStream), NON_BLOCKING(g -> g.createStream(true));

        final Function<Gpu, Stream> make;

        StreamKind(Function<Gpu, Stream> make) {
            this.make = make;
        }
    }

    static byte[] ptx() {
        try (InputStream in = PoolReuseTest.class.getResourceAsStream("/ptx/pool_reuse.ptx")) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Gpu open() {
        Gpu gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option())
                .leakDetection(LeakDetection.ALL).quarantineBytes(0).open();
        gpu.loadModule(MODULE, ptx());
        return gpu;
    }

    private static void touch(Gpu gpu, Stream s, KernelArgs args, DevicePtr p, int n) {
        gpu.launch(gpu.kernel(MODULE, "touch"), LaunchConfig.forElements(n, 256), s, args.clear().ptr(p).i32(n));
    }

    private static GpuException syncFails(Gpu gpu, Stream s) {
        GpuException[] caught = new GpuException[1];
        assertThatThrownBy(() -> gpu.synchronize(s)).isInstanceOfSatisfying(GpuException.class, e -> caught[0] = e);
        return caught[0];
    }

    @ParameterizedTest
    @EnumSource(StreamKind.class)
    void aKernelOnAReusedAddressFreedAgainFaultsOnceTheReleasesHaveRun(StreamKind sk) {
        try (Gpu gpu = open(); KernelArgs args = new KernelArgs()) {
            Stream s = sk.make.apply(gpu);
            DevicePtr x = gpu.alloc(8192, s);
            touch(gpu, s, args, x, 8192);           // still pending when x is freed
            gpu.free(x, s);
            DevicePtr y = gpu.alloc(1024, s); String allocSite = RuntimeTestSupport.here();
            assertThat(y).as("the pool hands x's address out again on the same stream").isEqualTo(x);
            gpu.free(y, s); String freeSite = RuntimeTestSupport.here();
            gpu.synchronize();
            touch(gpu, s, args, y, 1);
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(e.getMessage()).contains("pool_reuse::touch", "0x" + Long.toHexString(y.address()),
                    "caching pool holds but has not handed out", "(1024 B, #", "allocated at " + allocSite,
                    "freed at " + freeSite);
        }
    }

    @ParameterizedTest
    @EnumSource(StreamKind.class)
    void aKernelPastAReusedBlockFaultsNamingTheBlockAndItsSite(StreamKind sk) {
        try (Gpu gpu = open(); KernelArgs args = new KernelArgs()) {
            Stream s = sk.make.apply(gpu);
            DevicePtr x = gpu.alloc(8192, s);
            touch(gpu, s, args, x, 8192);
            gpu.free(x, s);
            DevicePtr y = gpu.alloc(1024, s);
            gpu.free(y, s);
            gpu.synchronize();
            DevicePtr z = gpu.alloc(300, s); String zSite = RuntimeTestSupport.here();
            assertThat(z).isEqualTo(x);
            touch(gpu, s, args, z, 1024);           // 1024 bytes through a 300-byte block
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(e.getMessage()).contains("pool_reuse::touch", "0x" + Long.toHexString(z.address()) + " (300 B",
                    zSite);
        }
    }
}
