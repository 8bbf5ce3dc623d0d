// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimInitCheck;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import metrale.gpu.sim.UninitializedRead;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator's detectors on kernels run from their own PTX, as a user meets them: CUDA C
 * ({@code ptx/checks.cu}) compiled to PTX with nvcc and loaded with no twin, launched on each kind
 * of stream (the default stream, a created one, a non-blocking one) with each allocator
 * ({@code driver}, {@code caching}). Each bug is reported with the error CUDA gives it and a
 * message naming what a user needs to find it; the correct variant of a kernel passes.
 * Every runtime has a simulated process of its own, as the faults are sticky.
 */
class PtxDetectorsTest {

    private static final String MODULE = "checks";

    /** How a test gets its stream. */
    enum StreamKind {
        DEFAULT(Gpu::defaultStream), CREATED(Gpu::createStream), NON_BLOCKING(g -> g.createStream(true));

        final Function<Gpu, metrale.gpu.Stream> make;

        StreamKind(Function<Gpu, metrale.gpu.Stream> make) {
            this.make = make;
        }
    }

    static Stream<Arguments> streamsAndAllocators() {
        List<Arguments> a = new ArrayList<>();
        for (StreamKind s : StreamKind.values()) {
            for (String alloc : new String[] {"driver", "caching"}) {
                a.add(Arguments.of(s, alloc));
            }
        }
        return a.stream();
    }

