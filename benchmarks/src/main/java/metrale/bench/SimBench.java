package metrale.bench;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimDevice;
import metrale.gpu.sim.SimKernels;
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
 * The simulator's speed, through the driver SPI ({@link SimDevice}) with no runtime core on top.
 *
 * <ul>
 *   <li>{@code axpyThreads}: a per-thread {@code y = a * x + y} twin over {@value #N} threads per
 *       launch, launch plus stream sync; the score is thread-invocations per second.</li>
 *   <li>{@code launchSync}: a one-thread kernel launched and its stream synchronized; the score is
 *       launch+sync pairs per second (the op rate a property test sees).</li>
 *   <li>{@code launchBatch}: {@value #BATCH} one-thread launches, then one sync; the score is
 *       launches per second.</li>
 * </ul>
 *
 * Run: {@code java -jar benchmarks/target/benchmarks.jar SimBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SimBench {

    /** Threads per axpy launch. */
    public static final int N = 1 << 20;
    /** Launches per {@code launchBatch} invocation. */
    public static final int BATCH = 1000;

    private SimDevice dev;
    private KernelArgs args;
    private long axpy;
    private long tiny;
    private long x;
    private long y;
    private long one;
    private long stream;

    /** Creates the benchmark state; JMH calls it. */
    public SimBench() {
    }

    /** Opens a device, registers the twins and fills the vectors. */
    @Setup(Level.Trial)
    public void setUp() {
        SimKernels.register("bench", "axpy", l -> {
            float a = l.f32(0);
            FloatView xs = l.floats(1);
            FloatView ys = l.floats(2);
            int n = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    ys.set(i, a * xs.get(i) + ys.get(i));
                }
            });
        });
        SimKernels.register("bench", "tiny", l -> l.floats(0).set(0, 1f));
        dev = new SimDevice();
        args = new KernelArgs();
        long module = dev.moduleLoadData("bench", SimKernels.image("bench"));
        axpy = dev.moduleGetFunction(module, "axpy");
        tiny = dev.moduleGetFunction(module, "tiny");
        x = dev.memAlloc(4L * N);
        y = dev.memAlloc(4L * N);
        one = dev.memAlloc(4);
        float[] host = new float[N];
        for (int i = 0; i < N; i++) {
            host[i] = i * 0.5f;
        }
        dev.memcpyHtoD(x, MemorySegment.ofArray(host), 4L * N);
        dev.memsetD8(y, 0, 4L * N);
        stream = dev.streamCreate(1);
        dev.ctxSynchronize();
    }

    /** Frees everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        args.close();
        dev.close();
    }

    /** One axpy launch of {@value #N} threads, then a stream sync. */
    @Benchmark
    @OperationsPerInvocation(N)
    public void axpyThreads() {
        args.clear().f32(1.0001f).ptr(x).ptr(y).i32(N);
        dev.launchKernel(axpy, LaunchConfig.of(N / 256, 256), stream, args);
        dev.streamSynchronize(stream);
    }

    /** One one-thread launch, then a stream sync. */
    @Benchmark
    public void launchSync() {
        args.clear().ptr(one);
        dev.launchKernel(tiny, LaunchConfig.of(1, 1), stream, args);
        dev.streamSynchronize(stream);
    }

    /** {@value #BATCH} one-thread launches, then one stream sync. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void launchBatch() {
        for (int i = 0; i < BATCH; i++) {
            args.clear().ptr(one);
            dev.launchKernel(tiny, LaunchConfig.of(1, 1), stream, args);
        }
        dev.streamSynchronize(stream);
    }
}
