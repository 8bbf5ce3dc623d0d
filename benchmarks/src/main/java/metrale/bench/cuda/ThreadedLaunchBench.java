// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
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
 * Launch throughput of {@link #threads} platform threads launching at once, each on a
 * non-blocking stream of its own, through {@code gpu.launch} against the same threads each
 * calling the bare {@code cuLaunchKernel} downcall, in one JVM and interleaved phase by phase as
 * {@link PairedBench} interleaves batches; for issue #22's target: at 8 threads the runtime's
 * launch throughput ≥ 0.95× the bare downcall's.
 *
 * <p>The worker threads (a {@link Gang}) are made once per trial and hold the runtime's context.
 * Each invocation of {@code launch} runs one phase of each variant, alternating which goes first.
 * In a phase every worker synchronizes its two streams (untimed, so no queue fills across phases),
 * waits at a spinning start line until all are ready, then enqueues {@value #LAUNCHES} launches
 * of {@code axpy4} ({@code n = 0}, one block of 128 threads, arguments and buffers of its own, see
 * {@link BenchArgs}); the phase's time is the first worker's start to the last worker's end.
 *
 * <p>The {@link Nanos} counters: {@code bareNs} and {@code launchNs} sum the phases' times,
 * {@code ops} the launches per variant, all threads together; so {@code ops / launchNs} is the
 * runtime's launches per nanosecond, {@code launchNs / ops} the time per launch of the whole
 * group, and {@code bareNs / launchNs} the throughput ratio the target judges.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar ThreadedLaunchBench -f 2}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ThreadedLaunchBench extends CudaBench {

    /** Launches per worker and phase. */
    public static final int LAUNCHES = PairedBench.LAUNCHES;

    private static final int BARE = 0;
    private static final int RUNTIME = 1;

    /** Worker threads launching at once. */
    @Param({"8"})
    public int threads;

    /** Nanoseconds per variant, summed over an iteration, and launches per variant; reset each iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Nanos {
        /** Nanoseconds in the bare {@code cuLaunchKernel} phases. */
        public long bareNs;
        /** Nanoseconds in the {@code gpu.launch} phases. */
        public long launchNs;
        /** Launches per variant, all workers together. */
        public long ops;

        /** Creates the counters; JMH calls it. */
        public Nanos() {
        }

        /** Zeroes the counters. */
        @Setup(Level.Iteration)
        public void reset() {
            bareNs = 0;
            launchNs = 0;
            ops = 0;
        }
    }

    private CudaFixture.BareKernels bare;
    private KernelHandle fn;
    private LaunchConfig config;
    private Stream[] streams;
    private long[] bareStreams;
    private BenchArgs[] args;
    private long func;
    private Gang gang;
    private int round;

    /** Creates the state; JMH calls it. */
    public ThreadedLaunchBench() {
    }

    /**
     * Opens CUDA with telemetry off, gives each worker a runtime stream, a bare stream and
     * arguments of its own, and starts the workers.
     */
    @Setup(Level.Trial)
    public void setUp() {
        if (threads < 1) {
            throw new IllegalArgumentException("threads=" + threads + ": at least 1");
        }
        gpu = CudaFixture.open(CudaFixture.telemetryOff());
        fn = gpu.kernel(CudaFixture.MODULE, "axpy4");
        config = LaunchConfig.of(1, 128);
        bare = CudaFixture.BareKernels.load();
        func = bare.function("axpy4");
        streams = new Stream[threads];
        bareStreams = new long[threads];
        args = new BenchArgs[threads];
        for (int i = 0; i < threads; i++) {
            streams[i] = gpu.createStream(true);
            bareStreams[i] = Bare.streamCreate(1);
            args[i] = BenchArgs.of(gpu, "axpy4");
        }
        gang = new Gang(threads, "launcher", new Gang.Task() {
            @Override
            public void start(int w) {
                // The bare launches bind nothing: the runtime's context must be current on the worker.
                gpu.bindToThread();
            }

            @Override
            public void prepare(int w, int variant) {
                gpu.synchronize(streams[w]);
                Bare.streamSynchronize(bareStreams[w]);
            }

            @Override
            public void run(int w, int variant) {
                if (variant == RUNTIME) {
                    launches(streams[w], args[w].args());
                } else {
                    bareLaunches(bareStreams[w], args[w].args().table());
                }
            }
        });
        // Two untimed phases of each variant, so every worker's first measured launch is warm.
        for (int i = 0; i < 2; i++) {
            gang.phase(BARE);
            gang.phase(RUNTIME);
        }
    }

    private void launches(Stream s, KernelArgs a) {
        for (int i = 0; i < LAUNCHES; i++) {
            gpu.launch(fn, config, s, a);
        }
    }

    private void bareLaunches(long st, MemorySegment table) {
        int gx = config.grid().x();
        int bx = config.block().x();
        for (int i = 0; i < LAUNCHES; i++) {
            Bare.launchKernel(func, gx, 1, 1, bx, 1, 1, 0, st, table);
        }
    }

    /** Stops the workers, drains and destroys every stream, frees the arguments and closes the runtime. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gang != null) {
            gang.close();
        }
        if (gpu == null) {
            return;
        }
        for (int i = 0; i < threads && streams != null; i++) {
            if (streams[i] != null) {
                gpu.synchronize(streams[i]);
                gpu.destroyStream(streams[i]);
            }
            if (bareStreams[i] != 0) {
                Bare.streamSynchronize(bareStreams[i]);
                Bare.streamDestroy(bareStreams[i]);
            }
            if (args[i] != null) {
                args[i].close();
            }
        }
        if (bare != null) {
            bare.close();
        }
        gpu.close();
    }

    /**
     * One phase of each variant, alternating which goes first.
     *
     * @param n the counters
     */
    @Benchmark
    public void launch(Nanos n) {
        if ((round++ & 1) == 0) {
            n.bareNs += gang.phase(BARE);
            n.launchNs += gang.phase(RUNTIME);
        } else {
            n.launchNs += gang.phase(RUNTIME);
            n.bareNs += gang.phase(BARE);
        }
        n.ops += (long) threads * LAUNCHES;
    }
}
