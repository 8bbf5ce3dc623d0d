// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CapturedStep;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StepOptions;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.TraceEntry;
import org.junit.jupiter.api.Test;

/**
 * The runtime core's traced launches, memsets and device-to-device copies reach the launch trace
 * through its record methods as the entries the core used to build, and a captured step's traced
 * run still gets its own.
 */
class LaunchTraceCoreTest {

    private static final String MODULE = "m";
    private static final byte[] IMAGE = "scripted".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    @Test
    void tracedOpsAreTheEntriesOfTheirValues() {
        try (Gpu gpu = new ScriptedDriver().kernel(MODULE, "k", (d, c, a) -> { }).open();
             KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, IMAGE);
            KernelHandle k = gpu.kernel(MODULE, "k");
            Stream s = gpu.createStream();
            DevicePtr x = gpu.alloc(4096);
            DevicePtr y = gpu.alloc(4096);
            LaunchConfig cfg = new LaunchConfig(Dim3.of(3, 2, 1), Dim3.of(64, 2, 2), 128);
            LaunchTrace trace = gpu.telemetry().trace();

            gpu.launch(k, cfg, s, args.clear().i32(1));
            assertThat(trace.current()).as("off until begin").isEmpty();

            trace.begin();
            args.clear().f32(-1.5f).ptr(x).i32(-7).i64(1L << 40).f64(0.25).bytes(new byte[] {1, 2, 3})
                    .bytes(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
            TraceEntry launched = TraceEntry.kernel(k.value(), 3, 2, 1, 64, 2, 2, 128, args.words(), args.argKinds());
            gpu.launch(k, cfg, s, args);
            gpu.memsetAsync(y, 0xab, 400, s);
            gpu.copyD2DAsync(x, y, 64, s);
            gpu.copyD2D(y, x, 32);
            gpu.memset(y, 0, 4);
            gpu.synchronize(s);
            assertThat(launched.argKinds()).isEqualTo("fpildbb");
            assertThat(trace.current()).containsExactly(
                    launched,
                    TraceEntry.memset(y.address(), 0xab, 400),
                    TraceEntry.d2d(x.address(), y.address(), 64),
                    TraceEntry.d2d(y.address(), x.address(), 32));
            assertThat(trace.current().getFirst().args()).containsExactly(
                    Integer.toUnsignedLong(Float.floatToRawIntBits(-1.5f)), x.address(), 0xffff_fff9L, 1L << 40,
                    Double.doubleToRawLongBits(0.25), 0x03_02_01L, 0x08_07_06_05_04_03_02_01L);
            assertThat(trace.endAndDiff(10)).isEmpty();

            gpu.free(x);
            gpu.free(y);
            gpu.destroyStream(s);
        }
    }

    @Test
    void aCapturedStepsTracedRunGetsItsOpsWithTheLaunchTraceOnOrOff() {
        try (Gpu gpu = new ScriptedDriver().kernel(MODULE, "k", (d, c, a) -> { }).open();
             KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, IMAGE);
            KernelHandle k = gpu.kernel(MODULE, "k");
            Stream s = gpu.createStream();
            DevicePtr p = gpu.alloc(256);
            LaunchConfig cfg = LaunchConfig.of(1, 32);
            int[] v = {5};
            List<String> reports = new ArrayList<>();
            LaunchTrace trace = gpu.telemetry().trace();
            try (CapturedStep step = gpu.capturedStep("step", (g, st) -> {
                g.launch(k, cfg, st, args.clear().ptr(p).i32(v[0]));
                g.memsetAsync(p, 0, 16, st);
            }, StepOptions.defaults().eagerRuns(1).reporter(reports::add))) {
                trace.begin();
                step.run(s);
                assertThat(trace.current()).as("the launch trace records the step's ops too").containsExactly(
                        TraceEntry.kernel(k.value(), 1, 1, 1, 32, 1, 1, 0, new long[] {p.address(), 5}, "pi"),
                        TraceEntry.memset(p.address(), 0, 16));
                trace.endAndDiff(0);
                step.run(s);
                v[0] = 6;
                step.runTraced(s);
                assertThat(reports).as("the verification run's trace, with the launch trace off, found the change")
                        .anySatisfy(r -> assertThat(r).contains("arg1 0x5 -> 0x6 (Δ 1)"));
                assertThat(trace.current()).isEmpty();
            }
            gpu.synchronize(s);
            gpu.free(p);
            gpu.destroyStream(s);
        }
    }
}
