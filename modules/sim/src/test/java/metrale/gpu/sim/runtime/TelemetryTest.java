// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import metrale.telemetry.Counters;
import metrale.telemetry.KernelLookup;
import metrale.telemetry.Telemetry;
import metrale.telemetry.TraceEntry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the runtime reports to its telemetry: trace entries, counters, the audit, timing. */
class TelemetryTest {

    private static final String MODULE = "rt_telemetry";

    @BeforeAll
    static void kernels() {
        SimKernels.register(MODULE, "scale", l -> {
            float a = l.f32(0);
            FloatView x = l.floats(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    x.set(i, a * x.get(i));
                }
            });
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "scale");
    }

    @Test
    void launchMemsetAndD2dAreTracedWithTheSeedEncodings() {
        Telemetry tel = new Telemetry();
        try (Gpu gpu = sim().telemetry(tel).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle k = gpu.kernel(MODULE, "scale");
            DevicePtr x = gpu.alloc(4 * 100);
            DevicePtr y = gpu.alloc(4 * 100);
            Stream s = gpu.createStream();
            LaunchConfig cfg = new LaunchConfig(metrale.gpu.Dim3.of(4, 1, 1), metrale.gpu.Dim3.of(32, 1, 1), 0);

            gpu.launch(k, cfg, s, args.clear().f32(2f).ptr(x).i32(100));
            assertThat(tel.trace().current()).isEmpty();

            tel.trace().begin();
            gpu.launch(k, cfg, s, args.clear().f32(-1.5f).ptr(x).i32(100));
            gpu.memsetAsync(y, 0x1AB & 0xff, 400, s);
            gpu.copyD2D(x, y, 64);
            gpu.copyD2DAsync(y, x, 32, s);
            gpu.memset(y, 0, 4);
            assertThat(tel.trace().current()).containsExactly(
                    TraceEntry.kernel(k.value(), 4, 1, 1, 32, 1, 1, 0,
                            new long[] {Integer.toUnsignedLong(Float.floatToRawIntBits(-1.5f)), x.address(), 100}, "fpi"),
                    TraceEntry.memset(y.address(), 0xAB, 400),
                    TraceEntry.d2d(x.address(), y.address(), 64),
                    TraceEntry.d2d(y.address(), x.address(), 32));
            assertThat(tel.trace().nameOf(k.value())).isEqualTo(MODULE + "::scale");
            tel.trace().endAndDiff(10);
            gpu.synchronize(s);
            gpu.destroyStream(s);
        }
    }

    @Test
    void countersCountLaunchesCopiesAndSyncs() {
        Telemetry tel = new Telemetry();
        try (Gpu gpu = sim().telemetry(tel).open(); KernelArgs args = new KernelArgs(); Arena arena = Arena.ofConfined()) {
            Counters c = tel.counters();
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle k = gpu.kernel(MODULE, "scale");
            DevicePtr x = gpu.alloc(400);
            gpu.copyH2D(new float[100], x);
            gpu.copyH2D(new byte[10], x);
            gpu.launch(k, LaunchConfig.of(4, 32), Stream.DEFAULT, args.clear().f32(2f).ptr(x).i32(100));
            gpu.launch(k, LaunchConfig.of(4, 32), Stream.DEFAULT, args.clear().f32(2f).ptr(x).i32(100));
            gpu.copyD2H(x, new float[100]);
            MemorySegment host = arena.allocate(40);
            gpu.copyD2HOnStream(x, host, Stream.DEFAULT);
            gpu.copyD2HOnStream(x, MemorySegment.ofArray(new byte[8]), Stream.DEFAULT);
            gpu.copyD2HAsync(x, host, Stream.DEFAULT);
            gpu.copyD2D(x, x.plus(200), 200);
            gpu.synchronize(Stream.DEFAULT);
            gpu.synchronize();
            Event e = gpu.createEvent();
            gpu.recordEvent(e, Stream.DEFAULT);
            gpu.eventSynchronize(e);
            gpu.destroyEvent(e);

            assertThat(c.launches()).isEqualTo(2);
            assertThat(c.h2dCopies()).isEqualTo(2);
            assertThat(c.bytesH2D()).isEqualTo(410);
            assertThat(c.d2hCopies()).isEqualTo(4);
            assertThat(c.bytesD2H()).isEqualTo(400 + 40 + 8 + 40);
            assertThat(c.d2dCopies()).isEqualTo(1);
            assertThat(c.bytesD2D()).isEqualTo(200);
            assertThat(c.streamSyncs()).isEqualTo(3);
        }
    }

    @Test
    void d2hTraceOptionCountsTheCallersSite() {
        Telemetry tel = new Telemetry();
        try (Gpu gpu = sim().telemetry(tel).d2hTrace(true).open()) {
            DevicePtr x = gpu.alloc(16);
            gpu.copyD2H(x, new byte[16]); String site = here();
            assertThat(tel.counters().d2hSites()).containsEntry(site, 1L);
        }
    }

    @Test
    void lookupsAreAuditedWithTheCallersSiteAndPublished() {
        Telemetry tel = new Telemetry();
        try (Gpu gpu = sim().telemetry(tel).open()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle k = gpu.kernel(MODULE, "scale"); String okSite = here();
            assertThatThrownBy(() -> gpu.kernel(MODULE, "missing")).isInstanceOf(GpuException.class); String badSite = here();
            assertThatThrownBy(() -> gpu.kernel("nomodule", "scale")).isInstanceOf(GpuException.class)
                    .hasMessageContaining("nomodule");
            assertThat(tel.audit().lookups()).contains(
                    new KernelLookup(MODULE, "scale", true, okSite, 1),
                    new KernelLookup(MODULE, "missing", false, badSite, 1));
            assertThat(tel.audit().lookups()).anySatisfy(l -> assertThat(l.module()).isEqualTo("nomodule"));
            assertThat(gpu.opCache().kernel(MODULE, "scale")).contains(k);
            assertThat(gpu.kernelRegistry().modules()).containsEntry(MODULE, java.util.List.of("scale"));
            assertThat(gpu.hasModule(MODULE)).isTrue();
            assertThat(gpu.hasModule("nomodule")).isFalse();
        }
    }

    @Test
    void timingOptionAggregatesSpansPerKernel() {
        Telemetry tel = new Telemetry();
        try (Gpu gpu = sim().telemetry(tel).timing(true).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle k = gpu.kernel(MODULE, "scale");
            DevicePtr x = gpu.alloc(400);
            Stream s = gpu.createStream();
            for (int i = 0; i < 3; i++) {
                gpu.launch(k, LaunchConfig.of(4, 32), s, args.clear().f32(1f).ptr(x).i32(100));
            }
            assertThat(tel.timing().stats()).containsKey(MODULE + "::scale");
            assertThat(tel.timing().stats().get(MODULE + "::scale").count()).isEqualTo(3);
            // The span synchronized the stream, so it covered the kernel's execution.
            assertThat(gpu.streamQuery(s)).isTrue();
            gpu.destroyStream(s);
        }
    }
}
