// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import java.util.function.Consumer;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The fault latch: a sticky fault makes every later call fail fast, naming the original; close still completes. */
class FaultLatchTest {

    private static final String MODULE = "rt_fault";

    @BeforeAll
    static void kernels() {
        // Stores one element past the end of buffer 0: an illegal address.
        SimKernels.register(MODULE, "oob", l -> {
            FloatView v = l.floats(0);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    v.set(v.length(), 1f);
                }
            });
        });
        // Stores float element i (an i64, possibly negative or far out) of buffer 0.
        SimKernels.register(MODULE, "poke", l -> {
            FloatView v = l.floats(0);
            long i = l.i64(1);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    v.set(i, 1f);
                }
            });
        });
        SimKernels.register(MODULE, "fill", l -> {
            FloatView v = l.floats(0);
            float x = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                if (t.globalX() < n) {
                    v.set(t.globalX(), x);
                }
            });
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "oob");
        SimKernels.unregister(MODULE, "poke");
        SimKernels.unregister(MODULE, "fill");
    }

    /** A close path never throws: after a sticky fault, a buffer's close records the refusal and logs it. */
    @Test
    void deviceBufferCloseAfterAStickyFaultRecordsInsteadOfThrowing() {
        try (Gpu gpu = sim().open(); KernelArgs args = new KernelArgs();
             RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DeviceBuffer b = gpu.allocBuffer(256);
            gpu.launch(gpu.kernel(MODULE, "oob"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(b.ptr()));
            assertThatThrownBy(gpu::synchronize).isInstanceOf(GpuException.class);
            b.close();
            assertThat(b.isClosed()).isTrue();
            assertThat(b.closeFailure()).containsInstanceOf(StickyFaultException.class);
            assertThat(log.warnings()).anySatisfy(m -> assertThat(m).contains("DeviceBuffer.close could not free", b.toString()
                    .substring("DeviceBuffer[".length(), b.toString().indexOf(','))));
            b.close();
        }
    }

    /** Closing a buffer after its runtime is not an error: the runtime's close freed it. */
    @Test
    void deviceBufferCloseAfterTheRuntimeClosedDoesNotThrow() {
        Gpu gpu = sim().open();
        DeviceBuffer b = gpu.allocBuffer(64);
        gpu.close();
        b.close();
        assertThat(b.closeFailure()).containsInstanceOf(IllegalStateException.class);
    }

    @Test
    void outOfBoundsStoreLatchesAndEveryLaterCallRefuses() {
        Gpu gpu = sim().open();
        try (KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle oob = gpu.kernel(MODULE, "oob");
            DevicePtr p = gpu.alloc(256);
            gpu.launch(oob, LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p));
            GpuException original = catchThrowableOfType(GpuException.class, () -> gpu.synchronize(Stream.DEFAULT)); String site = here();
            assertThat(original).isNotNull().isNotInstanceOf(StickyFaultException.class);
            assertThat(original.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(original.getMessage()).contains("surfaced during synchronize", site,
                    "nearest allocation to", p + " (256 B", "0 byte(s) past its end");
            assertThat(java.util.regex.Pattern.compile("#(\\d+)").matcher(original.getMessage()).results()
                    .map(m -> m.group(1)).distinct().toList())
                    .as("one buffer, one number: " + original.getMessage()).hasSizeLessThanOrEqualTo(1);

            assertThat(gpu.fault()).hasValueSatisfying(f -> {
                assertThat(f.original()).isSameAs(original);
                assertThat(f.faultSite()).isEqualTo(site);
                assertThat(f.faultCall()).startsWith("synchronize");
            });
            List<Consumer<Gpu>> calls = List.of(
                    g -> g.alloc(64),
                    g -> g.free(p),
                    g -> g.launch(oob, LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().ptr(p)),
                    g -> g.synchronize(),
                    g -> g.copyH2D(new float[4], p),
                    g -> g.kernel(MODULE, "fill"),
                    g -> g.liveBytes(),
                    g -> g.backendName(),
                    g -> g.createStream(),
                    g -> g.scanRedzones());
            for (Consumer<Gpu> call : calls) {
                assertThatThrownBy(() -> call.accept(gpu)).isInstanceOfSatisfying(StickyFaultException.class, e -> {
                    assertThat(e.original()).isSameAs(original);
                    assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                    assertThat(e.getMessage()).contains("ILLEGAL_ADDRESS", site);
                });
            }
            assertThat(gpu.telemetry()).isNotNull();
            assertThat(gpu.options()).isNotNull();
            assertThat(gpu.isClosed()).isFalse();
        } finally {
            gpu.close();
        }
        assertThat(gpu.isClosed()).isTrue();
        assertThat(gpu.fault()).isPresent();
        assertThatThrownBy(() -> gpu.alloc(1)).isInstanceOf(IllegalStateException.class).hasMessageStartingWith("Gpu is closed: ").hasMessageContaining("close() was called at");
    }

    /**
     * The report of an illegal address names the live allocation nearest the faulting address
     * and where the address lies from it, of two buffers {@code p} (256 B) and {@code q} (256 B,
     * allocated 64 KiB after it); an address farther than 1 MiB from every allocation names none,
     * and one halfway between them names the lower.
     *
     * @param element the float element of {@code p} (or of {@code q}, with {@code fromQ}) stored to
     * @param fromQ   whether the kernel is given {@code q}
     * @param where   what the report must say, or {@code none}
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "64      | false | p, 0 byte(s) past its end",
        "74      | false | p, 40 byte(s) past its end",
        "-4      | false | p, 16 byte(s) before its start",
        "-25     | true  | q, 100 byte(s) before its start",
        "89      | false | p, 100 byte(s) past its end",
        "524288  | true  | none",
        "262208  | true  | q, 1048576 byte(s) past its end",
        "262209  | true  | none",
        "8256    | false | p, 32768 byte(s) past its end"})
    void anIllegalAddressNamesTheNearestAllocation(long element, boolean fromQ, String where) {
        // cuMemAlloc's address space: each buffer with an unmapped gap after it, where pool blocks sit side by side.
        try (Gpu gpu = sim().allocator("driver").open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(256);
            DevicePtr q = gpu.alloc(256);
            assertThat(q.address() - p.address()).as("the buffers are apart").isGreaterThan(2048);
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().ptr(fromQ ? q : p).i64(element));
            GpuException e = catchThrowableOfType(GpuException.class, () -> gpu.synchronize(Stream.DEFAULT));
            assertThat(e).isNotNull();
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            if (where.equals("none")) {
                assertThat(e.getMessage()).doesNotContain("nearest allocation");
            } else {
                DevicePtr near = where.startsWith("p") ? p : q;
                long addr = (fromQ ? q : p).address() + 4 * element;
                assertThat(e.getMessage()).contains("nearest allocation to 0x" + Long.toHexString(addr) + ": " + near + " (256 B",
                        where.substring(3));
            }
        }
    }

    @Test
    void debugSyncMakesTheLaunchItselfFailNamingItsKernel() {
        try (Gpu gpu = sim().debugSync(true).open(); KernelArgs args = new KernelArgs()) {
            assertThat(gpu.debugSyncKernels()).isTrue();
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle oob = gpu.kernel(MODULE, "oob");
            DevicePtr p = gpu.alloc(256);
            assertThatThrownBy(() -> gpu.launch(oob, LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p)))
                    .isInstanceOfSatisfying(GpuException.class, e -> {
                        assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                        assertThat(e.getMessage()).contains("launch " + MODULE + "::oob");
                    });
            assertThat(gpu.fault()).hasValueSatisfying(
                    f -> assertThat(f.faultCall()).isEqualTo("launch " + MODULE + "::oob (debug sync)"));
        }
    }

    @Test
    void withoutDebugSyncTheLaunchReturnsAndTheSyncReportsTheFault() {
        try (Gpu gpu = sim().open(); KernelArgs args = new KernelArgs()) {
            assertThat(gpu.debugSyncKernels()).isFalse();
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(256);
            gpu.launch(gpu.kernel(MODULE, "oob"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p));
            assertThat(gpu.fault()).isEmpty();
            assertThatThrownBy(() -> gpu.synchronize()).isInstanceOf(GpuException.class);
            assertThat(gpu.fault()).isPresent();
        }
    }

    @Test
    void debugSyncedLaunchesThatSucceedAreComplete() {
        try (Gpu gpu = sim().debugSync(true).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(64 * 4);
            Stream s = gpu.createStream();
            gpu.launch(gpu.kernel(MODULE, "fill"), LaunchConfig.of(2, 32), s, args.clear().ptr(p).f32(2.5f).i32(64));
            assertThat(gpu.streamQuery(s)).isTrue();
            gpu.destroyStream(s);
        }
    }

    @Test
    void argumentErrorsDoNotLatch() {
        try (Gpu gpu = sim().open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle fill = gpu.kernel(MODULE, "fill");
            DevicePtr p = gpu.alloc(256);
            assertThatThrownBy(() -> gpu.launch(fill, LaunchConfig.of(1, 2048), Stream.DEFAULT, args.clear().ptr(p).f32(1).i32(1)))
                    .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
            assertThatThrownBy(() -> gpu.kernel(MODULE, "nope"))
                    .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.NOT_FOUND));
            assertThat(gpu.fault()).isEmpty();
            gpu.launch(fill, LaunchConfig.of(1, 64), Stream.DEFAULT, args.clear().ptr(p).f32(3f).i32(64));
            float[] back = new float[64];
            gpu.copyD2H(p, back);
            assertThat(back).containsOnly(3f);
        }
    }
}
