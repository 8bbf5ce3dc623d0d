// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import metrale.gpu.DevicePtr;
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
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Copies on CUDA, through the runtime against bare driver calls. Score: nanoseconds per copy.
 *
 * <p>Small blocking copies of {@code bytes} bytes ({@value #SMALL} unless {@code -p bytes=...}),
 * host to device ({@code h2d...}) and device to host ({@code d2h...}), from three kinds of host
 * memory:
 * <ul>
 *   <li>{@code Heap}: a Java {@code byte[]} ({@code copyH2D(byte[])}); the runtime stages it through
 *       its staging buffers (pageable to the device, page-locked to the host), since the driver cannot read the moving Java heap;</li>
 *   <li>{@code Native}: pageable native memory from an {@link Arena} (not page-locked);</li>
 *   <li>{@code Pinned}: page-locked memory from {@code gpu.allocHostPinned}.</li>
 * </ul>
 * The baselines {@code h2dBareNative}, {@code h2dBarePinned} (and {@code d2h...}) call
 * {@code cuMemcpyHtoD_v2} / {@code cuMemcpyDtoH_v2} through bare handles on the same native or
 * pinned memory; the heap variant is compared with the native baseline, the cheapest way the
 * same bytes could reach the driver.
 *
 * <p>{@code pair} measures the same small copies interleaved batch by batch in one JVM, as
 * {@link PairedBench} does, for issue #22's targets (a copy through the runtime ≤ 1.05× the bare
 * driver call in the same JVM, heap {@code byte[]} included). Each invocation times one batch of
 * {@value #PAIR_COPIES} copies of each of eight variants, rotating which goes first; the
 * {@link Pair} counters hold nanoseconds per variant and {@code ops}, the copies per variant:
 * <ul>
 *   <li>{@code h2dBareNs}: bare {@code cuMemcpyHtoD_v2} from a pageable native segment;</li>
 *   <li>{@code h2dNativeNs}: {@code gpu.copyH2D} from that segment;</li>
 *   <li>{@code h2dHeapNs}: {@code gpu.copyH2D} from a {@code byte[]};</li>
 *   <li>{@code h2dBareHeapNs}: the {@code byte[]} copied into a preallocated pageable native
 *       segment, then bare {@code cuMemcpyHtoD_v2} from it: the best a user could do by hand;</li>
 *   <li>{@code d2hBareNs}, {@code d2hNativeNs}, {@code d2hHeapNs}, {@code d2hBareHeapNs}: the same
 *       with {@code cuMemcpyDtoH_v2} and {@code gpu.copyD2H}, the by-hand variant copying the
 *       native segment into the {@code byte[]} after the call.</li>
 * </ul>
 * So {@code h2dHeapNs / h2dBareNs} is the heap ratio, {@code h2dNativeNs / h2dBareNs} the native
 * one, and {@code h2dBareNs / ops} the time per bare copy.
 *
 * <p>Large device-to-device copies ({@code d2d}, {@code d2dBare}): {@value #LARGE} bytes with
 * {@code copyD2D} then {@code synchronize()}, against {@code cuMemcpyDtoD_v2} then
 * {@code cuCtxSynchronize}; the page turns the time into bandwidth counting bytes read plus
 * bytes written (2 × {@value #LARGE} per copy).
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar benchmarks.jar CopyBench -prof gc}; the
 * interleaved pairs alone: {@code CopyBench.pair -f 2}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CopyBench extends CudaBench {

    /** Bytes of a small copy by default. */
    public static final int SMALL = 4096;

    /** Copies per variant per batch of {@code pair}. */
    public static final int PAIR_COPIES = 32;

    /** Bytes of a large device-to-device copy (1 GiB). */
    public static final long LARGE = 1L << 30;

    /** Bytes of a small copy. */
    @Param({"4096"})
    public int bytes;

    /**
     * Nanoseconds per variant of {@code pair}, summed over an iteration, and the copies each variant
     * made (the same for every variant); JMH reports each field as a secondary result. Reset at
     * each iteration.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Pair {
        /** Bare {@code cuMemcpyHtoD_v2} from a pageable native segment. */
        public long h2dBareNs;
        /** {@code gpu.copyH2D} from the same native segment. */
        public long h2dNativeNs;
        /** {@code gpu.copyH2D} from a {@code byte[]}. */
        public long h2dHeapNs;
        /** The {@code byte[]} copied into a preallocated native segment, then bare {@code cuMemcpyHtoD_v2}. */
        public long h2dBareHeapNs;
        /** Bare {@code cuMemcpyDtoH_v2} into a pageable native segment. */
        public long d2hBareNs;
        /** {@code gpu.copyD2H} into the same native segment. */
        public long d2hNativeNs;
        /** {@code gpu.copyD2H} into a {@code byte[]}. */
        public long d2hHeapNs;
        /** Bare {@code cuMemcpyDtoH_v2} into a preallocated native segment, then copied into the {@code byte[]}. */
        public long d2hBareHeapNs;
        /** Copies per variant. */
        public long ops;

        /** Creates the counters; JMH calls it. */
        public Pair() {
        }

        /** Zeroes the counters. */
        @Setup(Level.Iteration)
        public void reset() {
            h2dBareNs = 0;
            h2dNativeNs = 0;
            h2dHeapNs = 0;
            h2dBareHeapNs = 0;
            d2hBareNs = 0;
            d2hNativeNs = 0;
            d2hHeapNs = 0;
            d2hBareHeapNs = 0;
            ops = 0;
        }
    }

    private Arena arena;
    private DevicePtr dev;
    private long devAddr;
    private byte[] heap;
    private MemorySegment nat;
    private MemorySegment byHand;
    private MemorySegment pinned;
    private DevicePtr bigSrc;
    private DevicePtr bigDst;
    private int round;

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
        dev = gpu.alloc(bytes);
        devAddr = dev.address();
        heap = new byte[bytes];
        nat = arena.allocate(bytes, 64);
        byHand = arena.allocate(bytes, 64);
        pinned = gpu.allocHostPinned(bytes);
        for (int i = 0; i < bytes; i++) {
            heap[i] = (byte) (i * 31 + 7);
        }
        nat.copyFrom(MemorySegment.ofArray(heap));
        byHand.copyFrom(MemorySegment.ofArray(heap));
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
        Bare.memcpyHtoD(devAddr, nat, bytes);
    }

    /** Baseline: bare {@code cuMemcpyHtoD_v2} from page-locked memory. */
    @Benchmark
    public void h2dBarePinned() {
        Bare.memcpyHtoD(devAddr, pinned, bytes);
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
        Bare.memcpyDtoH(nat, devAddr, bytes);
    }

    /** Baseline: bare {@code cuMemcpyDtoH_v2} into page-locked memory. */
    @Benchmark
    public void d2hBarePinned() {
        Bare.memcpyDtoH(pinned, devAddr, bytes);
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

    // ---- interleaved pairs ------------------------------------------------------------------------

    private long h2dBare() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            Bare.memcpyHtoD(devAddr, nat, bytes);
        }
        return System.nanoTime() - t0;
    }

    private long h2dNativeCopies() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            gpu.copyH2D(nat, dev);
        }
        return System.nanoTime() - t0;
    }

    private long h2dHeapCopies() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            gpu.copyH2D(heap, dev);
        }
        return System.nanoTime() - t0;
    }

    private long h2dBareHeap() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            MemorySegment.copy(heap, 0, byHand, ValueLayout.JAVA_BYTE, 0, bytes);
            Bare.memcpyHtoD(devAddr, byHand, bytes);
        }
        return System.nanoTime() - t0;
    }

    private long d2hBare() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            Bare.memcpyDtoH(nat, devAddr, bytes);
        }
        return System.nanoTime() - t0;
    }

    private long d2hNativeCopies() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            gpu.copyD2H(dev, nat);
        }
        return System.nanoTime() - t0;
    }

    private long d2hHeapCopies() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            gpu.copyD2H(dev, heap);
        }
        return System.nanoTime() - t0;
    }

    private long d2hBareHeap() {
        long t0 = System.nanoTime();
        for (int i = 0; i < PAIR_COPIES; i++) {
            Bare.memcpyDtoH(byHand, devAddr, bytes);
            MemorySegment.copy(byHand, ValueLayout.JAVA_BYTE, 0, heap, 0, bytes);
        }
        return System.nanoTime() - t0;
    }

    /**
     * One batch of each of the eight small-copy variants, in a rotating order.
     *
     * @param n the counters
     */
    @Benchmark
    public void pair(Pair n) {
        int r = round++ % 8;
        for (int k = 0; k < 8; k++) {
            switch ((r + k) % 8) {
                case 0 -> n.h2dBareNs += h2dBare();
                case 1 -> n.h2dNativeNs += h2dNativeCopies();
                case 2 -> n.h2dHeapNs += h2dHeapCopies();
                case 3 -> n.h2dBareHeapNs += h2dBareHeap();
                case 4 -> n.d2hBareNs += d2hBare();
                case 5 -> n.d2hNativeNs += d2hNativeCopies();
                case 6 -> n.d2hHeapNs += d2hHeapCopies();
                default -> n.d2hBareHeapNs += d2hBareHeap();
            }
        }
        n.ops += PAIR_COPIES;
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
