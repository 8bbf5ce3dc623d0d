// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Copies on CUDA, through the runtime against bare driver calls. Score: nanoseconds per copy.
 *
 * <p>Small blocking copies of {@value #SMALL} bytes, host to device ({@code h2d...}) and device to
 * host ({@code d2h...}), from three kinds of host memory:
 * <ul>
 *   <li>{@code Heap}: a Java {@code byte[]} ({@code copyH2D(byte[])}); the runtime stages it through
 *       native memory, since the driver cannot read the moving Java heap;</li>
 *   <li>{@code Native}: pageable native memory from an {@link Arena} (not page-locked);</li>
 *   <li>{@code Pinned}: page-locked memory from {@code gpu.allocHostPinned}.</li>
 * </ul>
 * The baselines {@code h2dBareNative}, {@code h2dBarePinned} (and {@code d2h...}) call
 * {@code cuMemcpyHtoD_v2} / {@code cuMemcpyDtoH_v2} through bare handles on the same native or
 * pinned memory; the heap variant is compared with the native baseline, the cheapest way the
 * same bytes could reach the driver.
 *
 * <p>Large device-to-device copies ({@code d2d}, {@code d2dBare}): {@value #LARGE} bytes with
 * {@code copyD2D} then {@code synchronize()}, against {@code cuMemcpyDtoD_v2} then
 * {@code cuCtxSynchronize}; the page turns the time into bandwidth counting bytes read plus
 * bytes written (2 × {@value #LARGE} per copy).
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar CopyBench -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CopyBench extends CudaBench {

    /** Bytes of a small copy. */
    public static final int SMALL = 4096;

    /** Bytes of a large device-to-device copy (1 GiB). */
    public static final long LARGE = 1L << 30;

    private Arena arena;
    private DevicePtr dev;
    private long devAddr;
    private byte[] heap;
    private MemorySegment nat;
    private MemorySegment pinned;
    private DevicePtr bigSrc;
    private DevicePtr bigDst;

    /** Creates the state; JMH calls it. */
    public CopyBench() {
    }

    /**
     * Opens CUDA with telemetry off and allocates the buffers of the running benchmark.
     *
     * @param params which benchmark runs
     */
    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        gpu = CudaFixture.open(CudaFixture.telemetryOff());
        arena = Arena.ofShared();
        dev = gpu.alloc(SMALL);
        devAddr = dev.address();
        heap = new byte[SMALL];
        nat = arena.allocate(SMALL, 64);
        pinned = gpu.allocHostPinned(SMALL);
        for (int i = 0; i < SMALL; i++) {
            heap[i] = (byte) (i * 31 + 7);
        }
        nat.copyFrom(MemorySegment.ofArray(heap));
        pinned.copyFrom(MemorySegment.ofArray(heap));
        if (params.getBenchmark().contains(".d2d")) {
            bigSrc = gpu.alloc(LARGE);
            bigDst = gpu.alloc(LARGE);
            gpu.memset(bigSrc, 0x5a, LARGE);
            gpu.copyD2D(bigSrc, bigDst, LARGE);
            gpu.synchronize();
        }
    }

    /** Frees everything and closes the runtime. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (gpu != null) {
            gpu.synchronize();
            if (bigSrc != null) {
                gpu.free(bigSrc);
                gpu.free(bigDst);
            }
            gpu.free(dev);
            gpu.freeHostPinned(pinned);
            arena.close();
            gpu.close();
        }
    }

    /** Baseline: bare {@code cuMemcpyHtoD_v2} from pageable native memory. */
    @Benchmark
    public void h2dBareNative() {
        Bare.memcpyHtoD(devAddr, nat, SMALL);
    }

    /** Baseline: bare {@code cuMemcpyHtoD_v2} from page-locked memory. */
    @Benchmark
    public void h2dBarePinned() {
        Bare.memcpyHtoD(devAddr, pinned, SMALL);
    }

    /** {@code gpu.copyH2D(byte[], ...)}. */
    @Benchmark
    public void h2dHeap() {
        gpu.copyH2D(heap, dev);
    }

    /** {@code gpu.copyH2D(MemorySegment, ...)} from pageable native memory. */
    @Benchmark
    public void h2dNative() {
        gpu.copyH2D(nat, dev);
    }

    /** {@code gpu.copyH2D(MemorySegment, ...)} from page-locked memory. */
    @Benchmark
    public void h2dPinned() {
        gpu.copyH2D(pinned, dev);
    }

    /** Baseline: bare {@code cuMemcpyDtoH_v2} into pageable native memory. */
    @Benchmark
    public void d2hBareNative() {
        Bare.memcpyDtoH(nat, devAddr, SMALL);
    }

    /** Baseline: bare {@code cuMemcpyDtoH_v2} into page-locked memory. */
    @Benchmark
    public void d2hBarePinned() {
        Bare.memcpyDtoH(pinned, devAddr, SMALL);
    }

    /** {@code gpu.copyD2H(..., byte[])}. */
    @Benchmark
    public void d2hHeap() {
        gpu.copyD2H(dev, heap);
    }

    /** {@code gpu.copyD2H(..., MemorySegment)} into pageable native memory. */
    @Benchmark
    public void d2hNative() {
        gpu.copyD2H(dev, nat);
    }

    /** {@code gpu.copyD2H(..., MemorySegment)} into page-locked memory. */
    @Benchmark
    public void d2hPinned() {
        gpu.copyD2H(dev, pinned);
    }

    /** Baseline: bare {@code cuMemcpyDtoD_v2} of 1 GiB, then {@code cuCtxSynchronize}. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void d2dBare() {
        Bare.memcpyDtoD(bigDst.address(), bigSrc.address(), LARGE);
        Bare.ctxSynchronize();
    }

    /** {@code gpu.copyD2D} of 1 GiB, then {@code gpu.synchronize()}. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void d2d() {
        gpu.copyD2D(bigSrc, bigDst, LARGE);
        gpu.synchronize();
    }
}
