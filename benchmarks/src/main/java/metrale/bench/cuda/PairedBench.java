// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import metrale.gpu.Gpu;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import metrale.telemetry.LaunchTrace;
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
 * The runtime and its bare baseline measured in the same JVM, interleaved batch by batch, for the
 * ratios with tight targets (launch ≤ 1.03×, trace ≤ 1.10×, graph ≤ 1.03×, alloc ≤ 1.25×).
 *
 * <p><b>Why.</b> The separate benchmarks ({@link LaunchBench}, {@link GraphBench},
 * {@link AllocBench}) run each variant in its own JVM, minutes apart; on the H200 the bare
 * {@code cuLaunchKernel} itself moved by about 10% from one JVM to the next (the driver's and
 * the GPU's state: clocks, queue placement), more than the 3% being tested. Here each invocation
 * times one batch of each variant back to back with {@link System#nanoTime()}, rotating which goes
 * first, so every variant sees the same driver and GPU state, and the page takes the ratio of the
 * summed times.
 *
 * <p><b>Reading the results.</b> The primary score (time per invocation) is not used. The
 * {@link Nanos} counters are JMH secondary results: {@code bareNs}, {@code offNs}, {@code traceNs}
 * are nanoseconds spent in each variant's batches, {@code ops} the ops per variant (the same for
 * every variant), so {@code offNs / bareNs} is the ratio and {@code bareNs / ops} the time per op.
 *
 * <ul>
 *   <li>{@code launch}: batches of {@value #LAUNCHES} launches of {@code kernel}, bare
 *       {@code cuLaunchKernel}, {@code gpu.launch} with telemetry off, and with the launch trace
 *       on ({@code begin()} before, {@code endAndDiff} after, both untimed); the stream synchronized
 *       (untimed) before each batch, as in {@link LaunchBench}.</li>
 *   <li>{@code graph}: batches of {@value #GRAPHS} launches of a 100-kernel graph, bare
 *       {@code cuGraphLaunch} ({@code bareNs}) and {@code gpu.launchGraph} ({@code offNs}).</li>
 *   <li>{@code alloc}: batches of {@value #ALLOCS} 1 MiB alloc+free pairs, bare
 *       ({@code bareNs}), through the ledger with call sites ({@code offNs}), and through the ledger
 *       without call sites ({@code traceNs}, reused for that third variant).</li>
 *   <li>{@code copy}: batches of {@value #COPIES} synchronous {@value #COPY_BYTES}-byte copies
 *       host to device and as many device to host, between page-locked host memory and a ledger
 *       allocation: bare {@code cuMemcpyHtoD_v2}/{@code cuMemcpyDtoH_v2} ({@code bareNs}) and
 *       {@code gpu.copyH2D}/{@code gpu.copyD2H} with their range checks ({@code offNs}).</li>
 * </ul>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar PairedBench -f 2}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PairedBench extends CudaBench {

    /** Kernel launches per batch. */
    public static final int LAUNCHES = 128;
    /** Graph launches per batch. */
    public static final int GRAPHS = 16;
    /** Alloc+free pairs per batch. */
    public static final int ALLOCS = 16;
    /** Bytes per allocation. */
    public static final long ALLOC_BYTES = 1 << 20;
    /** Copies per batch, each way. */
    public static final int COPIES = 32;
    /** Bytes per copy. */
    public static final long COPY_BYTES = 4096;

    /** Which kernel {@code launch} uses: {@code empty} or {@code axpy4}. */
    @Param({"empty", "axpy4"})
    public String kernel;

    /**
     * Nanoseconds per variant, summed over an iteration, and the ops each variant did; JMH
     * reports each field as a secondary result. Reset at each iteration.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Nanos {
        /** Nanoseconds in the bare baseline's batches. */
        public long bareNs;
        /** Nanoseconds in the runtime's batches (telemetry off; for alloc, with call sites). */
        public long offNs;
        /** Nanoseconds in the third variant's batches (launch: trace on; alloc: no call sites; graph: none). */
        public long traceNs;
        /** Ops per variant. */
        public long ops;

        /** Creates the counters; JMH calls it. */
        public Nanos() {
        }

        /** Zeroes the counters. */
        @Setup(Level.Iteration)
        public void reset() {
            bareNs = 0;
            offNs = 0;
            traceNs = 0;
            ops = 0;
        }
    }

    private Gpu gpuNoSites;
    private KernelHandle fn;
    private LaunchConfig config;
    private Stream stream;
    private BenchArgs launchArgs;
    private KernelArgs args;
    private LaunchTrace trace;
    private GraphHandle graph;
    private long[] bareGraph;
    private CudaFixture.BareKernels bare;
    private long func;
    private int gx;
    private int bx;
    private long st;
    private MemorySegment table;
    private MemorySegment pinnedHost;
    private metrale.gpu.DevicePtr copyDst;
    private int round;

    /** Creates the state; JMH calls it. */
    public PairedBench() {
    }

    /** Opens CUDA (telemetry off, every call site walked), loads the kernel, captures the graphs. */
    @Setup(Level.Trial)
    public void setUp() {
        gpu = CudaFixture.open(CudaFixture.telemetryOff().leakDetection(LeakDetection.ALL).allocator("driver"));
        gpuNoSites = CudaFixture.open(CudaFixture.telemetryOff().leakDetection(LeakDetection.OFF).allocator("driver"));
        fn = gpu.kernel(CudaFixture.MODULE, kernel);
        config = LaunchConfig.of(1, 128);
        gx = config.grid().x();
        bx = config.block().x();
        stream = gpu.createStream(true);
        bare = CudaFixture.BareKernels.load();
        st = bare.stream();
        launchArgs = BenchArgs.of(gpu, kernel);
        args = launchArgs.args();
        func = bare.function(kernel);
        table = args.table();
        trace = gpu.telemetry().trace();

        KernelHandle empty = gpu.kernel(CudaFixture.MODULE, "empty");
        KernelArgs none = new KernelArgs();
        graph = CudaFixture.captureChain(gpu, empty, config, stream, none, GraphBench.KERNELS);
        bareGraph = CudaFixture.captureBareChain(bare.function("empty"), config, st, none, GraphBench.KERNELS);
        none.close();
        gpu.launchGraph(graph, stream);
        Bare.graphLaunch(bareGraph[1], st);
        gpu.launch(fn, config, stream, args);
        Bare.launchKernel(func, gx, 1, 1, bx, 1, 1, 0, st, table);
        Bare.ctxSynchronize();
        pinnedHost = gpu.allocHostPinned(COPY_BYTES);
        copyDst = gpu.alloc(COPY_BYTES);
    }

    /** Releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.synchronize(stream);
            gpu.destroyGraph(graph);
            Bare.destroyGraph(bareGraph);
            bare.close();
            gpu.free(copyDst);
            gpu.freeHostPinned(pinnedHost);
            launchArgs.close();
            gpu.destroyStream(stream);
            gpu.close();
            gpuNoSites.close();
        }
    }

    private long bareLaunches() {
        Bare.ctxSynchronize();
        long t0 = System.nanoTime();
        for (int i = 0; i < LAUNCHES; i++) {
            Bare.launchKernel(func, gx, 1, 1, bx, 1, 1, 0, st, table);
        }
        return System.nanoTime() - t0;
    }

    private long runtimeLaunches() {
        Bare.ctxSynchronize();
        long t0 = System.nanoTime();
        for (int i = 0; i < LAUNCHES; i++) {
            gpu.launch(fn, config, stream, args);
        }
        return System.nanoTime() - t0;
    }

    private long tracedLaunches() {
        Bare.ctxSynchronize();
        trace.begin();
        long t0 = System.nanoTime();
        for (int i = 0; i < LAUNCHES; i++) {
            gpu.launch(fn, config, stream, args);
        }
        long t = System.nanoTime() - t0;
        trace.endAndDiff(0);
        return t;
    }

    /**
     * One batch of each launch variant, in a rotating order.
     *
     * @param n the counters
     */
    @Benchmark
    public void launch(Nanos n) {
        switch (round++ % 3) {
            case 0 -> {
                n.bareNs += bareLaunches();
                n.offNs += runtimeLaunches();
                n.traceNs += tracedLaunches();
            }
            case 1 -> {
                n.offNs += runtimeLaunches();
                n.traceNs += tracedLaunches();
                n.bareNs += bareLaunches();
            }
            default -> {
                n.traceNs += tracedLaunches();
                n.bareNs += bareLaunches();
                n.offNs += runtimeLaunches();
            }
        }
        n.ops += LAUNCHES;
    }

    private long bareGraphs() {
        Bare.ctxSynchronize();
        long exec = bareGraph[1];
        long t0 = System.nanoTime();
        for (int i = 0; i < GRAPHS; i++) {
            Bare.graphLaunch(exec, st);
        }
        return System.nanoTime() - t0;
    }

    private long runtimeGraphs() {
        Bare.ctxSynchronize();
        long t0 = System.nanoTime();
        for (int i = 0; i < GRAPHS; i++) {
            gpu.launchGraph(graph, stream);
        }
        return System.nanoTime() - t0;
    }

    /**
     * One batch of each graph variant, alternating which goes first.
     *
     * @param n the counters
     */
    @Benchmark
    public void graph(Nanos n) {
        if ((round++ & 1) == 0) {
            n.bareNs += bareGraphs();
            n.offNs += runtimeGraphs();
        } else {
            n.offNs += runtimeGraphs();
            n.bareNs += bareGraphs();
        }
        n.ops += GRAPHS;
    }

    private static long bareAllocs() {
        long t0 = System.nanoTime();
        for (int i = 0; i < ALLOCS; i++) {
            Bare.memFree(Bare.memAlloc(ALLOC_BYTES));
        }
        return System.nanoTime() - t0;
    }

    private static long ledgerAllocs(Gpu g) {
        long t0 = System.nanoTime();
        for (int i = 0; i < ALLOCS; i++) {
            g.free(g.alloc(ALLOC_BYTES));
        }
        return System.nanoTime() - t0;
    }

    /**
     * One batch of each allocation variant, in a rotating order.
     *
     * @param n the counters
     */
    @Benchmark
    public void alloc(Nanos n) {
        switch (round++ % 3) {
            case 0 -> {
                n.bareNs += bareAllocs();
                n.offNs += ledgerAllocs(gpu);
                n.traceNs += ledgerAllocs(gpuNoSites);
            }
            case 1 -> {
                n.offNs += ledgerAllocs(gpu);
                n.traceNs += ledgerAllocs(gpuNoSites);
                n.bareNs += bareAllocs();
            }
            default -> {
                n.traceNs += ledgerAllocs(gpuNoSites);
                n.bareNs += bareAllocs();
                n.offNs += ledgerAllocs(gpu);
            }
        }
        n.ops += ALLOCS;
    }

    private long bareCopies() {
        long d = copyDst.address();
        long t0 = System.nanoTime();
        for (int i = 0; i < COPIES; i++) {
            Bare.memcpyHtoD(d, pinnedHost, COPY_BYTES);
            Bare.memcpyDtoH(pinnedHost, d, COPY_BYTES);
        }
        return System.nanoTime() - t0;
    }

    private long runtimeCopies() {
        long t0 = System.nanoTime();
        for (int i = 0; i < COPIES; i++) {
            gpu.copyH2D(pinnedHost, copyDst);
            gpu.copyD2H(copyDst, pinnedHost);
        }
        return System.nanoTime() - t0;
    }

    /**
     * One batch of each copy variant, alternating which goes first.
     *
     * @param n the counters
     */
    @Benchmark
    public void copy(Nanos n) {
        if ((round++ & 1) == 0) {
            n.bareNs += bareCopies();
            n.offNs += runtimeCopies();
        } else {
            n.offNs += runtimeCopies();
            n.bareNs += bareCopies();
        }
        n.ops += 2L * COPIES;
    }
}
