// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LeakDetection;
import metrale.gpu.MemoryPool;
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
 * The memory pool against the driver's pairs, measured in one JVM and interleaved batch by batch
 * as {@link PairedBench} does, for the targets of a pool hit (alloc+free): sites off ≤ 0.15× the
 * driver's warm {@code cuMemAlloc_v2}+{@code cuMemFree_v2} pair, sites on ≤ 0.5×; and issue #22's
 * at 1 MiB: {@code Gpu.alloc}+{@code Gpu.free} of a runtime opened with the defaults ≤ 0.5×, and
 * below PyTorch's cache hit and CuPy's pool hit ({@code benchmarks/sidebyside}); with
 * {@code allocator=caching} and {@code leakDetection=all} ≤ 1.5×.
 *
 * <p>Each invocation of {@code pair} times one batch of {@value #PAIRS} alloc+free pairs of
 * {@code bytes} per variant, rotating which goes first; the {@link Nanos} counters hold the
 * nanoseconds per variant and {@code ops}, so {@code poolOffNs / bareNs} is a ratio and
 * {@code bareNs / ops} the time per pair:
 * <ul>
 *   <li>{@code bareNs}: {@code cuMemAlloc_v2} + {@code cuMemFree_v2} through bare handles;</li>
 *   <li>{@code asyncNs}: {@code cuMemAllocAsync} + {@code cuMemFreeAsync} through bare handles, on
 *       the runtime's stream, with the default pool's release threshold raised (so it caches);</li>
 *   <li>{@code poolOffNs}: {@code pool().alloc(bytes, s)} + {@code pool().free(p, s)} with sites off (hits);</li>
 *   <li>{@code poolOnNs}: the same with call sites on, every allocation walked (the default);</li>
 *   <li>{@code poolSampledNs}: the same with one site in 64 walked;</li>
 *   <li>{@code poolCudaNs}: the pool over {@code cuMemAllocAsync} ({@code allocator=cuda}), sites off;</li>
 *   <li>{@code defaultsNs}: {@code gpu.alloc(bytes)} + {@code gpu.free(p)} of a runtime opened with
 *       no option at all (so no allocator, leak-detection, quarantine or telemetry option: whatever
 *       the defaults, and the host's {@code metrale.*} properties and {@code METRALE_*} variables,
 *       say);</li>
 *   <li>{@code cachingAllNs}: the same with only {@code allocator=caching} and
 *       {@code leakDetection=all} given, so every allocation's site is walked.</li>
 * </ul>
 * The last two take no {@code quarantineBytes}: their two rows per size are repeats. Their
 * allocations go through {@code Gpu.alloc}, on the default stream, as an application's do.
 * {@code driverAllocs} counts the caching pools' driver allocations during measured batches (the
 * defaults runtime's only where its allocator is a pool): a pool hit calls none, so it reads 0.
 *
 * <p>{@code step} is a steady-state step: {@value #STEP_BLOCKS} allocations of mixed sizes on one
 * stream, a kernel-free use, then their frees, through the caching pool with sites off;
 * {@code driverAllocs} must stay 0 after the first step.
 *
 * <p>{@code quarantineBytes} is the pool runtimes' quarantine: freed blocks wait there before the
 * pool may reuse them, so a pair with it on is a hit on a block freed {@code quarantineBytes / bytes}
 * pairs before, plus a held range given back to the pool. The target: {@code poolOffNs} with
 * 64 MiB within 1.2x of {@code poolOffNs} with 0 at 1 MiB. The pools are warmed until the
 * quarantine is full, so {@code driverAllocs} reads 0 with it on too.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar PoolBench -f 2}; for
 * the quarantine alone, {@code -p bytes=1048576}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PoolBench extends CudaBench {

    /** Alloc+free pairs per batch. */
    public static final int PAIRS = 16;
    /** Blocks per steady-state step. */
    public static final int STEP_BLOCKS = 12;

    /** Bytes per allocation, for the plot of pair cost by size. */
    @Param({"4096", "65536", "1048576", "16777216"})
    public long bytes;

    /** The pool runtimes' quarantine in bytes: off, and the 64 MiB red zones default to. */
    @Param({"0", "67108864"})
    public long quarantineBytes;

    /** Nanoseconds per variant, summed over an iteration, and ops per variant. Reset each iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Nanos {
        /** Bare {@code cuMemAlloc_v2} + {@code cuMemFree_v2}. */
        public long bareNs;
        /** Bare {@code cuMemAllocAsync} + {@code cuMemFreeAsync}. */
        public long asyncNs;
        /** The caching pool, sites off. */
        public long poolOffNs;
        /** The caching pool, sites on. */
        public long poolOnNs;
        /** The caching pool, one site in 64. */
        public long poolSampledNs;
        /** The pool over {@code cuMemAllocAsync}, sites off. */
        public long poolCudaNs;
        /** {@code Gpu.alloc} + {@code Gpu.free}, the runtime opened with the defaults. */
        public long defaultsNs;
        /** {@code Gpu.alloc} + {@code Gpu.free}, {@code allocator=caching} and {@code leakDetection=all}. */
        public long cachingAllNs;
        /** Driver allocations by the caching pools during measured batches. */
        public long driverAllocs;
        /** Pairs per variant. */
        public long ops;

        /** Creates the counters; JMH calls it. */
        public Nanos() {
        }

        /** Zeroes the counters. */
        @Setup(Level.Iteration)
        public void reset() {
            bareNs = 0;
            asyncNs = 0;
            poolOffNs = 0;
            poolOnNs = 0;
            poolSampledNs = 0;
            poolCudaNs = 0;
            defaultsNs = 0;
            cachingAllNs = 0;
            driverAllocs = 0;
            ops = 0;
        }
    }

    private Gpu off;
    private Gpu sampled;
    private Gpu cuda;
    private Gpu defaults;
    private Gpu cachingAll;
    private Stream stream;
    private Stream offStream;
    private Stream sampledStream;
    private Stream cudaStream;
    private CudaFixture.BareKernels bareKernels;
    private long st;
    private int round;
    private final DevicePtr[] step = new DevicePtr[STEP_BLOCKS];

    /** Creates the state; JMH calls it. */
    public PoolBench() {
    }

    /**
     * Opens six runtimes (pool sites on, off, sampled; {@code allocator=cuda}; the defaults; caching
     * with every site) and warms each pool.
     */
    @Setup(Level.Trial)
    public void setUp() {
        gpu = CudaFixture.open(CudaFixture.telemetryOff().leakDetection(LeakDetection.ALL).quarantineBytes(quarantineBytes));
        off = CudaFixture.open(CudaFixture.telemetryOff().leakDetection(LeakDetection.OFF).quarantineBytes(quarantineBytes));
        sampled = CudaFixture.open(CudaFixture.telemetryOff().leakDetection(LeakDetection.SAMPLED).leakDetectionSample(64)
                .quarantineBytes(quarantineBytes));
        cuda = CudaFixture.open(CudaFixture.telemetryOff().leakDetection(LeakDetection.OFF).allocator("cuda")
                .quarantineBytes(quarantineBytes));
        defaults = CudaFixture.open(Gpu.builder());
        cachingAll = CudaFixture.open(Gpu.builder().allocator("caching").leakDetection(LeakDetection.ALL));
        stream = gpu.createStream(true);
        offStream = off.createStream(true);
        sampledStream = sampled.createStream(true);
        cudaStream = cuda.createStream(true);
        // The bare cuMemAllocAsync baseline needs a driver stream of its own: runtime handles are opaque.
        bareKernels = CudaFixture.BareKernels.load();
        st = bareKernels.stream();
        // Enough batches to fill the quarantine, so measured pairs reuse blocks it gave back.
        long warm = 2 + quarantineBytes / bytes / PAIRS + 1;
        for (long i = 0; i < warm; i++) {
            pool(gpu.pool(), stream);
            pool(off.pool(), offStream);
            pool(sampled.pool(), sampledStream);
            pool(cuda.pool(), cudaStream);
            alloc(defaults);
            alloc(cachingAll);
            bareAsync();
        }
    }

    /** Releases everything. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (bareKernels != null) {
            bareKernels.close();
        }
        for (Gpu g : new Gpu[] {gpu, off, sampled, cuda, defaults, cachingAll}) {
            if (g != null) {
                g.synchronize();
                g.close();
            }
        }
    }

    private long bare() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIRS; i++) {
            Bare.memFree(Bare.memAlloc(bytes));
        }
        return System.nanoTime() - t0;
    }

    private long bareAsync() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIRS; i++) {
            Bare.memFreeAsync(Bare.memAllocAsync(bytes, st), st);
        }
        return System.nanoTime() - t0;
    }

    private long pool(MemoryPool p, Stream s) {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIRS; i++) {
            p.free(p.alloc(bytes, s), s);
        }
        return System.nanoTime() - t0;
    }

    private long alloc(Gpu g) {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIRS; i++) {
            g.free(g.alloc(bytes));
        }
        return System.nanoTime() - t0;
    }

    private long cachingDriverAllocs() {
        return gpu.pool().stats().driverAllocs() + off.pool().stats().driverAllocs()
                + sampled.pool().stats().driverAllocs() + defaults.pool().stats().driverAllocs()
                + cachingAll.pool().stats().driverAllocs();
    }

    /**
     * One batch of each variant, in a rotating order.
     *
     * @param n the counters
     */
    @Benchmark
    public void pair(Nanos n) {
        long before = cachingDriverAllocs();
        int r = round++ % 8;
        for (int k = 0; k < 8; k++) {
            switch ((r + k) % 8) {
                case 0 -> n.bareNs += bare();
                case 1 -> n.asyncNs += bareAsync();
                case 2 -> n.poolOffNs += pool(off.pool(), offStream);
                case 3 -> n.poolOnNs += pool(gpu.pool(), stream);
                case 4 -> n.poolSampledNs += pool(sampled.pool(), sampledStream);
                case 5 -> n.poolCudaNs += pool(cuda.pool(), cudaStream);
                case 6 -> n.defaultsNs += alloc(defaults);
                default -> n.cachingAllNs += alloc(cachingAll);
            }
        }
        n.driverAllocs += cachingDriverAllocs() - before;
        n.ops += PAIRS;
    }

    /**
     * One steady-state step through the caching pool with sites off.
     *
     * @param n the counters ({@code driverAllocs}, {@code ops})
     */
    @Benchmark
    public void step(Nanos n) {
        MemoryPool p = off.pool();
        long before = p.stats().driverAllocs();
        long t0 = System.nanoTime();
        for (int i = 0; i < STEP_BLOCKS; i++) {
            step[i] = p.alloc(bytes >> (i % 4), offStream);
        }
        for (int i = STEP_BLOCKS - 1; i >= 0; i--) {
            p.free(step[i], offStream);
        }
        n.poolOffNs += System.nanoTime() - t0;
        n.driverAllocs += p.stats().driverAllocs() - before;
        n.ops += STEP_BLOCKS;
    }
}
