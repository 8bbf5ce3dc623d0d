package metrale.gpu.sim.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The JVM's one simulated address space and handle space, shared by every simulated device and
 * process, as CUDA's unified addressing makes device pointers and handles unique in a process. So
 * a pointer or handle of one simulator runtime is never valid in another: that runtime answers
 * {@code INVALID_VALUE} or {@code INVALID_HANDLE} and touches nothing of its own.
 */
final class Ids {

    /**
     * The first fake device address: above the 47-bit user address space of x86-64 Linux, so it
     * can never collide with a native (pinned or managed) range.
     */
    static final long DEVICE_BASE = 0x0000_a000_0000_0000L;
    /** The first handle; below it lie the special stream handles 0, 1 and 2. */
    static final long FIRST_HANDLE = 0x5100;

    private static final AtomicLong NEXT_ADDRESS = new AtomicLong(DEVICE_BASE);
    private static final AtomicLong NEXT_HANDLE = new AtomicLong(FIRST_HANDLE);

    private Ids() {
    }

    /**
     * {@return the base of a fresh fake device range of {@code span} bytes, never handed out before}
     *
     * @param span the bytes to reserve, a multiple of the allocation alignment (gap included)
     */
    static long reserveAddresses(long span) {
        return NEXT_ADDRESS.getAndAdd(span);
    }

    /** {@return a handle never handed out before in this JVM} */
    static long handle() {
        return NEXT_HANDLE.getAndIncrement();
    }
}
