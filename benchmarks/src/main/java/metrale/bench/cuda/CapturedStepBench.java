// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.util.concurrent.TimeUnit;
import metrale.gpu.CapturedStep;
import metrale.gpu.Gpu;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StepOptions;
import metrale.gpu.StepParam;
import metrale.gpu.Stream;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Host nanoseconds per step of a {@link CapturedStep}, five ways, measured in one JVM and
 * interleaved batch by batch (as {@link PairedBench}), for the targets: replay ≥ 4× fewer host ns
 * than eager; replay with one in-place argument update ≤ 1.2× plain replay and ≥ 3× cheaper than
 * recapture; a step with one parameter set ≤ plain replay + 1.5 µs, at 20 kernels as at 100.
 *
 * <p>The step is {@link #kernels} launches of {@code axpy4} (one block of 128 threads, {@code n = 0},
 * so the GPU does almost nothing and the host cost shows).
 * <ul>
 *   <li>{@code eagerNs}: the region enqueued directly, {@code kernels} {@code gpu.launch} calls.</li>
 *   <li>{@code replayNs}: {@code step.run} of a step in its replay phase: one {@code cuGraphLaunch}.</li>
 *   <li>{@code updateNs}: {@code step.update(0, ...)} with a new {@code a} (the first kernel's first
 *       argument) and then {@code step.run}: one {@code cuGraphExecKernelNodeSetParams} and one
 *       {@code cuGraphLaunch}.</li>
 *   <li>{@code paramNs}: {@code step.set(a, ...)} of a {@link StepParam} that the region passes as
 *       the first kernel's first argument ({@code KernelArgs.param}), then {@code step.run}: the run
 *       sets that one node ({@code cuGraphExecKernelNodeSetParams}) and launches the graph, the
 *       region not running.</li>
 *   <li>{@code recaptureNs}: what a step pays at least when it must capture again: begin the
 *       capture, the region, end it and instantiate, launch, and destroy the previous graph (the
 *       step also reads the new graph's node list, not counted here, so the update-against-recapture
 *       ratio is a conservative one).</li>
 * </ul>
 * The stream is synchronized (untimed) before each batch of {@value #STEPS} steps. {@code steps}
 * counts the steps per variant, so {@code eagerNs / steps} is host ns per eager step, and
 * {@code eagerNs / replayNs} the replay speed-up.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar CapturedStepBench -f 2};
 * {@code metrale.bench.sim.CapturedStepSimBench} is the same on the simulator.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class CapturedStepBench extends CudaBench {

    /** Steps per batch and variant. */
    public static final int STEPS = 4;

    /** Kernels per step. */
    @Param({"20", "100"})
    public int kernels;

    /** Nanoseconds per variant, summed over an iteration, and the steps per variant; reset each iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Nanos {
        /** Nanoseconds in eager steps. */
        public long eagerNs;
        /** Nanoseconds in replayed steps. */
        public long replayNs;
        /** Nanoseconds in replayed steps with one argument updated in place. */
        public long updateNs;
        /** Nanoseconds in replayed steps with one parameter set. */
        public long paramNs;
        /** Nanoseconds in recaptured steps. */
        public long recaptureNs;
        /** Steps per variant. */
        public long steps;

        /** Creates the counters; JMH calls it. */
        public Nanos() {
        }

        /** Zeroes the counters. */
        @Setup(Level.Iteration)
        public void reset() {
            eagerNs = 0;
            replayNs = 0;
            updateNs = 0;
            paramNs = 0;
            recaptureNs = 0;
            steps = 0;
        }
    }

    private Stream stream;
    private BenchArgs bench;
    private KernelHandle axpy;
    private LaunchConfig config;
    private KernelArgs updateArgs;
    private CapturedStep.Region region;
    private CapturedStep replayStep;
    private CapturedStep updateStep;
    private CapturedStep paramStep;
    private StepParam<Float> scale;
    private KernelArgs paramArgs;
    private GraphHandle recaptured;
    private float a = 2.0f;
    private float b = 2.0f;
    private int round;

    /** Creates the state; JMH calls it. */
    public CapturedStepBench() {
    }

    /**
     * {@return the runtime to measure, with the benchmark kernels loaded} CUDA with telemetry off;
     * the simulator's subclass opens the simulator.
     */
    protected Gpu open() {
        return CudaFixture.open(CudaFixture.telemetryOff());
    }

    /** Opens the runtime, and brings three steps into their replay phase. */
    @Setup(Level.Trial)
    public void setUp() {
        gpu = open();
        stream = gpu.createStream(true);
        bench = BenchArgs.of(gpu, "axpy4");
        axpy = gpu.kernel(CudaFixture.MODULE, "axpy4");
        config = LaunchConfig.of(1, 128);
        updateArgs = new KernelArgs();
        KernelArgs args = bench.args();
        int k = kernels;
        region = (g, s) -> {
            for (int i = 0; i < k; i++) {
                g.launch(axpy, config, s, args);
            }
        };
        StepOptions quiet = StepOptions.defaults().reporter(r -> {
            throw new IllegalStateException("the benchmark's step should never differ: " + r);
        });
        replayStep = gpu.capturedStep("replay", region, quiet);
        updateStep = gpu.capturedStep("update", region, quiet);
        scale = StepParam.f32("a", b);
        paramArgs = new KernelArgs();
        KernelArgs pa = paramArgs;
        paramStep = gpu.capturedStep("param", (g, s) -> {
            g.launch(axpy, config, s, pa.clear().param(scale).ptr(bench.x()).ptr(bench.y()).i32(0));
            for (int i = 1; i < k; i++) {
                g.launch(axpy, config, s, args);
            }
        }, quiet);
        for (int i = 0; i < 3; i++) {
            replayStep.run(stream);
            updateStep.run(stream);
            paramStep.run(stream);
        }
        if (replayStep.phase() != CapturedStep.Phase.REPLAY || updateStep.inPlaceUnavailable().isPresent()
                || paramStep.inPlaceUnavailable().isPresent()) {
            throw new IllegalStateException("steps not replaying in place: " + replayStep.phase() + ", "
                    + updateStep.inPlaceUnavailable().orElse("") + paramStep.inPlaceUnavailable().orElse(""));
        }
        gpu.synchronize(stream);
    }

    /** Releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.synchronize(stream);
            replayStep.close();
            updateStep.close();
            long sets = paramStep.stats().paramSets();
            long replays = paramStep.stats().replays();
            paramStep.close();
            paramArgs.close();
            if (sets != replays - 1) {
                throw new IllegalStateException("the parameter step set " + sets + " node(s) in " + replays
                        + " replays; one per step was due");
            }
            if (recaptured != null) {
                gpu.destroyGraph(recaptured);
            }
            updateArgs.close();
            bench.close();
            gpu.destroyStream(stream);
            gpu.close();
        }
    }

    private long eager() {
        gpu.synchronize(stream);
        long t0 = System.nanoTime();
        for (int i = 0; i < STEPS; i++) {
            region.enqueue(gpu, stream);
        }
        return System.nanoTime() - t0;
    }

    private long replay() {
        gpu.synchronize(stream);
        long t0 = System.nanoTime();
        for (int i = 0; i < STEPS; i++) {
            replayStep.run(stream);
        }
        return System.nanoTime() - t0;
    }

    private long update() {
        gpu.synchronize(stream);
        long t0 = System.nanoTime();
        for (int i = 0; i < STEPS; i++) {
            a += 1.0f;
            updateStep.update(0, config, updateArgs.clear().f32(a).ptr(bench.x()).ptr(bench.y()).i32(0));
            updateStep.run(stream);
        }
        return System.nanoTime() - t0;
    }

    private long param() {
        gpu.synchronize(stream);
        long t0 = System.nanoTime();
        for (int i = 0; i < STEPS; i++) {
            // Two values in turn, so every set changes the node (a set of the value it holds sets nothing).
            b = b == 2.0f ? 3.0f : 2.0f;
            paramStep.set(scale, b);
            paramStep.run(stream);
        }
        return System.nanoTime() - t0;
    }

    private long recapture() {
        gpu.synchronize(stream);
        long t0 = System.nanoTime();
        for (int i = 0; i < STEPS; i++) {
            gpu.beginCapture(stream);
            region.enqueue(gpu, stream);
            GraphHandle g = gpu.endCapture(stream);
            gpu.launchGraph(g, stream);
            if (recaptured != null) {
                gpu.destroyGraph(recaptured);
            }
            recaptured = g;
        }
        return System.nanoTime() - t0;
    }

    /**
     * One batch of each variant, in a rotating order.
     *
     * @param n the counters
     */
    @Benchmark
    public void step(Nanos n) {
        int first = round++ % 5;
        for (int k = 0; k < 5; k++) {
            switch ((first + k) % 5) {
                case 0 -> n.eagerNs += eager();
                case 1 -> n.replayNs += replay();
                case 2 -> n.updateNs += update();
                case 3 -> n.paramNs += param();
                default -> n.recaptureNs += recapture();
            }
        }
        n.steps += STEPS;
    }
}
