// SPDX-License-Identifier: Apache-2.0
package metrale.bench.sim;

import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import metrale.telemetry.Telemetry;
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
 * What each leak-detection level costs an alloc+free pair on the simulator, on the CPU:
 * nanoseconds per pair, by {@code level} ({@code off}, {@code sampled} at the default one in
 * {@value LeakDetection#DEFAULT_SAMPLE}, {@code all}) and {@code path}:
 *
 * <ul>
 *   <li>{@code driver}: {@code gpu.alloc} + {@code gpu.free} with {@code allocator=driver} (the
 *       simulator's {@code cuMemAlloc_v2}/{@code cuMemFree_v2}); a pair walks at most once, at the
 *       allocation;</li>
 *   <li>{@code pool}: {@code pool().alloc(bytes, s)} + {@code pool().free(p, s)} on the caching pool,
 *       a hit after the first pair. The simulator checks the pool's reuse for races, whose report names
 *       a block's previous free, so there a sampled pair walks at its free too.</li>
 * </ul>
 *
 * <p>{@code quarantineBytes} above 0 makes every free of a sampled pair walk (the quarantine's
 * reports say where memory was freed).
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar LeakDetectionBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class LeakDetectionBench {

    /** The level, as the settings table spells it. */
    @Param({"off", "sampled", "all"})
    public String level;

    /** {@code driver} or {@code pool}. */
    @Param({"driver", "pool"})
    public String path;

    /** The runtime's quarantine in bytes. */
    @Param({"0"})
    public long quarantineBytes;

    /** Bytes per allocation. */
    @Param({"4096"})
    public long bytes;

    private Gpu gpu;
    private boolean pooled;

    /** Creates the state; JMH calls it. */
    public LeakDetectionBench() {
    }

    /** Opens the runtime and warms its pool. */
    @Setup(Level.Trial)
    public void setUp() {
        pooled = "pool".equals(path);
        gpu = Gpu.builder().backend("sim").telemetry(new Telemetry()).leakDetection(LeakDetection.fromOption(level))
                .allocator(pooled ? "caching" : "driver").quarantineBytes(quarantineBytes).open();
        // Enough pairs to fill the quarantine, so measured pairs reuse what it gave back.
        for (long i = 0, warm = 2 + quarantineBytes / bytes; i < warm; i++) {
            pair();
        }
    }

    /** Closes the runtime. */
    @TearDown(Level.Trial)
    public void tearDown() {
        gpu.close();
    }

    /** {@return the pointer} One alloc+free pair. */
    @Benchmark
    public DevicePtr pair() {
        if (pooled) {
            DevicePtr d = gpu.pool().alloc(bytes, Stream.DEFAULT);
            gpu.pool().free(d, Stream.DEFAULT);
            return d;
        }
        DevicePtr d = gpu.alloc(bytes);
        gpu.free(d);
        return d;
    }
}
