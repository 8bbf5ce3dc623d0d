// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The worker group {@code ThreadedLaunchBench} times its phases with: no GPU needed. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GangTest {

    @Test
    void everyWorkerRunsEachPhaseOnceWithItsVariantAndTheTimeSpansTheSlowest() {
        AtomicIntegerArray runs = new AtomicIntegerArray(4 * 3);
        Set<String> names = ConcurrentHashMap.newKeySet();
        AtomicInteger starts = new AtomicInteger();
        try (Gang g = new Gang(4, "t", new Gang.Task() {
            @Override
            public void start(int w) {
                starts.incrementAndGet();
                names.add(Thread.currentThread().getName());
            }

            @Override
            public void run(int w, int variant) {
                runs.incrementAndGet(w * 3 + variant);
                if (w == 3 && variant == 2) {
                    sleep(100);
                }
            }
        })) {
            assertThat(g.size()).isEqualTo(4);
            g.phase(0);
            g.phase(1);
            g.phase(1);
            long slow = g.phase(2);
            assertThat(slow).as("the phase lasts as long as its slowest worker").isGreaterThanOrEqualTo(100_000_000L);
            assertThat(g.phase(0)).isLessThan(slow);
        }
        for (int w = 0; w < 4; w++) {
            assertThat(runs.get(w * 3)).as("worker %d, variant 0", w).isEqualTo(2);
            assertThat(runs.get(w * 3 + 1)).as("worker %d, variant 1", w).isEqualTo(2);
            assertThat(runs.get(w * 3 + 2)).as("worker %d, variant 2", w).isEqualTo(1);
        }
        assertThat(starts.get()).as("start once per worker").isEqualTo(4);
        assertThat(names).containsExactlyInAnyOrder("t-0", "t-1", "t-2", "t-3");
    }

    @Test
    void noWorkerStartsItsTimedPartBeforeEveryWorkerPrepared() {
        AtomicInteger prepared = new AtomicInteger();
        AtomicInteger early = new AtomicInteger();
        try (Gang g = new Gang(3, "t", new Gang.Task() {
            @Override
            public void prepare(int w, int variant) {
                if (w == 0) {
                    sleep(200);
                }
                prepared.incrementAndGet();
            }

            @Override
            public void run(int w, int variant) {
                if (prepared.get() < 3 * (variant + 1)) {
                    early.incrementAndGet();
                }
            }
        })) {
            for (int p = 0; p < 5; p++) {
                long ns = g.phase(p);
                assertThat(ns).as("the slow preparation is outside the timed part").isLessThan(200_000_000L);
            }
        }
        assertThat(early.get()).isZero();
    }

    @Test
    void aWorkersFailureFailsItsPhaseAndTheNextPhaseRunsAgain() {
        AtomicInteger runs = new AtomicInteger();
        try (Gang g = new Gang(3, "t", new Gang.Task() {
            @Override
            public void prepare(int w, int variant) {
                if (w == 1 && variant == 7) {
                    throw new IllegalArgumentException("prepare broke");
                }
            }

            @Override
            public void run(int w, int variant) {
                runs.incrementAndGet();
                if (w == 2 && variant == 9) {
                    throw new ArithmeticException("run broke");
                }
            }
        })) {
            assertThatThrownBy(() -> g.phase(7)).isInstanceOf(IllegalStateException.class)
                    .hasCauseInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> g.phase(9)).hasCauseInstanceOf(ArithmeticException.class);
            runs.set(0);
            assertThat(g.phase(0)).isNotNegative();
            assertThat(runs.get()).isEqualTo(3);
        }
    }

    @Test
    void closeEndsTheWorkersAndAClosedGangRunsNoPhase() throws InterruptedException {
        Gang g = new Gang(2, "closing", (w, v) -> { });
        g.phase(0);
        g.close();
        g.close();
        assertThat(Thread.getAllStackTraces().keySet().stream().map(Thread::getName))
                .noneMatch(n -> n.startsWith("closing-"));
        assertThatThrownBy(() -> g.phase(0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new Gang(0, "none", (w, v) -> { })).isInstanceOf(IllegalArgumentException.class);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
