// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuBuilder;
import metrale.gpu.LeakDetection;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Device allocation on CUDA: one op is an allocation and its free, through the runtime's ledger
 * against bare {@code cuMemAlloc_v2} + {@code cuMemFree_v2}, every runtime with
 * {@code allocator=driver} (a {@code cuMemAlloc} per allocation; the default, the caching pool, is
 * {@code PoolBench}'s). Score: nanoseconds per pair.
 *
 * <ul>
 *   <li>{@code bare}: the baseline.</li>
 *   <li>{@code ledger}: {@code gpu.alloc} + {@code gpu.free} with every call site walked
 *       ({@code leakDetection(ALL)}); red zones off; within 25% of {@code bare}.</li>
 *   <li>{@code ledgerNoSites}: the same with call sites off ({@code leakDetection(OFF)}), to show
 *       what the call-site walk costs.</li>
 *   <li>{@code redZones}: the default options plus a 256-byte red zone after every buffer, which
 *       the runtime fills with its pattern on alloc (one {@code cuMemsetD8}).</li>
 * </ul>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar AllocBench -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AllocBench extends CudaBench {

    /** Red-zone bytes in {@code redZones}. */
    public static final long RED_ZONE = 256;

    /** The allocation's size in bytes. */
    @Param({"1048576"})
    public long bytes;


    /** Creates the state; JMH calls it. */
    public AllocBench() {
    }

    /**
     * Opens CUDA with the options of the running benchmark.
     *
     * @param params which benchmark runs
     */
    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        String name = params.getBenchmark();
        GpuBuilder b = CudaFixture.telemetryOff().leakDetection(LeakDetection.ALL).allocator("driver");
        if (name.endsWith(".ledgerNoSites")) {
            b.leakDetection(LeakDetection.OFF);
        } else if (name.endsWith(".redZones")) {
            b.redZoneBytes(RED_ZONE).redZoneMinIndex(0);
        }
        gpu = CudaFixture.open(b);
        gpu.free(gpu.alloc(bytes));
        Bare.memFree(Bare.memAlloc(bytes));
    }

    /** Closes the runtime. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.close();
        }
    }

    /** The baseline: bare {@code cuMemAlloc_v2} + {@code cuMemFree_v2}. */
    @Benchmark
    public void bare() {
        Bare.memFree(Bare.memAlloc(bytes));
    }

    /** {@code gpu.alloc} + {@code gpu.free}, call sites recorded. */
    @Benchmark
    public void ledger() {
        DevicePtr p = gpu.alloc(bytes);
        gpu.free(p);
    }

    /** {@code gpu.alloc} + {@code gpu.free}, call sites off. */
    @Benchmark
    public void ledgerNoSites() {
        DevicePtr p = gpu.alloc(bytes);
        gpu.free(p);
    }

    /** {@code gpu.alloc} + {@code gpu.free} with a red zone after the buffer. */
    @Benchmark
    public void redZones() {
        DevicePtr p = gpu.alloc(bytes);
        gpu.free(p);
    }
}
