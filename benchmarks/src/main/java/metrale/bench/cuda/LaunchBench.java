// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.telemetry.LaunchTrace;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * The launch path on CUDA: {@code gpu.launch} against {@code cuLaunchKernel} through a bare
 * downcall handle ({@link Bare}), with the same {@code CUfunction}, grid, block, shared memory,
 * stream and the same {@link KernelArgs} table. Score: nanoseconds of host time per launch.
 *
 * <ul>
 *   <li>{@code bare}: the baseline.</li>
 *   <li>{@code off}: {@code gpu.launch}, every telemetry feature off (trace, timing, debug sync,
 *       no JFR recording); must stay within 3% of {@code bare} and allocate 0 B/op.</li>
 *   <li>{@code trace}: the launch trace on, so each launch records one entry; within 10%.</li>
 *   <li>{@code jfr}: telemetry off but a JFR recording with {@code metrale.Launch} enabled
 *       (in memory, the JDK's "default" settings), so each launch commits one event.</li>
 * </ul>
 *
 * <p><b>Method.</b> An invocation enqueues {@value #BATCH} launches, well under the launch queue's
 * depth (about a thousand entries), so no launch waits for the queue to drain: what is timed is
 * the host's enqueue. The stream is synchronized in a {@code Level.Invocation} setup, outside the
 * timed region, so each batch starts on an empty queue and the GPU's own execution time never
 * enters the score. {@code Level.Invocation}'s known cost, a timestamp pair per invocation, is
 * about 50 ns against a batch of several hundred microseconds (below 0.02%), and the same for
 * every variant. The sync uses the bare binding, so it allocates nothing and the gc profiler's
 * B/op is the launches' own. With the trace on, the same setup clears the trace
 * ({@link LaunchTrace#begin()}, which keeps the list's capacity), so it never holds more than one
 * batch.
 *
 * <p>Kernels ({@code bench.cu}): {@code empty} (no parameters) and {@code axpy4}
 * ({@code float, const float*, float*, int}, launched with n = 0 so it touches no memory); one
 * block of 128 threads.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar LaunchBench -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LaunchBench extends CudaBench {

    /** Launches per invocation. */
    public static final int BATCH = 128;

    /** Which kernel: {@code empty} or {@code axpy4}. */
    @Param({"empty", "axpy4"})
    public String kernel;

    private KernelHandle fn;
    private LaunchConfig config;
    private Stream stream;
    private BenchArgs launchArgs;
    private KernelArgs args;
    private LaunchTrace trace;
    private boolean traceOn;
    private Recording recording;

    // The baseline's copies of what gpu.launch is given.
    private CudaFixture.BareKernels bareKernels;
    private long func;
    private int gx;
    private int gy;
    private int gz;
    private int bx;
    private int by;
    private int bz;
    private int smem;
    private long st;
    private MemorySegment table;

    /** Creates the state; JMH calls it. */
    public LaunchBench() {
    }

    /**
     * Opens CUDA with every telemetry feature off, loads the kernel, fills the arguments, and
     * turns on what the running benchmark measures.
     *
     * @param params which benchmark runs
     */
    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        gpu = CudaFixture.open(CudaFixture.telemetryOff().d2hTrace(false));
        fn = gpu.kernel(CudaFixture.MODULE, kernel);
        config = LaunchConfig.of(1, 128);
        stream = gpu.createStream(true);
        launchArgs = BenchArgs.of(gpu, kernel);
        args = launchArgs.args();
        bareKernels = CudaFixture.BareKernels.load();
        func = bareKernels.function(kernel);
        gx = config.grid().x();
        gy = config.grid().y();
        gz = config.grid().z();
        bx = config.block().x();
        by = config.block().y();
        bz = config.block().z();
        smem = config.sharedMemBytes();
        st = bareKernels.stream();
        table = args.table();
        trace = gpu.telemetry().trace();

        String name = params.getBenchmark();
        traceOn = name.endsWith(".trace");
        if (traceOn) {
            trace.begin();
        }
        if (name.endsWith(".jfr")) {
            try {
                recording = new Recording(Configuration.getConfiguration("default"));
            } catch (java.io.IOException | java.text.ParseException e) {
                throw new IllegalStateException("the JDK's default JFR configuration cannot be read", e);
            }
            recording.enable("metrale.Launch");
            recording.setToDisk(false);
            recording.start();
        }
        // A first launch through each path, so neither pays the driver's first-use costs in a measurement.
        gpu.launch(fn, config, stream, args);
        Bare.launchKernel(func, gx, gy, gz, bx, by, bz, smem, st, table);
        Bare.ctxSynchronize();
    }

    /** Drains the stream (and clears the trace) before each batch; not timed. */
    @Setup(Level.Invocation)
    public void drain() {
        Bare.ctxSynchronize();
        if (traceOn) {
            trace.begin();
        }
    }

    /** Stops the recording and releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (recording != null) {
            recording.stop();
            recording.close();
        }
        if (gpu != null) {
            gpu.synchronize(stream);
            launchArgs.close();
            bareKernels.close();
            gpu.destroyStream(stream);
            gpu.close();
        }
    }

    /** The baseline: {@code cuLaunchKernel} through a bare downcall handle. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void bare() {
        for (int i = 0; i < BATCH; i++) {
            Bare.launchKernel(func, gx, gy, gz, bx, by, bz, smem, st, table);
        }
    }

    /** {@code gpu.launch} with telemetry off. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void off() {
        for (int i = 0; i < BATCH; i++) {
            gpu.launch(fn, config, stream, args);
        }
    }

    /** {@code gpu.launch} with the launch trace recording. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void trace() {
        for (int i = 0; i < BATCH; i++) {
            gpu.launch(fn, config, stream, args);
        }
    }

    /** {@code gpu.launch} with a JFR recording of launch events running. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void jfr() {
        for (int i = 0; i < BATCH; i++) {
            gpu.launch(fn, config, stream, args);
        }
    }
}
