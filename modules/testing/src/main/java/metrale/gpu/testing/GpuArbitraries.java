// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.util.List;
import metrale.gpu.Dim3;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimBlockOrder;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries for GPU host code: launch shapes, buffer sizes, schedule seeds and op
 * sequences over an application's own kernels. Each shrinks toward the simplest case (one block,
 * one byte, seed 0, a short sequence), so a falsified property reports a small example.
 *
 * <pre>{@code
 * @Provide Arbitrary<Long> seeds() { return GpuArbitraries.scheduleSeeds(); }
 *
 * @Property
 * void pipelineIsOrdered(@ForAll("seeds") long seed) { ... }
 * }</pre>
 */
public final class GpuArbitraries {

    /** The most threads in a block on every CUDA device this runtime supports. */
    public static final int MAX_BLOCK_THREADS = 1024;
    /** Dynamic shared memory a launch may use without opting in, in bytes. */
    public static final int DEFAULT_MAX_SHARED = 48 * 1024;

    private GpuArbitraries() {
    }

    /**
     * {@return one-dimensional launches that cover {@code elements} threads}: a block size (edge
     * cases: 1, 32, the warp, and 1024, the most) and the grid that covers the elements, so the
     * last block is partial unless the block divides the count.
     *
     * @param elements the threads needed, at least 1
     */
    public static Arbitrary<LaunchConfig> launchConfigs(long elements) {
        if (elements < 1) {
            throw new IllegalArgumentException("launchConfigs(" + elements + "): at least one element");
        }
        return Arbitraries.integers().between(1, MAX_BLOCK_THREADS)
                .edgeCases(c -> c.add(32, 64, 256, MAX_BLOCK_THREADS))
                .map(block -> LaunchConfig.forElements(elements, block));
    }

    /**
     * {@return three-dimensional launches CUDA accepts}: blocks of at most {@value #MAX_BLOCK_THREADS}
     * threads (z at most 64), grids of up to {@code maxBlocks} blocks in all, and dynamic shared
     * memory of 0 to {@value #DEFAULT_MAX_SHARED} bytes in multiples of 16.
     *
     * @param maxBlocks the most blocks a grid may have, at least 1 (the simulator runs every block)
     */
    public static Arbitrary<LaunchConfig> launchConfigs3d(int maxBlocks) {
        if (maxBlocks < 1) {
            throw new IllegalArgumentException("launchConfigs3d(" + maxBlocks + "): at least one block");
        }
        Arbitrary<Dim3> block = Combinators.combine(
                        Arbitraries.integers().between(1, MAX_BLOCK_THREADS),
                        Arbitraries.integers().between(1, MAX_BLOCK_THREADS),
                        Arbitraries.integers().between(1, 64))
                .filter((x, y, z) -> (long) x * y * z <= MAX_BLOCK_THREADS)
                .as(Dim3::of);
        Arbitrary<Dim3> grid = Combinators.combine(
                        Arbitraries.integers().between(1, maxBlocks),
                        Arbitraries.integers().between(1, maxBlocks),
                        Arbitraries.integers().between(1, Math.min(maxBlocks, 65535)))
                .filter((x, y, z) -> (long) x * y * z <= maxBlocks)
                .as(Dim3::of);
        Arbitrary<Integer> smem = Arbitraries.integers().between(0, DEFAULT_MAX_SHARED / 16).map(n -> n * 16);
        return Combinators.combine(grid, block, smem).as(LaunchConfig::new);
    }

    /**
     * {@return buffer sizes in bytes from 1 to {@code maxBytes}} Edge cases are the sizes an index
     * computation or an allocator gets wrong: 1, one below, at and above the 256-byte alignment and
     * a 4 KiB page, and the largest.
     *
     * @param maxBytes the largest size, at least 1
     */
    public static Arbitrary<Long> bufferSizes(long maxBytes) {
        if (maxBytes < 1) {
            throw new IllegalArgumentException("bufferSizes(" + maxBytes + "): at least 1 byte");
        }
        return Arbitraries.longs().between(1, maxBytes).edgeCases(c -> {
            for (long v : new long[] {1, 255, 256, 257, 4095, 4096, 4097, maxBytes}) {
                if (v <= maxBytes) {
                    c.add(v);
                }
            }
        });
    }

    /**
     * {@return element counts from 1 to {@code max}, with the edge cases of a block of
     * {@code blockSize}: 1, one below, at and above one and two blocks}
     *
     * @param max       the largest count, at least 1
     * @param blockSize the application's block size, at least 1
     */
    public static Arbitrary<Integer> elementCounts(int max, int blockSize) {
        if (max < 1 || blockSize < 1) {
            throw new IllegalArgumentException("elementCounts(" + max + ", " + blockSize + "): both must be at least 1");
        }
        return Arbitraries.integers().between(1, max).edgeCases(c -> {
            for (int v : new int[] {1, blockSize - 1, blockSize, blockSize + 1, 2 * blockSize - 1, 2 * blockSize, 2 * blockSize + 1, max}) {
                if (v >= 1 && v <= max) {
                    c.add(v);
                }
            }
        });
    }

    /**
     * {@return schedule seeds for the simulator ({@code @GpuTest(seed)}, {@link TestGpus.Builder#seed})}
     * A property over them runs the same calls under different interleavings of the work ready on
     * several streams; a missing {@code streamWaitEvent} fails for some seeds, and jqwik shrinks
     * toward seed 0, the default schedule, reporting a small seed that shows the race.
     */
    public static Arbitrary<Long> scheduleSeeds() {
        return Arbitraries.longs().between(0, Long.MAX_VALUE).withoutEdgeCases();
    }

    /**
     * {@return the simulator's block orders ({@code @GpuTest(blocks)}, {@link TestGpus.Builder#blocks})},
     * shrinking toward {@code ORDERED}: a property over them shows a twin that depends on an order
     * among blocks.
     */
    public static Arbitrary<SimBlockOrder> blockOrders() {
        return Arbitraries.of(SimBlockOrder.class);
    }

    /**
     * {@return sequences of 1 to {@code maxLength} ops drawn from {@code ops}} Run one with
     * {@link GpuOp#runAll}; jqwik shrinks a falsified sequence by dropping and simplifying ops.
     *
     * @param maxLength the longest sequence, at least 1
     * @param ops       arbitraries of the application's ops (its kernels, copies, syncs)
     * @param <S>       the state the ops thread through
     */
    public static <S> Arbitrary<List<GpuOp<S>>> opSequences(int maxLength, List<? extends Arbitrary<? extends GpuOp<S>>> ops) {
        if (maxLength < 1) {
            throw new IllegalArgumentException("opSequences(" + maxLength + ", ...): at least one op");
        }
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("opSequences: no op arbitraries given");
        }
        Arbitrary<GpuOp<S>> any = Arbitraries.oneOf(ops);
        return any.list().ofMinSize(1).ofMaxSize(maxLength);
    }
}
