// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.Test;

/** The opt-in initcheck: which accesses write the shadow map, which reads it, and what a report names. */
class SimInitCheckTest {

    private static final String MODULE = "initcheck_test";

    private static GpuBuilder sim(boolean initCheck) {
        SimTwins twins = new SimTwins()
                // copy(const int* in, int* out, int n)
                .register(MODULE, "copy", l -> {
                    IntView in = l.ints(0);
                    IntView out = l.ints(1);
                    int n = l.i32(2);
                    l.forEachThread(t -> {
                        if (t.globalX() < n) {
                            out.set(t.globalX(), in.get(t.globalX()));
                        }
                    });
                });
        twins.register(MODULE, "count", l -> {
            // count(int* counter): one atomicAdd per thread; the counter must have been written first.
            IntView c = l.ints(0);
            l.forEachThread(t -> c.atomicAdd(0, 1));
        });
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, twins).backendOption(SimInitCheck.OPT_INITCHECK, Boolean.toString(initCheck));
    }

    private static List<UninitializedRead> reads(Gpu gpu) {
        return gpu.unwrap(SimInitCheck.class).orElseThrow().uninitializedReads();
    }

    private static String here() {
        StackTraceElement e = new Throwable().getStackTrace()[1];
        return e.getFileName() + ":" + e.getLineNumber();
    }

    @Test
    void offByDefaultAndReportsNothing() {
        try (Gpu gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH).open()) {
            DevicePtr p = gpu.alloc(64);
            gpu.copyD2H(p, new byte[64]);
            SimInitCheck ic = gpu.unwrap(SimInitCheck.class).orElseThrow();
            assertThat(ic.initCheckEnabled()).isFalse();
            assertThat(ic.uninitializedReads()).isEmpty();
            gpu.free(p);
        }
    }

    @Test
    void aCopyToTheHostOfBytesNeverWrittenNamesTheSiteAndTheFirstOffset() {
        try (Gpu gpu = sim(true).open()) {
            String site = here(); DevicePtr p = gpu.alloc(64);
            gpu.copyH2D(new byte[40], p);
            gpu.copyD2H(p, new byte[64]);
            assertThat(reads(gpu)).singleElement().satisfies(r -> {
                assertThat(r.access()).startsWith("cuMemcpyDtoH_v2(src=" + p);
                assertThat(r.allocationBase()).isEqualTo(p.address());
                assertThat(r.allocationSite()).isEqualTo(site);
                assertThat(r.offset()).isEqualTo(40);
                assertThat(r.bytes()).isEqualTo(24);
                assertThat(r.count()).isEqualTo(1);
            });
            gpu.free(p);
            // What was found stays after the free.
            assertThat(reads(gpu)).hasSize(1);
        }
    }

    @Test
    void memsetsAndKernelWritesCountAsWrites() {
        try (Gpu gpu = sim(true).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            Stream s = gpu.createStream();
            DevicePtr a = gpu.alloc(256);
            DevicePtr b = gpu.alloc(256);
            gpu.memsetAsync(a, 0, 256, s);
            gpu.launch(gpu.kernel(MODULE, "copy"), LaunchConfig.forElements(64, 64), s, args.ptr(a).ptr(b).i32(64));
            int[] out = new int[64];
            gpu.synchronize(s);
            gpu.copyD2H(b, out);
            assertThat(out).containsOnly(0);
            assertThat(reads(gpu)).isEmpty();
            gpu.free(a);
            gpu.free(b);
            gpu.destroyStream(s);
        }
    }

    @Test
    void aKernelReadOfUnwrittenElementsIsOneReportPerKernelArgumentAndAllocation() {
        try (Gpu gpu = sim(true).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr a = gpu.alloc(256);
            DevicePtr b = gpu.alloc(256);
            gpu.copyH2D(new int[60], a);
            gpu.launch(gpu.kernel(MODULE, "copy"), LaunchConfig.forElements(64, 64), Stream.DEFAULT, args.ptr(a).ptr(b).i32(64));
            gpu.synchronize();
            assertThat(reads(gpu)).singleElement().satisfies(r -> {
                assertThat(r.access()).startsWith("kernel " + MODULE + "::copy").endsWith("through argument 0");
                assertThat(r.offset()).isEqualTo(240);
                assertThat(r.bytes()).isEqualTo(4);
                assertThat(r.count()).isEqualTo(4);
            });
            gpu.free(a);
            gpu.free(b);
        }
    }

    @Test
    void anAtomicIsAReadAndAWrite() {
        try (Gpu gpu = sim(true).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr unset = gpu.alloc(4);
            DevicePtr zeroed = gpu.alloc(4);
            gpu.memset(zeroed, 0, 4);
            gpu.launch(gpu.kernel(MODULE, "count"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(unset));
            gpu.launch(gpu.kernel(MODULE, "count"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(zeroed));
            int[] n = new int[1];
            gpu.copyD2H(zeroed, n);
            assertThat(n[0]).isEqualTo(32);
            // The first atomicAdd read garbage and wrote the counter, so only it is reported.
            assertThat(reads(gpu)).singleElement().satisfies(r -> {
                assertThat(r.allocationBase()).isEqualTo(unset.address());
                assertThat(r.count()).isEqualTo(1);
            });
            gpu.free(unset);
            gpu.free(zeroed);
        }
    }

    @Test
    void aPitchedCopyChecksEachRowItReads() {
        try (Gpu gpu = sim(true).open()) {
            Stream s = gpu.createStream();
            DevicePtr src = gpu.alloc(128);
            DevicePtr dst = gpu.alloc(128);
            gpu.copyH2D(new byte[16], src);                 // row 0 of a 64-byte pitch
            gpu.copyD2D2DAsync(src, 64, dst, 64, 16, 2, s); // rows 0 and 1
            gpu.synchronize(s);
            assertThat(reads(gpu)).singleElement().satisfies(r -> {
                assertThat(r.access()).startsWith("cuMemcpy2DAsync_v2(");
                assertThat(r.allocationBase()).isEqualTo(src.address());
                assertThat(r.offset()).isEqualTo(64);
                assertThat(r.bytes()).isEqualTo(16);
            });
            // Both destination rows count as written: the garbage is reported where it entered.
            byte[] back = new byte[16];
            gpu.copyD2H(dst.plus(64), back);
            assertThat(reads(gpu)).hasSize(1);
            gpu.free(src);
            gpu.free(dst);
            gpu.destroyStream(s);
        }
    }

    @Test
    void managedMemoryIsNotTrackedBecauseTheHostWritesItDirectly() {
        try (Gpu gpu = sim(true).open()) {
            DevicePtr m = gpu.allocManaged(32);
            MemorySegment.ofAddress(m.address()).reinterpret(32).fill((byte) 1);
            gpu.copyD2H(m, new byte[32]);
            assertThat(reads(gpu)).isEmpty();
            gpu.free(m);
        }
    }

    @Test
    void theOptionIsABoolean() {
        assertThatThrownBy(() -> Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimInitCheck.OPT_INITCHECK, "maybe").open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sim.initcheck").hasMessageContaining("metrale.sim.initcheck")
                .hasMessageContaining("METRALE_SIM_INITCHECK").hasMessageContaining("'maybe' is not a boolean");
    }

    @Test
    void aCopyIntoPinnedHostMemoryChecksOnlyItsDeviceSide() {
        try (Gpu gpu = sim(true).open()) {
            DevicePtr p = gpu.alloc(16);
            gpu.memset(p, 7, 16);
            MemorySegment host = gpu.allocHostPinned(16);
            gpu.copyD2H(p, host);
            assertThat(reads(gpu)).isEmpty();
            gpu.freeHostPinned(host);
            gpu.free(p);
        }
    }

    /** Memory from the async pool and foreign memory name the application's line, not a line of the driver's parts. */
    @Test
    void poolAndForeignAllocationsNameTheCallersSite() {
        try (SimDevice dev = new SimDevice(new DriverConfig(Map.of(SimOptions.PROCESS, SimOptions.PROCESS_FRESH,
                SimInitCheck.OPT_INITCHECK, "true")));
             Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(64);
            String poolSite = here(); long pooled = dev.memAllocAsync(64, 0);
            String foreignSite = here(); long foreign = dev.simControls().allocForeign(64);
            dev.memcpyDtoH(host, pooled, 64);
            dev.memcpyDtoH(host, foreign, 64);
            List<UninitializedRead> reads = dev.controls(SimInitCheck.class).orElseThrow().uninitializedReads();
            assertThat(reads).extracting(UninitializedRead::allocationSite).containsExactly(poolSite, foreignSite);
            dev.memFreeAsync(pooled, 0);
            dev.simControls().freeForeign(foreign);
        }
    }
}
