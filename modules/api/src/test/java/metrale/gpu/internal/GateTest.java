// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.StickyFaultException;
import org.junit.jupiter.api.Test;

/**
 * The lifetime word: calls in flight, grace periods, and a close that waits for the calls in flight
 * (bounded) and then releases exactly once, or leaves the release to the last call out.
 *
 * <p>Waits here are bounded liveness waits (ten seconds), never assertions of speed. Where a test
 * must know that a thread is waiting inside the gate, it waits for that thread to park, which the
 * gate's back-off does after a few hundred spins.
 */
class GateTest {

    private static final long LONG_WAIT = TimeUnit.SECONDS.toNanos(10);

    /** Polls until {@code condition} holds, for at most ten seconds. */
    private static boolean eventually(BooleanSupplier condition) {
        long deadline = System.nanoTime() + LONG_WAIT;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /** {@return whether {@code t} is parked or done} The gate's waits park in their back-off. */
    private static boolean parkedOrDone(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.TIMED_WAITING || s == Thread.State.WAITING || s == Thread.State.TERMINATED;
    }

    // ---- entering and leaving ----------------------------------------------------------------------

    @Test
    void callsInFlightAreCountedUntilTheyLeave() {
        Gate g = new Gate();
        assertThat(g.inFlight()).isZero();
        Gate.Pass a = g.enter("a");
        Gate.Pass b = g.enter("b");
        Gate.Pass r = g.enterReleaser("r");
        assertThat(r.token()).isEqualTo(Gate.RELEASER);
        assertThat(g.inFlight()).isEqualTo(3);
        a.close();
        assertThat(g.inFlight()).isEqualTo(2);
        r.close();
        assertThat(g.inFlight()).isEqualTo(1);
        b.close();
        assertThat(g.inFlight()).isZero();
        assertThat(g.isClosed()).isFalse();
        assertThat(g.released()).isFalse();
    }

    @Test
    void thePassesAreMadeOnceAndSharedByTheCallsOfOneToken() {
        Gate g = new Gate();
        Gate.Pass a = g.enter("a");
        Gate.Pass b = g.enter("b");
        Gate.Pass r1 = g.enterReleaser("r1");
        Gate.Pass r2 = g.enterReleaser("r2");
        assertThat(b).as("two calls of one parity").isSameAs(a);
        assertThat(r2).as("two releasers").isSameAs(r1);
        assertThat(r1).isNotSameAs(a);
        assertThat(g.inFlight()).as("a shared pass still counts each call").isEqualTo(4);
        a.close();
        b.close();
        r1.close();
        r2.close();
        assertThat(g.inFlight()).isZero();
        try (var _ = g.enter("c")) {
            assertThat(g.inFlight()).isEqualTo(1);
        }
        assertThat(g.inFlight()).as("a try-with-resources leaves").isZero();
    }

    @Test
    void aCheckRefusesAsEnterDoesButCountsNothing() {
        Gate g = new Gate();
        g.check("liveBytes");
        assertThat(g.inFlight()).isZero();
        g.latch(new GpuException(CudaError.ILLEGAL_ADDRESS, "op", "boom"), "launch", "App.java:1");
        assertThatThrownBy(() -> g.check("liveBytes")).isInstanceOf(StickyFaultException.class);
        g.close(() -> { }, 0, "Closer.java:7");
        assertThatThrownBy(() -> g.check("liveBytes")).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("Gpu is closed: liveBytes refused").hasMessageContaining("Closer.java:7");
        assertThat(g.inFlight()).isZero();
    }

    @Test
    void aCallEntersUnderTheCurrentParityAndLeavesFromIt() {
        Gate g = new Gate();
        Gate.Pass before = g.enter("before");
        Gate.Pass releaser = g.enterReleaser("releaser");
        // No ordinary call of the new parity is in flight, so the grace period ends once "before" left;
        // the flip happens at once, so a call that enters now is of the other parity.
        Thread waiter = Thread.ofPlatform().start(g::awaitGrace);
        assertThat(eventually(() -> parkedOrDone(waiter))).isTrue();
        Gate.Pass after = g.enter("after");
        assertThat(after.token()).as("the parity of a call entering after the flip").isNotEqualTo(before.token());
        before.close();
        assertThat(eventually(() -> !waiter.isAlive())).as("the grace period ended with the last old call").isTrue();
        after.close();
        releaser.close();
        assertThat(g.inFlight()).isZero();
    }

    // ---- grace periods ---------------------------------------------------------------------------

    @Test
    void aGracePeriodWaitsForTheCallsThatEnteredBeforeIt() throws Exception {
        Gate g = new Gate();
        Gate.Pass old1 = g.enter("old1");
        Gate.Pass old2 = g.enter("old2");
        AtomicBoolean oldLeft = new AtomicBoolean();
        AtomicReference<Boolean> sawOldLeft = new AtomicReference<>();
        Gate.Pass r = g.enterReleaser("destroy");
        Thread releaser = Thread.ofPlatform().start(() -> {
            g.awaitGrace();
            sawOldLeft.set(oldLeft.get());
        });
        assertThat(eventually(() -> parkedOrDone(releaser))).isTrue();
        assertThat(releaser.isAlive()).as("the grace period ended with two old calls in flight").isTrue();
        old1.close();
        // One old call is still in: the releaser must keep waiting. Give it the chance to see the count.
        Thread.sleep(20);
        assertThat(releaser.isAlive()).as("the grace period ended with an old call in flight").isTrue();
        oldLeft.set(true);
        old2.close();
        releaser.join(TimeUnit.NANOSECONDS.toMillis(LONG_WAIT));
        assertThat(releaser.isAlive()).as("the grace period never ended").isFalse();
        assertThat(sawOldLeft.get()).as("every old call had left when the grace period ended").isTrue();
        r.close();
    }

    @Test
    void aGracePeriodDoesNotWaitForCallsThatEnteredAfterIt() throws Exception {
        Gate g = new Gate();
        Gate.Pass old = g.enter("old");
        Gate.Pass r = g.enterReleaser("destroy");
        Thread releaser = Thread.ofPlatform().start(g::awaitGrace);
        assertThat(eventually(() -> parkedOrDone(releaser))).isTrue();
        Gate.Pass young = g.enter("young");
        old.close();
        releaser.join(TimeUnit.NANOSECONDS.toMillis(LONG_WAIT));
        assertThat(releaser.isAlive()).as("the grace period waited for a call that entered after the flip").isFalse();
        assertThat(g.inFlight()).as("the young call and the releaser").isEqualTo(2);
        young.close();
        r.close();
    }

    @Test
    void releasersDoNotWaitForEachOther() throws Exception {
        Gate g = new Gate();
        Gate.Pass r1 = g.enterReleaser("destroy1");
        Gate.Pass r2 = g.enterReleaser("destroy2");
        Thread t = Thread.ofPlatform().start(() -> {
            g.awaitGrace();
            g.awaitGrace();
        });
        g.awaitGrace();
        t.join(TimeUnit.NANOSECONDS.toMillis(LONG_WAIT));
        assertThat(t.isAlive()).as("a releaser waited for a releaser").isFalse();
        r1.close();
        r2.close();
        assertThat(g.inFlight()).isZero();
    }

    @Test
    void successiveGracePeriodsEachWaitForTheirOwnOldCalls() throws Exception {
        Gate g = new Gate();
        Gate.Pass r = g.enterReleaser("destroy");
        g.awaitGrace();
        Gate.Pass a = g.enter("a");
        Thread releaser = Thread.ofPlatform().start(g::awaitGrace);
        assertThat(eventually(() -> parkedOrDone(releaser))).isTrue();
        assertThat(releaser.isAlive()).as("the second grace period ended with a call from before it in flight").isTrue();
        a.close();
        releaser.join(TimeUnit.NANOSECONDS.toMillis(LONG_WAIT));
        assertThat(releaser.isAlive()).isFalse();
        r.close();
    }

    // ---- close ------------------------------------------------------------------------------------

    @Test
    void closeWithNothingInFlightReleasesAtOnceAndOnlyOnce() {
        Gate g = new Gate();
        AtomicInteger runs = new AtomicInteger();
        assertThat(g.close(runs::incrementAndGet, LONG_WAIT, "A.java:1")).isTrue();
        assertThat(runs.get()).as("the release ran before close returned").isEqualTo(1);
        assertThat(g.released()).isTrue();
        assertThat(g.isClosed()).isTrue();
        assertThat(g.close(runs::incrementAndGet, LONG_WAIT, "B.java:2")).as("a second close").isFalse();
        assertThat(runs.get()).isEqualTo(1);
    }

    @Test
    void callsAfterCloseAreRefusedNamingTheClose() {
        Gate g = new Gate();
        g.close(() -> { }, 0, "Closer.java:42");
        for (var call : List.<Runnable>of(() -> g.enter("alloc"), () -> g.enterReleaser("destroyStream"))) {
            assertThatThrownBy(call::run).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("Gpu is closed: ").hasMessageContaining("Closer.java:42")
                    .hasMessageContaining(Thread.currentThread().getName());
        }
        assertThat(g.refusal("free")).isInstanceOf(IllegalStateException.class).hasMessageContaining("free refused");
        assertThat(g.inFlight()).as("a refused call is not counted").isZero();
    }

    @Test
    void closeWaitsForTheCallsInFlightAndThenReleasesItself() throws Exception {
        Gate g = new Gate();
        Gate.Pass a = g.enter("a");
        Gate.Pass r = g.enterReleaser("destroy");
        List<Integer> inFlightAtRelease = new CopyOnWriteArrayList<>();
        List<Thread> releasedOn = new CopyOnWriteArrayList<>();
        AtomicBoolean closeReturned = new AtomicBoolean();
        AtomicBoolean releasedWhenCloseReturned = new AtomicBoolean();
        Thread closer = Thread.ofPlatform().start(() -> {
            g.close(() -> {
                inFlightAtRelease.add(g.inFlight());
                releasedOn.add(Thread.currentThread());
            }, LONG_WAIT, "Closer.java:1");
            releasedWhenCloseReturned.set(!releasedOn.isEmpty());
            closeReturned.set(true);
        });
        assertThat(eventually(() -> g.isClosed() && parkedOrDone(closer))).isTrue();
        assertThat(closeReturned.get()).as("close returned with two calls in flight").isFalse();
        assertThat(releasedOn).as("released with calls in flight").isEmpty();
        a.close();
        Thread.sleep(20);
        assertThat(closeReturned.get()).as("close returned with a releaser in flight").isFalse();
        assertThat(releasedOn).as("released with a releaser in flight").isEmpty();
        r.close();
        closer.join(TimeUnit.NANOSECONDS.toMillis(LONG_WAIT));
        assertThat(closer.isAlive()).as("close never returned").isFalse();
        assertThat(releasedWhenCloseReturned.get()).as("the release had run when close returned").isTrue();
        assertThat(releasedOn).as("the closing thread released, once").containsExactly(closer);
        assertThat(inFlightAtRelease).containsExactly(0);
    }

    /**
     * The last call out can read the pending release after its count reached zero and claim it
     * before the closing thread does (seen on the H200: close returned in 131 µs with the driver
     * still open, the release running on a worker). Close must still return only once the release
     * has run, whichever thread ran it. A race: each round leaves at a different moment around
     * close's own check, many rounds.
     */
    @Test
    void closeReturnsOnlyAfterTheReleaseRanEvenWhenTheLastCallOutRunsIt() throws Exception {
        for (int round = 0; round < 3_000; round++) {
            Gate g = new Gate();
            Gate.Pass pass = g.enter("w");
            AtomicBoolean done = new AtomicBoolean();
            int delay = round % 64;
            Thread leaver = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < delay * 8; i++) {
                    Thread.onSpinWait();
                }
                pass.close();
            });
            g.close(() -> {
                long until = System.nanoTime() + 50_000;
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
                done.set(true);
            }, LONG_WAIT, "Closer.java:1");
            assertThat(done.get()).as("round %d: the release had run when close returned", round).isTrue();
            leaver.join();
        }
    }

    @Test
    void closeStopsWaitingAtItsBoundAndTheLastCallOutReleases() throws Exception {
        Gate g = new Gate();
        Gate.Pass a = g.enter("a");
        Gate.Pass b = g.enter("b");
        List<Thread> releasedOn = new CopyOnWriteArrayList<>();
        List<Integer> inFlightAtRelease = new CopyOnWriteArrayList<>();
        assertThat(g.close(() -> {
            releasedOn.add(Thread.currentThread());
            inFlightAtRelease.add(g.inFlight());
        }, TimeUnit.MILLISECONDS.toNanos(1), "Closer.java:1")).isTrue();
        assertThat(g.released()).as("released with calls in flight").isFalse();
        assertThat(g.inFlight()).isEqualTo(2);
        a.close();
        assertThat(releasedOn).as("released by a call out that was not the last").isEmpty();
        Thread last = Thread.ofPlatform().start(b::close);
        last.join();
        assertThat(releasedOn).as("the last call out released, once").containsExactly(last);
        assertThat(inFlightAtRelease).containsExactly(0);
        assertThat(g.released()).isTrue();
        g.close(() -> releasedOn.add(Thread.currentThread()), 0, "Again.java:2");
        assertThat(releasedOn).hasSize(1);
    }

    @Test
    void aReleaserLeftLastReleases() {
        Gate g = new Gate();
        Gate.Pass r = g.enterReleaser("destroy");
        AtomicInteger runs = new AtomicInteger();
        g.close(runs::incrementAndGet, 0, "Closer.java:1");
        assertThat(runs.get()).isZero();
        r.close();
        assertThat(runs.get()).isEqualTo(1);
    }

    @Test
    void manyCallsRacingCloseReleaseExactlyOnceAndNeverWithACallInFlight() throws Exception {
        for (int round = 0; round < 20; round++) {
            Gate g = new Gate();
            AtomicInteger runs = new AtomicInteger();
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger insideAtRelease = new AtomicInteger(-1);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> ts = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                ts.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                        for (;;) {
                            try (var _ = g.enter("call")) {
                                inside.incrementAndGet();
                                Thread.onSpinWait();
                                inside.decrementAndGet();
                            }
                        }
                    } catch (IllegalStateException closed) {
                        // the gate closed: the loop's end
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            go.countDown();
            Thread.sleep(1);
            long wait = round % 2 == 0 ? LONG_WAIT : 0;
            g.close(() -> {
                runs.incrementAndGet();
                insideAtRelease.set(inside.get());
            }, wait, "Race.java:1");
            for (Thread t : ts) {
                t.join();
            }
            assertThat(runs.get()).as("releases in round %d", round).isEqualTo(1);
            assertThat(insideAtRelease.get()).as("calls inside at the release, round %d", round).isZero();
            assertThat(g.inFlight()).isZero();
        }
    }

    // ---- the fault latch ----------------------------------------------------------------------------

    @Test
    void aLatchedFaultRefusesLaterCallsNamingTheFirst() {
        Gate g = new Gate();
        GpuException original = new GpuException(CudaError.ILLEGAL_ADDRESS, "cuCtxSynchronize", "boom");
        assertThat(g.fault("x")).isEmpty();
        assertThat(g.latch(original, "synchronize", "App.java:7")).isTrue();
        assertThat(g.latch(new GpuException(CudaError.LAUNCH_FAILED, "k", "later"), "launch", "App.java:9"))
                .as("a second latch").isFalse();
        assertThat(g.latched().original()).isSameAs(original);
        assertThat(g.latched().site()).isEqualTo("App.java:7");
        assertThat(g.isClosed()).isFalse();
        assertThatThrownBy(() -> g.enter("alloc")).isInstanceOf(StickyFaultException.class);
        assertThatThrownBy(() -> g.enterReleaser("destroyStream")).isInstanceOf(StickyFaultException.class);
        assertThat(g.fault("copy")).get().isInstanceOf(StickyFaultException.class);
        assertThat(g.refusal("copy")).isInstanceOf(StickyFaultException.class);
        assertThat(g.inFlight()).isZero();
        // A faulted gate still closes and releases.
        AtomicInteger runs = new AtomicInteger();
        assertThat(g.close(runs::incrementAndGet, 0, "App.java:10")).isTrue();
        assertThat(runs.get()).isEqualTo(1);
        assertThat(g.refusal("copy")).as("after close the close is named first").isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aFaultLatchedWithACallInFlightLetsThatCallLeave() {
        Gate g = new Gate();
        Gate.Pass a = g.enter("a");
        g.latch(new GpuException(CudaError.ILLEGAL_ADDRESS, "op", "boom"), "a", "App.java:1");
        AtomicInteger runs = new AtomicInteger();
        g.close(runs::incrementAndGet, 0, "App.java:2");
        assertThat(runs.get()).isZero();
        a.close();
        assertThat(runs.get()).isEqualTo(1);
        assertThat(g.inFlight()).isZero();
    }
}
