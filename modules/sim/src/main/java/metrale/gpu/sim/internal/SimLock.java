// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock of one simulated device, written as a frame once: {@code try (var _ = lock.hold()) { … }}.
 * {@link #hold()} returns one token made with the lock, so a call allocates nothing for its frame.
 * Reentrant: closing the token releases one hold of the calling thread, however deep.
 */
final class SimLock {

    private static final AtomicLong SERIALS = new AtomicLong();

    private final ReentrantLock lock = new ReentrantLock();
    private final Held held = new Held();
    /** Orders the locks of two devices taken together (peer copies), so two threads cannot deadlock. */
    private final long serial = SERIALS.incrementAndGet();

    /** What {@link #hold()} returns: closing it releases the hold. */
    final class Held implements AutoCloseable {

        private Held() {
        }

        @Override
        public void close() {
            lock.unlock();
        }
    }

    /** {@return the token, with the lock held by the calling thread} */
    Held hold() {
        lock.lock();
        return held;
    }

    /** {@return whichever of {@code a} and {@code b} is taken first when both are held} */
    static SimLock first(SimLock a, SimLock b) {
        return a.serial <= b.serial ? a : b;
    }
}
