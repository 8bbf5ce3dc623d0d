// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A driver call stopped by {@link CountingDriver#holdNext(String)}. It waits at most a minute, so a test
 * that never lets it go still ends.
 */
public final class HeldCall {
    private final String method;
    private final AtomicLong calls;
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch go = new CountDownLatch(1);
    private volatile long callsAtEntry = -1;
    private volatile long callsAtRelease = -1;

    HeldCall(String method, AtomicLong calls) {
        this.method = method;
        this.calls = calls;
    }

    /**
     * {@return whether the held call arrived within the time given}
     *
     * @param seconds how long to wait for it
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitEntered(long seconds) throws InterruptedException {
        return entered.await(seconds, TimeUnit.SECONDS);
    }

    /** Lets the held call go on to the backend. */
    public void proceed() {
        go.countDown();
    }

    /**
     * {@return the driver calls any thread made while the held call waited, or -1 before it was
     * let go} The held call itself is not counted.
     */
    public long callsWhileHeld() {
        long at = callsAtRelease;
        return at < 0 ? -1 : at - callsAtEntry;
    }

    void hold() {
        callsAtEntry = calls.get();
        entered.countDown();
        try {
            if (!go.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("CountingDriver: the held " + method + " was never let go");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("CountingDriver: interrupted while holding " + method, e);
        } finally {
            callsAtRelease = calls.get();
        }
    }
}
