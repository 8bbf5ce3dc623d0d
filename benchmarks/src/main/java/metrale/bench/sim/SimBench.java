// SPDX-License-Identifier: Apache-2.0
package metrale.bench.sim;

import java.util.concurrent.TimeUnit;
import metrale.bench.cuda.CudaFixture;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.contract.OpSequenceProperties;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.SimKernels;
import metrale.telemetry.LaunchTrace;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The simulator, on one core: scores are operations per second.
 *
 * <ul>
 *   <li>{@code axpyThreads}: one launch of the {@code axpy4} twin over {@value #N} elements
 *       ({@code forEachThread}, a bounds-checked float view read twice and written once per
 *       thread) and the stream sync that runs it; an op is one thread-invocation. Target: at
 *       least 1e8 per second.</li>
 *   <li>{@code launchSync}: {@code gpu.launch} of the {@code empty} twin (one block of one
 *       thread) then {@code gpu.synchronize(stream)}; an op is the pair. Target: at least 2e6 per
 *       second.</li>
 *   <li>{@code launchSyncTraced}: the same with the launch trace recording, cleared by
 *       {@code begin()} before each batch of {@value #BATCH} (outside the timed region). Only this
 *       benchmark has a per-invocation set-up (in its own state, {@link Traced}): JMH timestamps
 *       each invocation that has one, which around a call of about 200 ns would bias the others.</li>
 *   <li>{@code launchBatch}: {@value #LAUNCH_BATCH} launches of the {@code empty} twin, then one
 *       {@code gpu.synchronize(stream)}; an op is one launch, so the score is the enqueue rate
 *       with the sync spread over the batch.</li>
 *   <li>{@code opSequence}: one program of the contract suite's {@link OpSequenceProperties}
 *       (seeds 1 to 40 in turn, 60 ops each: allocs, frees, every kind of copy, memsets, launches,
 *       event waits, syncs, captured graphs), run on a fresh runtime and checked against its
 *       model; an op is one whole program.</li>
 * </ul>
 *
 * <p>The twins here are those of {@code bench.cu} (module {@code bench}) and, for the op
 * sequences, of the contract kernels {@code fill_f32} and {@code add_i32}; the simulator checks
 * that each appears as an {@code .entry} of the PTX it is loaded with.
 *
 * <p>Run: {@code java -jar benchmarks.jar SimBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SimBench {

    /** Elements of the axpy launch. */
    public static final int N = 1 << 20;

    /** Launch+sync pairs per invocation of {@code launchSyncTraced}. */
    public static final int BATCH = 128;

    /** Launches per invocation of {@code launchBatch}. */
    public static final int LAUNCH_BATCH = 1000;

    /** The module name of the benchmark kernels. */
    static final String MODULE = CudaFixture.MODULE;

    static {
        SimKernels.register(MODULE, "empty", l -> { });
        SimKernels.register(MODULE, "axpy4", l -> {
            float a = l.f32(0);
            FloatView x = l.floats(1);
            FloatView y = l.floats(2);
            int n = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    // The PTX is one fma.rn.f32 (nvcc contracts a * x + y): one rounding, as Math.fma.
                    y.set(i, Math.fma(a, x.get(i), y.get(i)));
                }
            });
        });
        SimKernels.register(GpuContract.MODULE, "fill_f32", l -> {
            FloatView p = l.floats(0);
            float v = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    p.set(i, v);
                }
            });
        });
        SimKernels.register(GpuContract.MODULE, "add_i32", l -> {
            IntView p = l.ints(0);
            int v = l.i32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    p.set(i, p.get(i) + v);
                }
            });
        });
    }

    private Gpu gpu;
    private Stream stream;
    private KernelHandle empty;
    private KernelHandle axpy;
    private KernelArgs emptyArgs;
    private KernelArgs axpyArgs;
    private LaunchConfig one;
    private LaunchConfig grid;
    private DevicePtr x;
    private DevicePtr y;
    private LaunchTrace trace;
    private final SimOpSequences programs = new SimOpSequences();
    private long seed;

    /** Creates the state; JMH calls it. */
    public SimBench() {
    }

    /**
     * Opens the simulator with telemetry off, loads the benchmark module, fills the buffers.
     */
    @Setup(Level.Trial)
    public void setUp() {
        gpu = Gpu.builder().backend("sim").timing(false).debugSync(false).redZoneBytes(0).open();
        gpu.loadModule(MODULE, CudaFixture.ptx());
        empty = gpu.kernel(MODULE, "empty");
        axpy = gpu.kernel(MODULE, "axpy4");
        stream = gpu.createStream(true);
        one = LaunchConfig.of(1, 1);
        grid = LaunchConfig.forElements(N, 256);
        x = gpu.alloc(4L * N);
        y = gpu.alloc(4L * N);
        float[] h = new float[N];
        for (int i = 0; i < N; i++) {
            h[i] = i * 0.5f;
        }
        gpu.copyH2D(h, x);
        gpu.copyH2D(h, y);
        emptyArgs = new KernelArgs();
        axpyArgs = new KernelArgs().f32(1.0e-3f).ptr(x).ptr(y).i32(N);
        trace = gpu.telemetry().trace();
    }

    /** The per-invocation set-up of {@code launchSyncTraced} alone. */
    @State(Scope.Thread)
    public static class Traced {

        /** Creates the state; JMH calls it. */
        public Traced() {
        }

        /**
         * Clears the trace before each batch; not timed.
         *
         * @param bench the benchmark's state, whose runtime records the trace
         */
        @Setup(Level.Invocation)
        public void clearTrace(SimBench bench) {
            bench.trace.begin();
        }
    }

    /** Releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.synchronize();
            gpu.free(x);
            gpu.free(y);
            gpu.destroyStream(stream);
            emptyArgs.close();
            axpyArgs.close();
            gpu.close();
        }
    }

    /** One axpy launch over {@value #N} elements and its sync; an op is one thread-invocation. */
    @Benchmark
    @OperationsPerInvocation(N)
    public void axpyThreads() {
        gpu.launch(axpy, grid, stream, axpyArgs);
        gpu.synchronize(stream);
    }

    /** Launch of the empty twin, then sync. */
    @Benchmark
    public void launchSync() {
        gpu.launch(empty, one, stream, emptyArgs);
        gpu.synchronize(stream);
    }

    /** Launch and sync with the launch trace on. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void launchSyncTraced(Traced traced) {
        for (int i = 0; i < BATCH; i++) {
            gpu.launch(empty, one, stream, emptyArgs);
            gpu.synchronize(stream);
        }
    }

    /** {@value #LAUNCH_BATCH} launches of the empty twin, then one sync. */
    @Benchmark
    @OperationsPerInvocation(LAUNCH_BATCH)
    public void launchBatch() {
        for (int i = 0; i < LAUNCH_BATCH; i++) {
            gpu.launch(empty, one, stream, emptyArgs);
        }
        gpu.synchronize(stream);
    }

    /** One op-sequence program, checked against the model. */
    @Benchmark
    public void opSequence() {
        programs.runProgram(1 + (seed++ % 40), 60);
    }

    /** The contract suite's op sequences on the simulator, with the contract kernels' twins above. */
    static final class SimOpSequences extends OpSequenceProperties {

        @Override
        protected GpuBuilder builder() {
            // The op sequences' model gives memory back at the free: no quarantine, as on CUDA.
            return Gpu.builder().backend("sim").quarantineBytes(0);
        }

        @Override
        protected void prepareKernels(Gpu gpu) {
            GpuContract.loadContractModule(gpu);
        }
    }
}