    static byte[] resource(String name) {
        try (InputStream in = PtxDetectorsTest.class.getResourceAsStream("/ptx/" + name)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static GpuBuilder builder(String allocator) {
        return Gpu.builder().backend("sim").allocator(allocator).allocSites(true)
                .backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
    }

    /** A runtime with twins off, {@code checks.ptx} loaded. */
    private static Gpu open(String allocator) {
        Gpu gpu = builder(allocator).backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).open();
        gpu.loadModule(MODULE, resource("checks.ptx"));
        return gpu;
    }

    private static GpuException syncFails(Gpu gpu, metrale.gpu.Stream s) {
        GpuException[] caught = new GpuException[1];
        assertThatThrownBy(() -> gpu.synchronize(s)).isInstanceOfSatisfying(GpuException.class, e -> caught[0] = e);
        return caught[0];
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void anOutOfBoundsStoreIsAnIllegalAddressNamingKernelThreadLineAndAddress(StreamKind sk, String allocator) {
        try (Gpu gpu = open(allocator); KernelArgs args = new KernelArgs()) {
            metrale.gpu.Stream s = sk.make.apply(gpu);
            int n = 100;
            DevicePtr p = gpu.alloc(4L * n);
            // The caching pool's block is exactly the request on the simulator: one element past it
            // faults as past a cuMemAlloc, though the pool's chunk holds the bytes.
            gpu.launch(gpu.kernel(MODULE, "store_past"), LaunchConfig.of(1, 128), s, args.clear().ptr(p).i32(n).i32(28));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(e.getMessage()).contains("kernel checks::store_past", "thread (100,0,0) of block (0,0,0)",
                    "PTX line 44 `st.global.f32", "a store to 0x" + Long.toHexString(p.address() + 400),
                    "nearest allocation to 0x" + Long.toHexString(p.address() + 400),
                    "0x" + Long.toHexString(p.address()) + " (400 B", "allocated at PtxDetectorsTest.java:");
        }
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void anOutOfBoundsLoadIsAnIllegalAddressNamingKernelThreadLineAndAddress(StreamKind sk, String allocator) {
        try (Gpu gpu = open(allocator); KernelArgs args = new KernelArgs()) {
            metrale.gpu.Stream s = sk.make.apply(gpu);
            int n = 64;
            DevicePtr in = gpu.alloc(4L * n);
            DevicePtr out = gpu.alloc(4L * 2 * n);
            gpu.memset(in, 0, 4L * n);
            gpu.launch(gpu.kernel(MODULE, "load_past"), LaunchConfig.of(2, 64), s, args.clear().ptr(in).ptr(out).i32(n).i32(n));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(e.getMessage()).contains("kernel checks::load_past", "thread (0,0,0) of block (1,0,0)",
                    "PTX line 137 `ld.global.f32", "a load from 0x" + Long.toHexString(in.address() + 4L * n),
                    "0x" + Long.toHexString(in.address()) + " (256 B", "allocated at PtxDetectorsTest.java:");
        }
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void theInitcheckReportsAKernelReadingMemoryNeverWrittenWithTheAllocationsSite(StreamKind sk, String allocator) {
        Gpu gpu = builder(allocator).backendOption(SimOptions.TWINS, SimTwinMode.OFF.option())
                .backendOption(SimInitCheck.OPT_INITCHECK, "true").open();
        try (gpu; KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, resource("checks.ptx"));
            metrale.gpu.Stream s = sk.make.apply(gpu);
            int n = 256;
            DevicePtr written = gpu.alloc(4L * n);
            DevicePtr never = gpu.alloc(4L * n);
            DevicePtr out = gpu.alloc(4L * n);
            gpu.copyH2D(new int[n], written);
            gpu.launch(gpu.kernel(MODULE, "twice"), LaunchConfig.forElements(n, 128), s, args.clear().ptr(written).ptr(out).i32(n));
            gpu.synchronize(s);
            SimInitCheck check = gpu.unwrap(SimInitCheck.class).orElseThrow();
            assertThat(check.initCheckEnabled()).isTrue();
            assertThat(check.uninitializedReads()).as("a kernel reading written memory").isEmpty();
            gpu.launch(gpu.kernel(MODULE, "twice"), LaunchConfig.forElements(n, 128), s, args.clear().ptr(never).ptr(out).i32(n));
            gpu.synchronize(s);
            List<UninitializedRead> reads = check.uninitializedReads();
            assertThat(reads).hasSize(1);
            UninitializedRead r = reads.get(0);
            assertThat(r.access()).contains("kernel checks::twice", "PTX line 171 `ld.global.u32");
            assertThat(r.allocationSite()).contains("PtxDetectorsTest.java:");
            // The allocation is the buffer itself: a cuMemAlloc, or the caching pool's block of exactly its bytes.
            assertThat(r.allocationBase()).isEqualTo(never.address());
            assertThat(r.offset()).isZero();
            assertThat(r.allocationBytes()).isEqualTo(4L * n);
            assertThat(r.count()).as("one record per access and allocation, counting every read").isEqualTo(n);
        }
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void aSharedMemoryRaceNamesBothThreadsAndLinesAndTheSyncedKernelPasses(StreamKind sk, String allocator) {
        try (Gpu gpu = open(allocator); KernelArgs args = new KernelArgs()) {
            metrale.gpu.Stream s = sk.make.apply(gpu);
            int threads = 64;
            DevicePtr out = gpu.alloc(4L * 2 * threads);
            gpu.launch(gpu.kernel(MODULE, "neighbour_synced"), LaunchConfig.of(2, threads), s, args.clear().ptr(out));
            gpu.synchronize(s);
            int[] got = new int[2 * threads];
            gpu.copyD2H(out, got);
            for (int i = 0; i < got.length; i++) {
                assertThat(got[i]).as("out[%d]", i).isEqualTo((i % threads + 1) % threads * 3);
            }
            gpu.launch(gpu.kernel(MODULE, "neighbour_racy"), LaunchConfig.of(2, threads), s, args.clear().ptr(out));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED);
            assertThat(e.getMessage()).contains("shared-memory race", "block (0,0,0)",
                    "shared-memory race on byte 4 of", "thread (0,0,0) of block (0,0,0) read it at PTX line 204 `ld.shared.u32",
                    "thread (1,0,0) of block (0,0,0) writes it at PTX line 198 `st.shared.u32", "no bar.sync between");
        }
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void aBarrierPartOfTheBlockReturnedBeforeIsReported(StreamKind sk, String allocator) {
        try (Gpu gpu = open(allocator); KernelArgs args = new KernelArgs()) {
            metrale.gpu.Stream s = sk.make.apply(gpu);
            DevicePtr out = gpu.alloc(4L * 64);
            gpu.launch(gpu.kernel(MODULE, "early_return"), LaunchConfig.of(1, 64), s, args.clear().ptr(out));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_INSTRUCTION);
            assertThat(e.getMessage()).contains("kernel checks::early_return", "PTX line 267 `bar.sync",
                    "bar.sync reached by 32 of 64 threads", "32 exited without reaching it", "thread (32,0,0) of block (0,0,0)");
        }
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void aMisalignedGlobalStoreIsAMisalignedAddress(StreamKind sk, String allocator) {
        try (Gpu gpu = open(allocator); KernelArgs args = new KernelArgs()) {
            metrale.gpu.Stream s = sk.make.apply(gpu);
            DevicePtr p = gpu.alloc(64);
            gpu.launch(gpu.kernel(MODULE, "misaligned"), LaunchConfig.of(1, 32), s, args.clear().ptr(p));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.MISALIGNED_ADDRESS);
            assertThat(e.getMessage()).contains("kernel checks::misaligned", "thread (0,0,0) of block (0,0,0)",
                    "PTX line 293 `st.global.u32", "0x" + Long.toHexString(p.address() + 1), "not aligned");
        }
    }

    /** Registers process-wide twins of the two kernels under {@code module}: use_const writes 2, use_tex -1. */
    private static void registerUnsupportedTwins(String module) {
        metrale.gpu.sim.SimKernels.register(module, "use_const", l -> {
            FloatView out = l.floats(0);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    out.set(0, 2f);
                }
            });
        });
        metrale.gpu.sim.SimKernels.register(module, "use_tex", l -> {
            FloatView out = l.floats(0);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    out.set(0, -1f);
                }
            });
        });
    }

    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void anInstructionTheEngineCannotRunIsNotSupportedAtLookupAndATwinStillRunsIt(StreamKind sk, String allocator) {
        try (Gpu gpu = builder(allocator).backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).open()) {
            gpu.loadModule("unsupported", resource("unsupported.ptx"));
            assertThatThrownBy(() -> gpu.kernel("unsupported", "use_const")).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.NOT_SUPPORTED);
                assertThat(e.getMessage()).contains("use_const", "sim.twins=off", "the module variable 'coef'", "line 8)",
                        "PTX line 19", "ld.const.f32");
            });
            assertThatThrownBy(() -> gpu.kernel("unsupported", "use_tex")).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.NOT_SUPPORTED);
                assertThat(e.getMessage()).contains("use_tex", "the instruction 'tex'", "PTX line 37", "tex.1d.v4.f32.s32");
            });
        }
        // Twins registered process-wide with the mode given as a string, so no sim.twins system property overrides it.
        registerUnsupportedTwins("unsupported_twinned");
        try (Gpu gpu = builder(allocator).backendOption(SimOptions.TWINS, SimTwinMode.PREFER.option()).open();
             KernelArgs args = new KernelArgs()) {
            gpu.loadModule("unsupported_twinned", resource("unsupported.ptx"));
            metrale.gpu.Stream s = sk.make.apply(gpu);
            DevicePtr out = gpu.alloc(8);
            gpu.launch(gpu.kernel("unsupported_twinned", "use_const"), LaunchConfig.of(1, 1), s, args.clear().ptr(out));
            gpu.synchronize(s);
            float[] got = new float[2];
            gpu.copyD2H(out, got);
            assertThat(got[0]).isEqualTo(2f);
            gpu.launch(gpu.kernel("unsupported_twinned", "use_tex"), LaunchConfig.of(1, 1), s, args.clear().ptr(out).ptr(out));
            gpu.synchronize(s);
            gpu.copyD2H(out, got);
            assertThat(got[0]).isEqualTo(-1f);
        } finally {
            metrale.gpu.sim.SimKernels.unregister("unsupported_twinned", "use_const");
            metrale.gpu.sim.SimKernels.unregister("unsupported_twinned", "use_tex");
        }
    }

    /**
     * {@code sim.twins=verify} with process-wide twins (a per-runtime {@link SimTwins} table and the
     * string mode share the option key {@code sim.twins}, so one runtime cannot be given both).
     */
    @ParameterizedTest
    @MethodSource("streamsAndAllocators")
    void verifyFailsADriftedTwinNamingKernelArgumentAndByteAndPassesACorrectOne(StreamKind sk, String allocator) {
        metrale.gpu.sim.SimKernels.register("checks_drifted", "scale", l -> {
            FloatView x = l.floats(0);
            float a = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    x.set(i, x.get(i) * a + (i == 7 ? 1f : 0f));
                }
            });
        });
        metrale.gpu.sim.SimKernels.register("checks_true", "scale", l -> {
            FloatView x = l.floats(0);
            float a = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    x.set(i, x.get(i) * a);
                }
            });
        });
        try (Gpu gpu = builder(allocator).backendOption(SimOptions.TWINS, SimTwinMode.VERIFY.option()).open();
             KernelArgs args = new KernelArgs()) {
            gpu.loadModule("checks_true", resource("checks.ptx"));
            gpu.loadModule("checks_drifted", resource("checks.ptx"));
            metrale.gpu.Stream s = sk.make.apply(gpu);
            int n = 100;
            float[] x = new float[n];
            for (int i = 0; i < n; i++) {
                x[i] = i;
            }
            DevicePtr p = gpu.alloc(4L * n);
            gpu.copyH2D(x, p);
            gpu.launch(gpu.kernel("checks_true", "scale"), LaunchConfig.forElements(n, 32), s, args.clear().ptr(p).f32(2f).i32(n));
            gpu.synchronize(s);
            float[] got = new float[n];
            gpu.copyD2H(p, got);
            for (int i = 0; i < n; i++) {
                assertThat(got[i]).isEqualTo(2f * i);
            }
            gpu.launch(gpu.kernel("checks_drifted", "scale"), LaunchConfig.forElements(n, 32), s, args.clear().ptr(p).f32(0.5f).i32(n));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED);
            // Element 7 is 14 * 0.5 = 7 (0x40e00000) by the PTX and 8 (0x41000000) by the twin: bytes 28, 29 agree.
            assertThat(e.getMessage()).contains("sim.twins=verify", "checks_drifted::scale", "argument 0", "byte 30",
                    "0x00 after the twin and 0xe0 after the PTX");
        } finally {
            metrale.gpu.sim.SimKernels.unregister("checks_drifted", "scale");
            metrale.gpu.sim.SimKernels.unregister("checks_true", "scale");
        }
    }
}
