package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** CUDA's atomic operations on views, and block orders that make a race across blocks show. */
class SimAtomicsTest {

    private static final String MODULE = "atomics_test";
    private static final int BLOCKS = 64;
    private static final int THREADS = 128;

    private static Gpu open(SimTwins twins, SimBlockOrder order, long seed) {
        Gpu gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, twins).backendOption(SimOptions.SEED, Long.toString(seed))
                .backendOption(SimOptions.BLOCKS, order.name().toLowerCase(java.util.Locale.ROOT)).open();
        gpu.loadModule(MODULE, SimKernels.image(MODULE));
        return gpu;
    }

    /** Runs {@code func(p)} over BLOCKS x THREADS on a zeroed buffer of n ints and {@return the buffer} */
    private static int[] run(SimTwins twins, SimBlockOrder order, long seed, String func, int n) {
        try (Gpu gpu = open(twins, order, seed); KernelArgs args = new KernelArgs()) {
            DevicePtr p = gpu.alloc(4L * n);
            gpu.memset(p, 0, 4L * n);
            // 4 bytes of dynamic shared memory, for the twins that use it.
            gpu.launch(gpu.kernel(MODULE, func), LaunchConfig.of(BLOCKS, THREADS).withSharedMem(4), Stream.DEFAULT,
                    args.clear().ptr(p));
            int[] out = new int[n];
            gpu.copyD2H(p, out);
            return out;
        }
    }

    @Test
    void intAndLongAtomicsReturnTheOldValue() {
        List<Long> olds = new ArrayList<>();
        SimTwins twins = new SimTwins().register(MODULE, "ops", l -> {
            IntView i = l.ints(0);
            LongView g = l.longs(0);
            l.forEachThread(t -> {
                if (t.globalX() != 0) {
                    return;
                }
                i.set(0, 10);
                olds.add((long) i.atomicAdd(0, 5));       // 10 -> 15
                olds.add((long) i.atomicCas(0, 14, 99));  // no store
                olds.add((long) i.atomicCas(0, 15, 20));  // 15 -> 20
                olds.add((long) i.atomicExch(0, 7));      // 20 -> 7
                olds.add((long) i.atomicMin(0, -3));      // 7 -> -3
                olds.add((long) i.atomicMax(0, 4));       // -3 -> 4
                olds.add((long) i.atomicAnd(0, 6));       // 4 -> 4
                olds.add((long) i.atomicOr(0, 3));        // 4 -> 7
                olds.add((long) i.atomicXor(0, 5));       // 7 -> 2
                olds.add((long) i.get(0));
                g.set(1, 1L << 40);
                olds.add(g.atomicAdd(1, 1));
                olds.add(g.atomicCas(1, (1L << 40) + 1, -1));
                olds.add(g.atomicMax(1, 5));
                olds.add(g.atomicMin(1, Long.MIN_VALUE));
                olds.add(g.atomicXor(1, -1));
                olds.add(g.atomicOr(1, 8));
                olds.add(g.atomicAnd(1, 12));
                olds.add(g.atomicExch(1, 3));
                olds.add(g.get(1));
            });
        });
        run(twins, SimBlockOrder.ORDERED, 0, "ops", 64);
        assertThat(olds).containsExactly(10L, 15L, 15L, 20L, 7L, -3L, 4L, 4L, 7L, 2L,
                1L << 40, (1L << 40) + 1, -1L, 5L, Long.MIN_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, 12L, 3L);
    }

    @Test
    void floatAndDoubleAtomicAddReturnTheOldValue() {
        List<Double> olds = new ArrayList<>();
        SimTwins twins = new SimTwins().register(MODULE, "fp", l -> {
            FloatView f = l.floats(0);
            DoubleView d = l.doubles(0);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    f.set(0, 1.5f);
                    olds.add((double) f.atomicAdd(0, 2f));
                    olds.add((double) f.get(0));
                    d.set(1, 0.25);
                    olds.add(d.atomicAdd(1, 0.5));
                    olds.add(d.get(1));
                }
            });
        });
        run(twins, SimBlockOrder.ORDERED, 0, "fp", 64);
        assertThat(olds).containsExactly(1.5, 3.5, 0.25, 0.75);
    }

    @Test
    void anAtomicOutsideTheViewIsAnIllegalAddress() {
        SimTwins twins = new SimTwins().register(MODULE, "oob", l -> {
            IntView p = l.ints(0);
            l.forEachThread(t -> p.atomicAdd(p.length(), 1));
        });
        assertThatThrownBy(() -> run(twins, SimBlockOrder.ORDERED, 0, "oob", 4))
                .isInstanceOf(GpuException.class).hasMessageContaining("ILLEGAL_ADDRESS").hasMessageContaining("write of int [4]");
    }

    /** Every thread counts itself into bin (global index mod 16) with atomicAdd, and the block's max with atomicMax. */
    private static SimTwins correct() {
        return new SimTwins().register(MODULE, "hist", l -> {
            IntView p = l.ints(0);
            l.forEachThread(t -> {
                p.atomicAdd(t.globalX() % 16, 1);
                p.atomicMax(16, t.globalX());
            });
        }).register(MODULE, "blockSums", l -> {
            IntView p = l.ints(0);
            // Shared memory per block: a block's own count, then one atomic per block into p[0].
            l.forEachBlock(b -> {
                IntView sh = b.sharedInts();
                b.forEachThread(t -> sh.atomicAdd(0, 1));
                b.forEachThread(t -> {
                    if (t.threadX() == 0) {
                        p.atomicAdd(0, sh.get(0));
                    }
                });
            });
        });
    }

    @ParameterizedTest
    @EnumSource(SimBlockOrder.class)
    void aCorrectAtomicTwinIsExactUnderEveryBlockOrder(SimBlockOrder order) {
        for (long seed = 0; seed < 4; seed++) {
            int[] h = run(correct(), order, seed, "hist", 17);
            for (int bin = 0; bin < 16; bin++) {
                assertThat(h[bin]).as("bin %d, %s, seed %d", bin, order, seed).isEqualTo(BLOCKS * THREADS / 16);
            }
            assertThat(h[16]).isEqualTo(BLOCKS * THREADS - 1);
        }
    }

    @Test
    void sharedMemoryAndAtomicsWorkWhenBlocksRunInParallel() {
        for (SimBlockOrder order : SimBlockOrder.values()) {
            int[] sums = run(correct(), order, 0, "blockSums", 1);
            assertThat(sums[0]).as("%s", order).isEqualTo(BLOCKS * THREADS);
        }
    }

    /**
     * A racing twin: block b reads what block b-1 wrote in the same launch (a carry chain with no
     * grid-wide barrier). In index order it happens to work; CUDA promises no order among blocks.
     */
    private static SimTwins racing() {
        return new SimTwins().register(MODULE, "chain", l -> {
            IntView p = l.ints(0);
            l.forEachThread(t -> {
                if (t.threadX() == 0) {
                    int b = t.blockX();
                    p.set(b, (b == 0 ? 0 : p.get(b - 1)) + 1);
                }
            });
        });
    }

    @Test
    void aRaceAcrossBlocksPassesInIndexOrderAndShowsInShuffledOrders() {
        int[] ordered = run(racing(), SimBlockOrder.ORDERED, 0, "chain", BLOCKS);
        for (int b = 0; b < BLOCKS; b++) {
            assertThat(ordered[b]).isEqualTo(b + 1);
        }
        Set<List<Integer>> outcomes = new HashSet<>();
        int wrong = 0;
        for (long seed = 1; seed <= 5; seed++) {
            int[] out = run(racing(), SimBlockOrder.SHUFFLED, seed, "chain", BLOCKS);
            List<Integer> list = java.util.Arrays.stream(out).boxed().toList();
            outcomes.add(list);
            if (out[BLOCKS - 1] != BLOCKS) {
                wrong++;
            }
            // One seed, one order: the same seed gives the same wrong answer again.
            assertThat(run(racing(), SimBlockOrder.SHUFFLED, seed, "chain", BLOCKS)).containsExactly(out);
        }
        assertThat(wrong).as("shuffled orders that break the carry chain").isEqualTo(5);
        assertThat(outcomes).as("different seeds, different orders").hasSizeGreaterThan(1);
    }
}
