// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The parallel block runner: every block runs exactly once whatever the grid and participant
 * counts, blocks really run at once, each thread keeps its own participant, and a failing launch
 * reports its lowest failing block after every block below it ran.
 */
class BlockPoolTest {

    /** Five participants: an odd count, and more than most grids in these tests have chunks per slot. */
    private static final BlockPool FIVE = new BlockPool(5);

    @AfterAll
    static void stopHelpers() {
        FIVE.close();
    }

    /** {@return how many times each block ran} */
    private static AtomicIntegerArray runCounting(BlockPool pool, int blocks) {
        AtomicIntegerArray runs = new AtomicIntegerArray(blocks);
        pool.run(blocks, () -> b -> runs.incrementAndGet((int) b));
        return runs;
    }

    private static void assertEachOnce(AtomicIntegerArray runs) {
        for (int b = 0; b < runs.length(); b++) {
            assertThat(runs.get(b)).as("runs of block %d of %d", b, runs.length()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 39, 40, 41, 97, 4096, 100_003})
    void everyBlockRunsExactlyOnce(int blocks) {
        assertEachOnce(runCounting(FIVE, blocks));
        assertEachOnce(runCounting(BlockPool.shared(), blocks));
    }

    @Property(tries = 200)
    void everyBlockRunsExactlyOnceForAnyGridAndParticipants(@ForAll @IntRange(min = 1, max = 5000) int blocks,
                                                             @ForAll @IntRange(min = 1, max = 6) int parallelism) {
        try (BlockPool pool = new BlockPool(parallelism)) {
            assertEachOnce(runCounting(pool, blocks));
        }
    }

    @Test
    void anEmptyGridRunsNothing() {
        AtomicInteger participants = new AtomicInteger();
        FIVE.run(0, () -> {
            participants.incrementAndGet();
            return b -> { };
        });
        assertThat(participants).hasValue(0);
    }

    @Test
    void blocksRunAtOnceOnSeveralThreads() throws InterruptedException {
        // Block 0 waits until the last block has started: only a second thread can start it.
        int blocks = 64;
        CountDownLatch lastStarted = new CountDownLatch(1);
        AtomicInteger waited = new AtomicInteger();
        FIVE.run(blocks, () -> b -> {
            if (b == blocks - 1) {
                lastStarted.countDown();
            }
            if (b == 0) {
                try {
                    if (lastStarted.await(10, TimeUnit.SECONDS)) {
                        waited.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        assertThat(waited).as("block 0 saw the last block start while it ran").hasValue(1);
    }

    @Test
    void eachThreadMakesOneParticipantOnItselfAndEndsIt() {
        Map<Thread, AtomicInteger> made = new ConcurrentHashMap<>();
        Map<Thread, AtomicInteger> ended = new ConcurrentHashMap<>();
        Set<String> wrongThread = ConcurrentHashMap.newKeySet();
        AtomicLong blocksRun = new AtomicLong();
        for (int round = 0; round < 20; round++) {
            made.clear();
            ended.clear();
            FIVE.run(2000, () -> {
                Thread mine = Thread.currentThread();
                made.computeIfAbsent(mine, t -> new AtomicInteger()).incrementAndGet();
                return new BlockPool.Participant() {
                    @Override
                    public void run(long block) {
                        if (Thread.currentThread() != mine) {
                            wrongThread.add("block " + block);
                        }
                        blocksRun.incrementAndGet();
                    }

                    @Override
                    public void done() {
                        if (Thread.currentThread() != mine) {
                            wrongThread.add("done");
                        }
                        ended.computeIfAbsent(mine, t -> new AtomicInteger()).incrementAndGet();
                    }
                };
            });
            assertThat(made.values()).allSatisfy(c -> assertThat(c).hasValue(1));
            // A helper's done() may still be under way when run returns; give it a moment.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ended.size() < made.size() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertThat(ended.keySet()).isEqualTo(made.keySet());
            assertThat(ended.values()).allSatisfy(c -> assertThat(c).hasValue(1));
        }
        assertThat(wrongThread).isEmpty();
        assertThat(blocksRun).hasValue(20 * 2000);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 38, 39, 999})
    void aFailureStopsTheLaunchAfterEveryBlockBelowItRan(int failing) {
        int blocks = 1000;
        AtomicIntegerArray runs = new AtomicIntegerArray(blocks);
        assertThatThrownBy(() -> FIVE.run(blocks, () -> b -> {
            runs.incrementAndGet((int) b);
            if (b == failing) {
                throw new IllegalStateException("block " + b);
            }
        })).isInstanceOf(IllegalStateException.class).hasMessage("block " + failing);
        for (int b = 0; b <= failing; b++) {
            assertThat(runs.get(b)).as("block %d", b).isEqualTo(1);
        }
        for (int b = failing + 1; b < blocks; b++) {
            assertThat(runs.get(b)).as("block %d", b).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void ofSeveralFailingBlocksTheLowestIsReportedEveryTime() {
        // Every block from 700 on fails, and a late chunk's failure is usually thrown first.
        for (int round = 0; round < 50; round++) {
            assertThatThrownBy(() -> FIVE.run(1000, () -> b -> {
                if (b >= 700 && (b == 700 || b % 3 == 0)) {
                    throw new IllegalArgumentException("block " + b);
                }
            })).hasMessage("block 700");
        }
    }

    @Test
    void errorsAndCheckedExceptionsReachTheLauncher() {
        assertThatThrownBy(() -> FIVE.run(100, () -> b -> {
            if (b == 99) {
                throw new AssertionError("device-side assert");
            }
        })).isInstanceOf(AssertionError.class).hasMessage("device-side assert");
        assertThatThrownBy(() -> FIVE.run(100, () -> b -> {
            if (b == 98) {
                sneaky(new IOException("checked"));
            }
        })).isInstanceOf(UndeclaredThrowableException.class).cause().hasMessage("checked");
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneaky(Throwable t) throws T {
        throw (T) t;
    }

    @Test
    void aFailingParticipantIsTheFailureOfItsFirstBlock() {
        AtomicInteger made = new AtomicInteger();
        assertThatThrownBy(() -> FIVE.run(3, () -> {
            if (made.incrementAndGet() == 1) {
                throw new IllegalStateException("no shared memory");
            }
            return b -> { };
        })).hasMessage("no shared memory");
    }

    @Test
    void aBlockMayRunANestedLaunch() {
        AtomicIntegerArray inner = new AtomicIntegerArray(16 * 50);
        FIVE.run(16, () -> outer -> FIVE.run(50, () -> b -> inner.incrementAndGet((int) (outer * 50 + b))));
        assertEachOnce(inner);
    }

    @Test
    void launchesFromSeveralThreadsAtOnceEachRunEveryBlockOnce() throws InterruptedException {
        List<Thread> launchers = new ArrayList<>();
        List<AtomicIntegerArray> counts = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            AtomicIntegerArray runs = new AtomicIntegerArray(3001 + i);
            counts.add(runs);
            launchers.add(Thread.ofPlatform().start(() -> {
                try {
                    for (int round = 0; round < 20; round++) {
                        FIVE.run(runs.length(), () -> b -> runs.incrementAndGet((int) b));
                    }
                } catch (Throwable t) {
                    synchronized (failures) {
                        failures.add(t);
                    }
                }
            }));
        }
        for (Thread t : launchers) {
            t.join();
        }
        assertThat(failures).isEmpty();
        for (AtomicIntegerArray runs : counts) {
            for (int b = 0; b < runs.length(); b++) {
                assertThat(runs.get(b)).isEqualTo(20);
            }
        }
    }

    @Test
    void anInterruptedLauncherStillWaitsForEveryBlockAndKeepsItsInterrupt() {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        Thread self = Thread.currentThread();
        try {
            FIVE.run(40, () -> b -> {
                running.incrementAndGet();
                if (b == 0) {
                    self.interrupt();
                } else {
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                running.decrementAndGet();
                finished.incrementAndGet();
            });
            assertThat(running).as("blocks still running after run returned").hasValue(0);
            assertThat(finished).hasValue(40);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }
}
