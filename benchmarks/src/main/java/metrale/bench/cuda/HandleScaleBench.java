// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import metrale.gpu.Gpu;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Whether the launch path's liveness checks stay O(1): the same {@code empty} launch on three
 * runtimes in one JVM, interleaved batch by batch as in {@link PairedBench}, one holding 1 kernel
 * handle, one 1,000 and one 10,000 (each of a generated module of that many entries, all looked
 * up), the last two with 1,000 live streams as well, beside the bare {@code cuLaunchKernel}.
 *
 * <p>Counters: {@code bareNs}, {@code k1Ns}, {@code k1000Ns}, {@code k10000Ns} (nanoseconds in
 * each variant's batches) and {@code ops} (launches per variant), so {@code k10000Ns / k1Ns} is the
 * ratio the target (within 2%) is about.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar HandleScaleBench -f 1}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class HandleScaleBench extends CudaBench {

    /** Launches per batch. */
    public static final int LAUNCHES = 128;
    /** Live streams in the two larger runtimes. */
    public static final int STREAMS = 1000;

    /** Nanoseconds per variant and launches per variant; reset each iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Nanos {
        /** The bare baseline. */
        public long bareNs;
        /** The runtime with one kernel handle. */
        public long k1Ns;
        /** The runtime with 1,000 kernel handles and 1,000 streams. */
        public long k1000Ns;
        /** The runtime with 10,000 kernel handles and 1,000 streams. */
        public long k10000Ns;
        /** Launches per variant. */
        public long ops;

        /** Creates the counters; JMH calls it. */
        public Nanos() {
        }

        /** Zeroes the counters. */
        @Setup(Level.Iteration)
        public void reset() {
            bareNs = 0;
            k1Ns = 0;
            k1000Ns = 0;
            k10000Ns = 0;
            ops = 0;
        }
    }

    private final Gpu[] runtimes = new Gpu[3];
    private final KernelHandle[] fns = new KernelHandle[3];
    private final Stream[] streams = new Stream[3];
    private final List<Stream> extraStreams = new ArrayList<>();
    private CudaFixture.BareKernels bareKernels;
    private KernelArgs args;
    private LaunchConfig config;
    private long func;
    private long st;
    private int round;

    /** Creates the state; JMH calls it. */
    public HandleScaleBench() {
    }

    /** Opens the three runtimes, loads and looks up the generated kernels, creates the streams. */
    @Setup(Level.Trial)
    public void setUp() {
        int[] kernels = {1, 1000, 10000};
        for (int r = 0; r < 3; r++) {
            Gpu g = CudaFixture.open(CudaFixture.telemetryOff());
            runtimes[r] = g;
            if (kernels[r] > 1) {
                g.loadModule("many", manyEntries(kernels[r]));
                for (int i = 0; i < kernels[r]; i++) {
                    g.kernel("many", "k" + i);
                }
                for (int i = 0; i < STREAMS; i++) {
                    extraStreams.add(g.createStream(true));
                }
            }
            fns[r] = g.kernel(CudaFixture.MODULE, "empty");
            streams[r] = g.createStream(true);
        }
        gpu = runtimes[0];
        gpu.bindToThread();
        bareKernels = CudaFixture.BareKernels.load();
        func = bareKernels.function("empty");
        st = bareKernels.stream();
        args = new KernelArgs();
        config = LaunchConfig.of(1, 128);
        for (int r = 0; r < 3; r++) {
            runtimes[r].launch(fns[r], config, streams[r], args);
        }
        Bare.ctxSynchronize();
    }

    /** PTX of {@code n} empty entries {@code k0 ... k(n-1)}. */
    private static byte[] manyEntries(int n) {
        StringBuilder sb = new StringBuilder(".version 9.0\n.target sm_90\n.address_size 64\n");
        for (int i = 0; i < n; i++) {
            sb.append(".visible .entry k").append(i).append("()\n{\n\tret;\n}\n");
        }
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        Bare.ctxSynchronize();
        if (bareKernels != null) {
            bareKernels.close();
        }
        if (args != null) {
            args.close();
        }
        for (Gpu g : runtimes) {
            if (g != null) {
                g.close();
            }
        }
    }

    private long bare() {
        Bare.ctxSynchronize();
        long t0 = System.nanoTime();
        for (int i = 0; i < LAUNCHES; i++) {
            Bare.launchKernel(func, 1, 1, 1, 128, 1, 1, 0, st, args.table());
        }
        return System.nanoTime() - t0;
    }

    private long runtime(int r) {
        Bare.ctxSynchronize();
        Gpu g = runtimes[r];
        KernelHandle f = fns[r];
        Stream s = streams[r];
        long t0 = System.nanoTime();
        for (int i = 0; i < LAUNCHES; i++) {
            g.launch(f, config, s, args);
        }
        return System.nanoTime() - t0;
    }

    /**
     * One batch of each variant, in a rotating order.
     *
     * @param n the counters
     */
    @Benchmark
    public void launch(Nanos n) {
        int first = round++ % 4;
        for (int k = 0; k < 4; k++) {
            switch ((first + k) % 4) {
                case 0 -> n.bareNs += bare();
                case 1 -> n.k1Ns += runtime(0);
                case 2 -> n.k1000Ns += runtime(1);
                default -> n.k10000Ns += runtime(2);
            }
        }
        n.ops += LAUNCHES;
    }
}
