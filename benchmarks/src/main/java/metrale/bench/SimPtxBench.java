// SPDX-License-Identifier: Apache-2.0
package metrale.bench;

import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwins;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The contract kernel {@code axpy_f32} ({@code y = a*x + y}, one thread per element, blocks of
 * {@value #BLOCK}) on the simulator, three ways: its Java twin (registered in a {@link SimTwins}),
 * its own PTX compiled to JVM bytecode ({@code sim.ptx=compiled}, twins off) and its PTX
 * interpreted ({@code sim.ptx=interpreted}); over {@code n} elements, with {@code sim.blocks}
 * {@code ordered} (one core) or {@code parallel} (a worker per core).
 *
 * <p>The primary score is launches per second (a launch of {@code n} threads and its stream sync);
 * the secondary {@code axpy:threads} is thread-invocations per second, the primary times
 * {@code n}. Issue #21's targets: compiled PTX at least 1e8 thread-invocations per second on one
 * core and within 3x of the twin.
 *
 * <p>Scaling from one core to all with {@code blocks=parallel}: the simulator's block pool runs a
 * launch on a thread per available processor (at least 2: the launching thread and helpers). Run
 * the parallel cases once per core count K under {@code taskset -c 0-(K-1)}, which confines the
 * JVM to K cores and makes it see K processors. {@code -XX:ActiveProcessorCount=K} alone sizes the
 * pool but leaves its threads free to run on every core: at K = 1 the pool's two threads ran on two
 * cores (171% CPU against 99% under {@code taskset -c 0}), so its rate was a two-core rate. Name
 * the collector too ({@code -XX:+UseG1GC}): on one processor the JVM picks Serial, whose cheaper
 * reference-store barrier made the compiled kernel 17% faster per thread than under G1 (24.1
 * against 28.3 ms of CPU a launch of 1 Mi threads), which reads as lost scaling.
 *
 * <p>Run: {@code java -jar benchmarks.jar SimPtxBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SimPtxBench {

    /** Threads per block. */
    public static final int BLOCK = 256;

    /** What runs the kernel: {@code twin}, {@code compiled} PTX or {@code interpreted} PTX. */
    @Param({"twin", "compiled", "interpreted"})
    public String kernel;

    /** Elements, one thread each. */
    @Param({"4096", "65536", "1048576"})
    public int n;

    /** How the grid's blocks run ({@code sim.blocks}). */
    @Param({"ordered", "parallel"})
    public String blocks;

    /** Thread-invocations, reported as a rate. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Threads {
        /** Threads the measured launches ran. */
        public long threads;

        /** Creates the counter; JMH calls it. */
        public Threads() {
        }

        /** Zeroes the counter. */
        @Setup(Level.Iteration)
        public void reset() {
            threads = 0;
        }
    }

    private Gpu gpu;
    private Stream stream;
    private KernelHandle axpy;
    private KernelArgs args;
    private LaunchConfig grid;
    private DevicePtr x;
    private DevicePtr y;

    /** Creates the state; JMH calls it. */
    public SimPtxBench() {
    }

    /** The Java twin of {@code axpy_f32}: what {@code contract.cu} says, through bounds-checked views. */
    static SimTwins twins() {
        return new SimTwins().register(GpuContract.MODULE, "axpy_f32", l -> {
            float a = l.f32(0);
            FloatView xs = l.floats(1);
            FloatView ys = l.floats(2);
            int count = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < count) {
                    ys.set(i, a * xs.get(i) + ys.get(i));
                }
            });
        });
    }

    /** Opens a fresh simulated process with telemetry off, loads the contract module, fills x and y. */
    @Setup(Level.Trial)
    public void setUp() {
        GpuBuilder b = Gpu.builder().backend("sim").timing(false).debugSync(false).redZoneBytes(0)
                .backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH).backendOption(SimOptions.BLOCKS, blocks);
        if (kernel.equals("twin")) {
            b.backendOption(SimOptions.TWINS, (Object) twins());
        } else {
            b.backendOption(SimOptions.TWINS, SimOptions.TWINS_OFF).backendOption(SimOptions.PTX, kernel);
        }
        gpu = b.open();
        GpuContract.loadContractModule(gpu);
        axpy = gpu.kernel(GpuContract.MODULE, "axpy_f32");
        stream = gpu.createStream(true);
        grid = LaunchConfig.forElements(n, BLOCK);
        x = gpu.alloc(4L * n);
        y = gpu.alloc(4L * n);
        float[] h = new float[n];
        for (int i = 0; i < n; i++) {
            h[i] = i * 0.5f;
        }
        gpu.copyH2D(h, x);
        gpu.copyH2D(h, y);
        args = new KernelArgs().f32(1.0e-3f).ptr(x).ptr(y).i32(n);
    }

    /** Releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.synchronize();
            gpu.free(x);
            gpu.free(y);
            gpu.destroyStream(stream);
            args.close();
            gpu.close();
        }
    }

    /**
     * One launch over {@code n} elements and its sync.
     *
     * @param threads the thread-invocation counter
     */
    @Benchmark
    public void axpy(Threads threads) {
        gpu.launch(axpy, grid, stream, args);
        gpu.synchronize(stream);
        threads.threads += n;
    }
}
