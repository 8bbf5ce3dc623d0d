// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The record methods that write a thread's primitive ring, read back as the entries the old path built. */
class LaunchTraceRecordTest {

    private final LaunchTrace trace = new LaunchTrace();

    /** Arguments as a launch path hands them over: words and kind codes, read by index. */
    record Args(long[] words, String kinds) implements TraceArgs {
        @Override
        public int argc() {
            return words.length;
        }

        @Override
        public long argWord(int i) {
            return words[i];
        }

        @Override
        public char argKind(int i) {
            return kinds.charAt(i);
        }
    }

    /** A kernel op both ways: the values, the entry the old path built, and the new path's call. */
    record Kernel(long func, int gx, int gy, int gz, int bx, int by, int bz, int smem, long[] words, String kinds) {
        TraceEntry entry() {
            return TraceEntry.kernel(func, gx, gy, gz, bx, by, bz, smem, words, kinds);
        }

        void record(LaunchTrace t) {
            t.recordKernel(func, gx, gy, gz, bx, by, bz, smem, new Args(words, kinds));
        }
    }

    private static void assertSameFields(TraceEntry got, TraceEntry want) {
        assertThat(got.kind()).isEqualTo(want.kind());
        assertThat(got.func()).isEqualTo(want.func());
        assertThat(new int[] {got.gridX(), got.gridY(), got.gridZ()})
                .containsExactly(want.gridX(), want.gridY(), want.gridZ());
        assertThat(new int[] {got.blockX(), got.blockY(), got.blockZ()})
                .containsExactly(want.blockX(), want.blockY(), want.blockZ());
        assertThat(got.sharedMemBytes()).isEqualTo(want.sharedMemBytes());
        assertThat(got.args()).containsExactly(want.args());
        assertThat(got.argKinds()).isEqualTo(want.argKinds());
        assertThat(got).isEqualTo(want).hasSameHashCodeAs(want);
    }

    private static long[] words(int n, long seed) {
        long[] w = new long[n];
        for (int i = 0; i < n; i++) {
            w[i] = seed * 31 + i;
        }
        return w;
    }

    private static String kinds(int n) {
        String codes = "ilfdpb";
        StringBuilder k = new StringBuilder();
        for (int i = 0; i < n; i++) {
            k.append(codes.charAt(i % codes.length()));
        }
        return k.toString();
    }

    // ---- the entries -----------------------------------------------------------------------------

    @Provide
    Arbitrary<Kernel> kernel() {
        Arbitrary<Integer> any = Arbitraries.integers();
        Arbitrary<long[]> words = Arbitraries.longs().array(long[].class).ofMaxSize(9);
        Arbitrary<Character> code = Arbitraries.oneOf(Arbitraries.of('i', 'l', 'f', 'd', 'p', 'b'),
                Arbitraries.chars());
        return Combinators.combine(Arbitraries.longs(), any.list().ofSize(7), words, code.list().ofSize(9))
                .as((func, d, w, c) -> {
                    StringBuilder k = new StringBuilder();
                    for (int i = 0; i < w.length; i++) {
                        k.append(c.get(i));
                    }
                    return new Kernel(func, d.get(0), d.get(1), d.get(2), d.get(3), d.get(4), d.get(5), d.get(6),
                            w, k.toString());
                });
    }

    @Provide
    Arbitrary<List<Kernel>> kernels() {
        return kernel().list().ofMaxSize(20);
    }

    @Property
    void aRecordedKernelIsTheOldPathsEntryFieldByField(@ForAll("kernels") List<Kernel> ops) {
        trace.begin();
        ops.forEach(k -> k.record(trace));
        List<TraceEntry> got = trace.current();
        assertThat(got).hasSize(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            assertSameFields(got.get(i), ops.get(i).entry());
        }
    }

    @Property
    void memsetAndD2dAreTheOldPathsEntries(@ForAll long ptr, @ForAll int value, @ForAll long bytes, @ForAll long dst) {
        trace.begin();
        trace.recordMemset(ptr, value, bytes);
        trace.recordD2d(ptr, dst, bytes);
        List<TraceEntry> got = trace.current();
        assertThat(got).hasSize(2);
        assertSameFields(got.get(0), TraceEntry.memset(ptr, value, bytes));
        assertSameFields(got.get(1), TraceEntry.d2d(ptr, dst, bytes));
        assertThat(got.get(0).arg(1)).isBetween(0L, 255L);
    }

