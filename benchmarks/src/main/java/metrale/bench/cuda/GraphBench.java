// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.util.concurrent.TimeUnit;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Graph replay on CUDA: {@code gpu.launchGraph} against {@code cuGraphLaunch} through a bare
 * downcall handle. Score: nanoseconds of host time per graph launch.
 *
 * <p>The graph is {@value #KERNELS} launches of the {@code empty} kernel (one block of 128
 * threads) on one stream. The runtime's graph is captured through the runtime
 * ({@code beginCapture}, {@code launch}, {@code endCapture}); the baseline's is captured from the
 * same launches through the bare binding and instantiated there, so the baseline touches no
 * runtime code at all. Both are the same 100-node chain, instantiated with the same flags (0).
 *
 * <p><b>Method.</b> As in {@link LaunchBench}: an invocation enqueues {@value #BATCH} graph
 * launches (far below the queue's depth), the stream is synchronized in a {@code Level.Invocation}
 * setup outside the timed region, so the score is the host's enqueue and not the GPU's
 * execution of the 100 kernels.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar GraphBench -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GraphBench extends CudaBench {

    /** Kernel launches in the graph. */
    public static final int KERNELS = 100;

    /** Graph launches per invocation. */
    public static final int BATCH = 16;

    private Stream stream;
    private KernelArgs args;
    private GraphHandle graph;
    private long[] bareGraph;
    private CudaFixture.BareKernels bareKernels;
    private long exec;
    private long st;

    /** Creates the state; JMH calls it. */
    public GraphBench() {
    }

    /** Opens CUDA with telemetry off and captures both graphs. */
    @Setup(Level.Trial)
    public void setUp() {
        gpu = CudaFixture.open(CudaFixture.telemetryOff());
        KernelHandle fn = gpu.kernel(CudaFixture.MODULE, "empty");
        LaunchConfig config = LaunchConfig.of(1, 128);
        stream = gpu.createStream(true);
        bareKernels = CudaFixture.BareKernels.load();
        st = bareKernels.stream();
        args = new KernelArgs();
        graph = CudaFixture.captureChain(gpu, fn, config, stream, args, KERNELS);
        bareGraph = CudaFixture.captureBareChain(bareKernels.function("empty"), config, st, args, KERNELS);
        exec = bareGraph[1];

        // A first replay of each, so neither pays the driver's first-upload cost in a measurement.
        gpu.launchGraph(graph, stream);
        Bare.graphLaunch(exec, st);
        Bare.ctxSynchronize();
    }

    /** Drains the stream before each batch; not timed. */
    @Setup(Level.Invocation)
    public void drain() {
        Bare.ctxSynchronize();
    }

    /** Releases both graphs and the runtime. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.synchronize(stream);
            gpu.destroyGraph(graph);
            Bare.destroyGraph(bareGraph);
            bareKernels.close();
            gpu.destroyStream(stream);
            args.close();
            gpu.close();
        }
    }

    /** The baseline: {@code cuGraphLaunch} through a bare downcall handle. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void bare() {
        for (int i = 0; i < BATCH; i++) {
            Bare.graphLaunch(exec, st);
        }
    }

    /** {@code gpu.launchGraph}. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void launchGraph() {
        for (int i = 0; i < BATCH; i++) {
            gpu.launchGraph(graph, stream);
        }
    }
}
