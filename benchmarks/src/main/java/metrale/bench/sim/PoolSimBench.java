// SPDX-License-Identifier: Apache-2.0
package metrale.bench.sim;

import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LeakDetection;
import metrale.gpu.MemoryPool;
import metrale.gpu.Stream;
import metrale.telemetry.Telemetry;
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
 * The memory pool on the simulator, on the CPU: the runtime's own cost of a pool hit (alloc+free)
 * against the ledger over the simulator's driver allocation, by size; nanoseconds per pair.
 *
 * <ul>
 *   <li>{@code driver}: {@code gpu.alloc} + {@code gpu.free} with {@code allocator=driver}, sites off
 *       (the simulator's {@code cuMemAlloc_v2}/{@code cuMemFree_v2}, which map and unmap native memory);</li>
 *   <li>{@code poolOff}, {@code poolOn}, {@code poolSampled}: {@code pool().alloc(bytes, s)} +
 *       {@code pool().free(p, s)} with sites off, on (every allocation walked), one in 64;</li>
 *   <li>{@code step}: a steady-state step of {@value #STEP_BLOCKS} blocks of mixed sizes through the
 *       caching pool, sites off; the {@code driverAllocs} counter must read 0.</li>
 * </ul>
 *
 * <p>The pool over the simulator's {@code cuMemAllocAsync} is left out: that allocator caches
 * nothing and frees at the next sync, so it would measure the simulator's native mapping.
 *
 * <p>{@code quarantineBytes} is the pool runtimes' quarantine (off, and the 64 MiB red zones
 * default to): a smoke run of what {@code PoolBench} measures on the GPU.
 *
 * <p>Run: {@code java -jar benchmarks.jar PoolSimBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PoolSimBench {

    /** Blocks per steady-state step. */
    public static final int STEP_BLOCKS = 12;

    /** Bytes per allocation. */
    @Param({"4096", "1048576", "16777216"})
    public long bytes;

    /** The pool runtimes' quarantine in bytes. */
    @Param({"0", "67108864"})
    public long quarantineBytes;

    /** Driver allocations counted during the step benchmark. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Calls {
        /** Driver allocations by the pool during measured steps. */
        public long driverAllocs;

        /** Creates the counter; JMH calls it. */
        public Calls() {
        }

        /** Zeroes the counter. */
        @Setup(Level.Iteration)
        public void reset() {
            driverAllocs = 0;
        }
    }

    private Gpu plain;
    private Gpu off;
    private Gpu on;
    private Gpu sampled;
    private Stream s;
    private final DevicePtr[] step = new DevicePtr[STEP_BLOCKS];

    /** Creates the state; JMH calls it. */
    public PoolSimBench() {
    }

    private Gpu open(LeakDetection level, int sample, String allocator) {
        return Gpu.builder().backend("sim").telemetry(new Telemetry()).leakDetection(level).leakDetectionSample(sample)
                .allocator(allocator).quarantineBytes(quarantineBytes).open();
    }

    /** Opens the runtimes and warms the pools. */
    @Setup(Level.Trial)
    public void setUp() {
        plain = open(LeakDetection.OFF, 1, "driver");
        off = open(LeakDetection.OFF, 1, "caching");
        on = open(LeakDetection.ALL, 1, "caching");
        sampled = open(LeakDetection.SAMPLED, 64, "caching");
        s = Stream.DEFAULT;
        // Enough pairs to fill the quarantine, so measured pairs reuse blocks it gave back.
        long warm = 1 + quarantineBytes / bytes + 1;
        for (Gpu g : new Gpu[] {off, on, sampled}) {
            for (long i = 0; i < warm; i++) {
                g.pool().free(g.pool().alloc(bytes, s), s);
            }
        }
    }

    /** Closes the runtimes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        for (Gpu g : new Gpu[] {plain, off, on, sampled}) {
            g.close();
        }
    }

    private DevicePtr pair(Gpu g) {
        MemoryPool p = g.pool();
        DevicePtr d = p.alloc(bytes, s);
        p.free(d, s);
        return d;
    }

    /** {@return the pointer} One driver alloc+free through the ledger. */
    @Benchmark
    public DevicePtr driver() {
        DevicePtr d = plain.alloc(bytes);
        plain.free(d);
        return d;
    }

    /** {@return the pointer} One pool hit, sites off. */
    @Benchmark
    public DevicePtr poolOff() {
        return pair(off);
    }

    /** {@return the pointer} One pool hit, sites on. */
    @Benchmark
    public DevicePtr poolOn() {
        return pair(on);
    }

    /** {@return the pointer} One pool hit, one site in 64. */
    @Benchmark
    public DevicePtr poolSampled() {
        return pair(sampled);
    }

    /**
     * One steady-state step through the caching pool, sites off.
     *
     * @param c the driver-allocation counter
     */
    @Benchmark
    public void step(Calls c) {
        MemoryPool p = off.pool();
        long before = p.stats().driverAllocs();
        for (int i = 0; i < STEP_BLOCKS; i++) {
            step[i] = p.alloc(bytes >> (i % 4), s);
        }
        for (int i = STEP_BLOCKS - 1; i >= 0; i--) {
            p.free(step[i], s);
        }
        c.driverAllocs += p.stats().driverAllocs() - before;
    }
}