    @Property
    void recordOfAnEntryReadsBackEqual(@ForAll OpKind kind, @ForAll("kernel") Kernel k, @ForAll boolean kindsKnown) {
        TraceEntry e = new TraceEntry(kind, k.func(), k.gx(), k.gy(), k.gz(), k.bx(), k.by(), k.bz(), k.smem(),
                k.words(), kindsKnown ? k.kinds() : "");
        trace.begin();
        trace.record(e);
        assertSameFields(trace.current().getFirst(), e);
    }

    @Test
    void aKernelWithoutArgumentsHasNoKinds() {
        trace.begin();
        trace.recordKernel(9, 1, 2, 3, 4, 5, 6, 7, new Args(new long[0], ""));
        assertSameFields(trace.current().getFirst(), TraceEntry.kernel(9, 1, 2, 3, 4, 5, 6, 7, new long[0], ""));
    }

    @Test
    void theArgumentsAreReadWhenRecordedNotWhenTheTraceIsRead() {
        long[] w = {1, 2};
        trace.begin();
        trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, new Args(w, "pp"));
        w[0] = 99;
        assertThat(trace.current().getFirst().args()).containsExactly(1, 2);
    }

    // ---- begin, end and what is dropped ----------------------------------------------------------

    @Test
    void everyRecordMethodIsDroppedWhileOff() {
        Args args = new Args(new long[] {1}, "i");
        trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, args);
        trace.recordMemset(1, 2, 3);
        trace.recordD2d(1, 2, 3);
        trace.record(TraceEntry.d2d(1, 2, 3));
        assertThat(trace.current()).isEmpty();
        trace.begin();
        assertThat(trace.current()).as("what came before begin").isEmpty();
        trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, args);
        trace.recordMemset(1, 2, 3);
        trace.recordD2d(1, 2, 3);
        trace.record(TraceEntry.d2d(4, 5, 6));
        assertThat(trace.size()).isEqualTo(4);
        assertThat(trace.endAndDiff(10)).isEmpty();
        assertThat(trace.size()).isZero();
        trace.recordKernel(2, 1, 1, 1, 1, 1, 1, 0, args);
        trace.recordMemset(7, 8, 9);
        trace.recordD2d(7, 8, 9);
        trace.record(TraceEntry.d2d(7, 8, 9));
        assertThat(trace.current()).as("recorded after endAndDiff took the trace").isEmpty();
        trace.begin();
        trace.recordD2d(10, 11, 12);
        assertThat(trace.current()).containsExactly(TraceEntry.d2d(10, 11, 12));
        assertThat(trace.endAndDiff(10)).hasValue("""
                1 differing op(s) of 1
                OP COUNT differs: prev 4 vs cur 1
                #0 fn@0x0 [d2d] op fn@0x1 -> fn@0x0; grid [1, 1, 1] -> [0, 0, 0]; block [1, 1, 1] -> [0, 0, 0]; \
                arg0 0x1 -> 0xa (Δ 9); argc 1 -> 3
                """);
    }

    @Test
    void nullAndBadArgumentCountsAreRefusedOnlyWhileOn() {
        TraceArgs minusOne = new TraceArgs() {
            @Override
            public int argc() {
                return -1;
            }

            @Override
            public long argWord(int i) {
                throw new AssertionError();
            }

            @Override
            public char argKind(int i) {
                throw new AssertionError();
            }
        };
        trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, null);
        trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, minusOne);
        trace.record(null);
        trace.begin();
        assertThatThrownBy(() -> trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, null))
                .isInstanceOf(NullPointerException.class).hasMessage("args");
        assertThatThrownBy(() -> trace.record(null)).isInstanceOf(NullPointerException.class).hasMessage("e");
        assertThatThrownBy(() -> trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, minusOne))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("argc -1: a traced op takes 0 to 65536 arguments");
        trace.recordKernel(3, 1, 1, 1, 1, 1, 1, 0, new Args(new long[0], ""));
        assertThat(trace.current()).containsExactly(TraceEntry.kernel(3, 1, 1, 1, 1, 1, 1, 0, new long[0], ""));
    }

    @Test
    void tooManyArgumentsAreRefusedBeforeAnyAllocation() {
        TraceArgs huge = new TraceArgs() {
            @Override
            public int argc() {
                return LaunchTrace.MAX_ARGC + 1;
            }

            @Override
            public long argWord(int i) {
                return 0;
            }

            @Override
            public char argKind(int i) {
                return 'i';
            }
        };
        trace.begin();
        assertThatThrownBy(() -> trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("argc 65537:");
        assertThat(trace.size()).isZero();
        int most = LaunchTrace.MAX_ARGC;
        trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, new Args(words(most, 1), kinds(most)));
        trace.record(TraceEntry.kernel(2, 1, 1, 1, 1, 1, 1, 0, words(most, 2)));
        assertThat(trace.current()).extracting(TraceEntry::argc).containsExactly(most, most);
        assertThat(trace.current().getFirst().arg(most - 1)).isEqualTo(31L + most - 1);
    }

    @Test
    void theLengthOfATraceIsCheckedAgainstWhatAListHolds() {
        assertThat(LaunchTrace.opsBetween(10, 10)).isZero();
        assertThat(LaunchTrace.opsBetween(4, 10)).isEqualTo(3);
        assertThat(LaunchTrace.opsBetween(2, 2 + 2 * LaunchTrace.MAX_OPS)).isEqualTo(Integer.MAX_VALUE - 8);
        assertThatThrownBy(() -> LaunchTrace.opsBetween(2, 4 + 2 * LaunchTrace.MAX_OPS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the launch trace holds 2147483640 ops, more than the 2147483639 a list can");
    }

    @Test
    void anArgumentThatThrowsLeavesNoEntryAndBlocksNoReader() {
        TraceArgs failing = new TraceArgs() {
            @Override
            public int argc() {
                return 3;
            }

            @Override
            public long argWord(int i) {
                if (i == 1) {
                    throw new IllegalStateException("KernelArgs is closed");
                }
                return i;
            }

            @Override
            public char argKind(int i) {
                return 'p';
            }
        };
        trace.begin();
        trace.recordD2d(1, 2, 3);
        assertThatThrownBy(() -> trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, failing))
                .isInstanceOf(IllegalStateException.class).hasMessage("KernelArgs is closed");
        trace.recordD2d(4, 5, 6);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertThat(trace.size()).isEqualTo(2);
            assertThat(trace.current()).containsExactly(TraceEntry.d2d(1, 2, 3), TraceEntry.d2d(4, 5, 6));
            assertThat(trace.endAndDiff(10)).isEmpty();
            trace.begin();
            trace.recordD2d(1, 2, 3);
            trace.recordD2d(4, 5, 6);
            assertThat(trace.endAndDiff(10)).hasValue("0 differing op(s) of 2\n");
        });
    }

    @Test
    void beginClearsWhatTheRingHolds() {
        trace.begin();
        for (int i = 0; i < 1000; i++) {
            trace.recordMemset(i, i, i);
        }
        trace.begin();
        assertThat(trace.current()).isEmpty();
        assertThat(trace.size()).isZero();
        trace.recordD2d(1, 2, 3);
        assertThat(trace.current()).containsExactly(TraceEntry.d2d(1, 2, 3));
        trace.begin();
        trace.begin();
        assertThat(trace.on()).isTrue();
        assertThat(trace.current()).isEmpty();
    }

    // ---- ring growth -----------------------------------------------------------------------------

    @Test
    void theRingGrowsPastItsFirstChunkAndKeepsEveryOpInOrder() {
        List<TraceEntry> want = new ArrayList<>();
        // Records of 7 to 7 + 2 * FIRST_CHUNK_WORDS words: some fill a chunk's tail exactly, some are
        // longer than the first chunk, some spill into the next.
        for (int round = 0; round < 3; round++) {
            trace.begin();
            want.clear();
            for (int i = 0; i < 600; i++) {
                int n = i % 97 == 0 ? LaunchTrace.FIRST_CHUNK_WORDS * 2 : i % 13;
                Kernel k = new Kernel(i, i, 1, 1, 32, 1, 1, round, words(n, i), kinds(n));
                k.record(trace);
                want.add(k.entry());
                if (i % 5 == 0) {
                    trace.recordMemset(i, i, i);
                    want.add(TraceEntry.memset(i, i, i));
                }
            }
            assertThat(trace.current()).as("round %d", round).containsExactlyElementsOf(want);
        }
        // A shorter trace, then a longer one than any before: the lane lets go of and regrows chunks.
        trace.begin();
        trace.recordD2d(1, 2, 3);
        assertThat(trace.endAndDiff(1)).isEmpty();
        trace.begin();
        want.clear();
        for (int i = 0; i < 5000; i++) {
            trace.recordD2d(i, -i, i);
            want.add(TraceEntry.d2d(i, -i, i));
        }
        assertThat(trace.current()).containsExactlyElementsOf(want);
        assertThat(trace.size()).isEqualTo(5000);
    }

    @Test
    void aRecordLongerThanEveryChunkFits() {
        int n = LaunchTrace.FIRST_CHUNK_WORDS * 40;
        trace.begin();
        trace.recordD2d(1, 2, 3);
        trace.record(TraceEntry.kernel(5, 1, 1, 1, 1, 1, 1, 0, words(n, 5)));
        trace.recordKernel(6, 1, 1, 1, 1, 1, 1, 0, new Args(words(n, 6), kinds(n)));
        trace.recordD2d(4, 5, 6);
        assertThat(trace.current()).containsExactly(TraceEntry.d2d(1, 2, 3),
                TraceEntry.kernel(5, 1, 1, 1, 1, 1, 1, 0, words(n, 5)),
                TraceEntry.kernel(6, 1, 1, 1, 1, 1, 1, 0, words(n, 6), kinds(n)),
                TraceEntry.d2d(4, 5, 6));
    }

    // ---- threads ---------------------------------------------------------------------------------

    @Test
    void eightThreadsOfMixedOpsLoseNothingAndKeepTheirOrder() throws InterruptedException {
        int threads = 8;
        int perThread = 5_000;
        trace.begin();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long id = t + 1;
            workers.add(Thread.ofPlatform().start(() -> {
                await(go);
                for (int i = 0; i < perThread; i++) {
                    switch (i % 4) {
                        case 0 -> trace.recordKernel(id, i, 1, 1, 1, 1, 1, 0, new Args(new long[] {i, id}, "ip"));
                        case 1 -> trace.recordMemset(id, i, i);
                        case 2 -> trace.recordD2d(id, i, i);
                        default -> trace.record(TraceEntry.kernel(id, i, 1, 1, 1, 1, 1, 0, new long[] {i}));
                    }
                }
            }));
        }
        go.countDown();
        for (Thread w : workers) {
            w.join();
        }
        List<TraceEntry> got = trace.current();
        assertThat(got).hasSize(threads * perThread);
        int[] next = new int[threads + 1];
        for (TraceEntry e : got) {
            int id = (int) (e.kind() == OpKind.KERNEL ? e.func() : e.arg(0));
            int i = next[id]++;
            long step = e.kind() == OpKind.KERNEL ? e.gridX() : e.arg(1);
            assertThat(step).as("thread %d's op %d", id, i).isEqualTo(i & (e.kind() == OpKind.MEMSET ? 0xff : -1));
        }
        assertThat(next).containsExactly(0, perThread, perThread, perThread, perThread, perThread, perThread,
                perThread, perThread);
    }

    @Test
    void opsOrderedAcrossThreadsKeepThatOrder() throws InterruptedException {
        // Two threads take turns: each op happens before the other thread's next, so the trace
        // must alternate, whatever lane each op sits in.
        int turns = 2_000;
        SynchronousQueue<Integer> toB = new SynchronousQueue<>();
        SynchronousQueue<Integer> toA = new SynchronousQueue<>();
        trace.begin();
        Thread b = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; i < turns; i++) {
                    int v = toB.take();
                    trace.recordD2d(2, v, 0);
                    toA.put(v + 1);
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        int v = 0;
        try {
            for (int i = 0; i < turns; i++) {
                trace.recordD2d(1, v, 0);
                toB.put(v + 1);
                v = toA.take();
            }
        } finally {
            b.join();
        }
        List<TraceEntry> got = trace.current();
        assertThat(got).hasSize(2 * turns);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i)).as("op %d", i).isEqualTo(TraceEntry.d2d(1 + (i & 1), i, 0));
        }
    }

    @Test
    void roundsTakenWhileThreadsRecordHoldUnbrokenRunsOfEachThread() throws InterruptedException {
        int threads = 4;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long id = t;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    for (long i = 0; !stop.get(); i++) {
                        if ((i & 255) == 0) {
                            Thread.yield(); // the machine may have fewer cores than recording threads
                        }
                        if ((i & 1) == 0) {
                            trace.recordD2d(id, i, 0);
                        } else {
                            trace.recordKernel(id, 1, 1, 1, 1, 1, 1, 0, new Args(new long[] {i}, "l"));
                        }
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            }));
        }
        long[] lastOf = new long[threads];
        Arrays.fill(lastOf, -1);
        int nonEmpty = 0;
        try {
            for (int round = 0; round < 40; round++) {
                trace.begin();
                Thread.sleep(1);
                List<TraceEntry> got = trace.current();
                trace.endAndDiff(0);
                List<TraceEntry> after = trace.current();
                assertThat(after).as("ops recorded after endAndDiff took the trace").isEmpty();
                long[] runEnd = new long[threads];
                Arrays.fill(runEnd, -1);
                for (TraceEntry e : got) {
                    int id = (int) (e.kind() == OpKind.D2D ? e.arg(0) : e.func());
                    long i = e.kind() == OpKind.D2D ? e.arg(1) : e.arg(0);
                    if (runEnd[id] >= 0) {
                        assertThat(i).as("round %d, thread %d: no op lost inside a run", round, id)
                                .isEqualTo(runEnd[id] + 1);
                    } else {
                        assertThat(i).as("round %d, thread %d: rounds are disjoint", round, id)
                                .isGreaterThan(lastOf[id]);
                    }
                    runEnd[id] = i;
                }
                for (int t = 0; t < threads; t++) {
                    lastOf[t] = Math.max(lastOf[t], runEnd[t]);
                }
                nonEmpty += got.isEmpty() ? 0 : 1;
            }
        } finally {
            stop.set(true);
            for (Thread w : workers) {
                w.join();
            }
        }
        assertThat(failed.get()).isNull();
        assertThat(nonEmpty).isPositive();
    }

    @Test
    void aThreadThatEndedIsReadThenDropped() throws InterruptedException {
        trace.begin();
        for (int t = 0; t < 20; t++) {
            long id = t;
            Thread.ofPlatform().start(() -> trace.recordD2d(id, 0, 0)).join();
        }
        assertThat(trace.laneCount()).isEqualTo(20);
        assertThat(trace.current()).hasSize(20).extracting(e -> e.arg(0))
                .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L);
        assertThat(trace.endAndDiff(0)).isEmpty();
        assertThat(trace.laneCount()).as("lanes of ended threads").isZero();

        trace.begin();
        trace.recordD2d(1, 2, 3);
        Thread.ofPlatform().start(() -> trace.recordD2d(4, 5, 6)).join();
        assertThat(trace.laneCount()).isEqualTo(2);
        trace.begin();
        assertThat(trace.laneCount()).as("begin drops them too, and keeps a live thread's").isEqualTo(1);
    }

    // ---- readers and an op in flight -------------------------------------------------------------

    /** One argument whose word is read only once the test lets it: the op stays claimed and unpublished until then. */
    static final class Gate implements TraceArgs {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final boolean fail;

        Gate(boolean fail) {
            this.fail = fail;
        }

        @Override
        public int argc() {
            return 1;
        }

        @Override
        public long argWord(int i) {
            entered.countDown();
            LaunchTraceRecordTest.await(release);
            if (fail) {
                throw new IllegalStateException("KernelArgs is closed");
            }
            return 0x77;
        }

        @Override
        public char argKind(int i) {
            return 'p';
        }
    }

    private Thread recordThrough(Gate gate) throws InterruptedException {
        Thread w = Thread.ofPlatform().start(() -> {
            try {
                trace.recordKernel(7, 1, 1, 1, 1, 1, 1, 0, gate);
            } catch (IllegalStateException e) {
                assertThat(gate.fail).isTrue();
            }
        });
        gate.entered.await();
        return w;
    }

    private static final TraceEntry GATED = TraceEntry.kernel(7, 1, 1, 1, 1, 1, 1, 0, new long[] {0x77}, "p");

    @Test
    void beginWaitsForAnOpInFlightAndClearsIt() throws InterruptedException {
        trace.begin();
        Gate gate = new Gate(false);
        Thread w = recordThrough(gate);
        AtomicBoolean begun = new AtomicBoolean();
        Thread b = Thread.ofPlatform().start(() -> {
            trace.begin();
            begun.set(true);
        });
        Thread.sleep(100);
        assertThat(begun).as("begin waits for the op it clears").isFalse();
        gate.release.countDown();
        b.join();
        w.join();
        assertThat(trace.current()).isEmpty();
        trace.recordD2d(1, 2, 3);
        assertThat(trace.current()).containsExactly(TraceEntry.d2d(1, 2, 3));
    }

    @Test
    void currentWaitsForAnOpInFlightAndLeavesOutOpsClaimedAfterIt() throws InterruptedException {
        trace.begin();
        trace.recordD2d(1, 0, 0);
        Gate gate = new Gate(false);
        Thread w = recordThrough(gate);
        AtomicReference<List<TraceEntry>> got = new AtomicReference<>();
        Thread r = Thread.ofPlatform().start(() -> got.set(trace.current()));
        Thread.sleep(100);
        assertThat(got.get()).as("current waits for the op in flight").isNull();
        trace.recordD2d(3, 0, 0);
        gate.release.countDown();
        r.join();
        w.join();
        TraceEntry a = TraceEntry.d2d(1, 0, 0);
        TraceEntry x = TraceEntry.d2d(3, 0, 0);
        // The op recorded while current() waited is in its list only if current() began after it.
        assertThat(got.get()).isIn(List.of(a, GATED), List.of(a, GATED, x));
        assertThat(trace.current()).containsExactly(a, GATED, x);
    }

    @Test
    void endAndDiffWaitsForAnOpInFlightAndKeepsIt() throws InterruptedException {
        trace.begin();
        trace.record(GATED);
        assertThat(trace.endAndDiff(10)).isEmpty();
        trace.begin();
        Gate gate = new Gate(false);
        Thread w = recordThrough(gate);
        AtomicReference<String> report = new AtomicReference<>();
        Thread r = Thread.ofPlatform().start(() -> report.set(trace.endAndDiff(10).orElseThrow()));
        Thread.sleep(100);
        assertThat(report.get()).isNull();
        gate.release.countDown();
        r.join();
        w.join();
        assertThat(report.get()).isEqualTo("0 differing op(s) of 1\n");
    }

    @Test
    void sizeWaitsForAnOpInFlightThatTurnsOutVoid() throws InterruptedException {
        trace.begin();
        Gate gate = new Gate(true);
        Thread w = recordThrough(gate);
        AtomicInteger size = new AtomicInteger(-1);
        Thread r = Thread.ofPlatform().start(() -> size.set(trace.size()));
        Thread.sleep(100);
        assertThat(size.get()).as("size waits for the op in flight").isEqualTo(-1);
        gate.release.countDown();
        r.join();
        w.join();
        assertThat(size.get()).isZero();
        assertThat(trace.current()).isEmpty();
    }

    // ---- the report ------------------------------------------------------------------------------

    @Test
    void theReportOfRecordedOpsIsTheReportOfTheirEntries() {
        LaunchTrace old = new LaunchTrace();
        for (LaunchTrace t : List.of(trace, old)) {
            t.nameKernel(0x1000, "mod", "saxpy");
        }
        long two = Float.floatToRawIntBits(2.0f) & 0xffffffffL;
        long three = Float.floatToRawIntBits(3.0f) & 0xffffffffL;
        Kernel[] prev = {new Kernel(0x1000, 1, 1, 1, 128, 1, 1, 0, new long[] {two, 0x10, 7}, "fpi")};
        Kernel[] cur = {new Kernel(0x1000, 2, 1, 1, 128, 1, 1, 64, new long[] {three, 0x20, 7}, "fpi")};
        String[] reports = new String[2];
        for (int run = 0; run < 2; run++) {
            Kernel[] ops = run == 0 ? prev : cur;
            trace.begin();
            old.begin();
            for (Kernel k : ops) {
                k.record(trace);
                old.record(k.entry());
            }
            trace.recordMemset(0x2000, run, 256);
            old.record(TraceEntry.memset(0x2000, run, 256));
            trace.recordD2d(0x3000, 0x4000 + run, 64);
            old.record(TraceEntry.d2d(0x3000, 0x4000 + run, 64));
            reports[0] = trace.endAndDiff(10).orElse(null);
            reports[1] = old.endAndDiff(10).orElse(null);
        }
        assertThat(reports[0]).isEqualTo(reports[1]).isEqualTo("""
                3 differing op(s) of 3
                #0 mod::saxpy [kernel] grid [1, 1, 1] -> [2, 1, 1]; smem 0 -> 64; arg0 2.0f -> 3.0f; arg1 0x10 -> 0x20 (Δ 16)
                #1 fn@0x0 [memset] arg1 0x0 -> 0x1 (Δ 1)
                #2 fn@0x0 [d2d] arg1 0x4000 -> 0x4001 (Δ 1)
                """);
        assertThat(trace.diff(List.of(prev[0].entry()), List.of(cur[0].entry()), 10))
                .isEqualTo(old.diff(List.of(prev[0].entry()), List.of(cur[0].entry()), 10));
    }

    // ---- the cost --------------------------------------------------------------------------------

    @Test
    void recordingAllocatesNothingOnceTheRingHasGrown() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Args args = new Args(new long[] {0x7f00_0000_2000L, 0x7f00_0000_4000L, 4096}, "ppl");
        TraceEntry entry = TraceEntry.d2d(1, 2, 3);
        long[] allocated = new long[3];
        for (int round = 0; round < allocated.length; round++) {
            trace.begin();
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 20_000; i++) {
                trace.recordKernel(0x1000, 256, 1, 1, 128, 1, 1, 0, args);
                trace.recordMemset(0x2000, 0, 4096);
                trace.recordD2d(0x2000, 0x3000, 4096);
                trace.record(entry);
            }
            allocated[round] = threads.getCurrentThreadAllocatedBytes() - before;
        }
        assertThat(allocated[0]).as("the first trace grows the ring").isGreaterThan(1_000_000);
        // 80,000 ops: one allocated object per op would be well over 1 MB.
        assertThat(allocated[2]).as("a trace as long as the last").isLessThan(16_384);
        trace.begin();
        assertThat(trace.size()).isZero();
    }

    /**
     * Fewer bytes than any chunk the ring allocates past its first two (10 bytes a word, at least
     * 1,024 words), and more than the first calls of a test's call sites may allocate.
     */
    private static final long NO_CHUNK = 4096;

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    /** An op of {@code words} words in the ring: a kernel of {@code words - HEADER} arguments. */
    private static Args ofWords(int words) {
        return new Args(words(words - LaunchTrace.HEADER, 0), kinds(words - LaunchTrace.HEADER));
    }

    @Test
    void aTraceAsLongAsOneBeforeUsesTheSameChunksToTheLastWord() {
        int chunk = LaunchTrace.FIRST_CHUNK_WORDS;
        Args eight = ofWords(8);
        // 10-word ops leave the first chunk 2 words short: it is sealed there and a second chunk of
        // as many words takes the rest; the last op makes the next spare.
        trace.begin();
        for (int i = 0; i < chunk / 10 + 2; i++) {
            trace.recordD2d(i, i, i);
        }
        assertThat(trace.endAndDiff(0)).isEmpty();
        trace.begin();
        // Two chunks' worth of 8-word ops fill both to the last word, so nothing needs a new
        // chunk, and one more takes the spare: nothing is allocated, unless begin or endAndDiff
        // left a chunk sealed where the last trace sealed it, or let go of one it used.
        long before = allocatedBytes();
        for (int i = 0; i < 2 * chunk / 8 + 1; i++) {
            trace.recordKernel(i, 1, 1, 1, 1, 1, 1, 0, eight);
        }
        long allocated = allocatedBytes() - before;
        assertThat(allocated).isLessThan(NO_CHUNK);
        assertThat(trace.size()).isEqualTo(2 * chunk / 8 + 1);
    }

    @Test
    void anOpAsLongAsTheNextChunkGoesIntoIt() {
        int chunk = LaunchTrace.FIRST_CHUNK_WORDS;
        Args full = ofWords(chunk);
        for (int round = 0; round < 2; round++) {
            trace.begin();
            long before = allocatedBytes();
            for (int i = 0; i < chunk / 10; i++) {
                trace.recordD2d(i, i, i);
            }
            trace.recordKernel(1, 1, 1, 1, 1, 1, 1, 0, full);
            trace.recordD2d(1, 2, 3);
            trace.recordD2d(4, 5, 6);
            long allocated = allocatedBytes() - before;
            assertThat(trace.size()).isEqualTo(chunk / 10 + 3);
            if (round == 1) {
                assertThat(allocated).as("the second trace fits the chunks of the first").isLessThan(NO_CHUNK);
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
