// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashSet;
import java.util.Set;

/**
 * The device's default memory pool of {@code cuMemAllocAsync}, as CUDA keeps it: memory freed by
 * {@code cuMemFreeAsync} stays reserved by the pool (charged to the device, so
 * {@code cuMemGetInfo} does not see it free) until a stream, event or context synchronization finds
 * the pool holding more than its release threshold, or {@code cuMemPoolTrimTo} trims it. A later
 * allocation draws on the reserved bytes before the device's.
 *
 * <p>The simulator keeps the reserve as a byte count, not as blocks: each allocation still gets a
 * fresh address range and a freed one still faults on use, which CUDA cannot promise. Reserved
 * bytes are {@code used + pending + cached}: pending frees are enqueued but not yet run.
 *
 * <p>Not thread-safe: the device lock guards it.
 */
final class SimAsyncPool {

    private final DeviceMemory memory;
    private final Set<Long> live = new HashSet<>();
    private long used;
    private long pending;
    private long cached;
    private long usedHigh;
    private long reservedHigh;
    /** {@code CU_MEMPOOL_ATTR_RELEASE_THRESHOLD}, unsigned: CUDA's default 0 releases at every sync. */
    private long threshold;

    SimAsyncPool(DeviceMemory memory) {
        this.memory = memory;
    }

    /** {@return the cached bytes an allocation of {@code bytes} may draw on, taken off the cache and off the device's charge} */
    long draw(long bytes) {
        long take = Math.min(cached, bytes);
        cached -= take;
        memory.uncharge(take);
        return take;
    }

    /** Gives back what {@link #draw} took, after a failed allocation. */
    void undraw(long take) {
        cached += take;
        memory.charge(take);
    }

    /** {@code ptr} of {@code bytes} was allocated. */
    void allocated(long ptr, long bytes) {
        live.add(ptr);
        used += bytes;
        usedHigh = Math.max(usedHigh, used);
        reservedHigh = Math.max(reservedHigh, reserved());
    }

    /** {@return whether {@code ptr} is a live allocation of the pool} */
    boolean owns(long ptr) {
        return live.contains(ptr);
    }

    /** {@code cuMemFree} of a pool allocation: released at once, as the driver's free. */
    void freedNow(long ptr, long bytes) {
        if (live.remove(ptr)) {
            used -= bytes;
        }
    }

    /** {@return the stream-ordered work of {@code cuMemFreeAsync} of {@code a}} {@code a} must be a live pool allocation. */
    Work freeAsync(Alloc a) {
        live.remove(a.base);
        used -= a.size;
        pending += a.size;
        return new Work() {
            @Override
            public void run(Engine e) {
                pending -= a.size;
                if (!a.freed) {
                    // The range is unmapped (a later use faults); its bytes stay the pool's.
                    memory.free(a);
                    cached += a.size;
                    memory.charge(a.size);
                }
            }

            @Override
            public String describe() {
                return "cuMemFreeAsync(" + a + ")";
            }
        };
    }

    /** A stream, event or context synchronization: the cache above the release threshold goes back to the device. */
    void synchronizedHost() {
        long over = reserved() - threshold;
        if (Long.compareUnsigned(reserved(), threshold) > 0) {
            release(Math.min(cached, over));
        }
    }

    /** {@code cuMemPoolTrimTo}: releases cached bytes until the pool reserves at most {@code keep} (unsigned). */
    void trimTo(long keep) {
        if (Long.compareUnsigned(reserved(), keep) > 0) {
            release(Math.min(cached, reserved() - keep));
        }
    }

    private void release(long bytes) {
        cached -= bytes;
        memory.uncharge(bytes);
    }

    long reserved() {
        return used + pending + cached;
    }

    long used() {
        return used;
    }

    long usedHigh() {
        return usedHigh;
    }

    long reservedHigh() {
        return reservedHigh;
    }

    long threshold() {
        return threshold;
    }

    void threshold(long bytes) {
        threshold = bytes;
    }

    /** Resets the high-water mark of used bytes to the current use ({@code CU_MEMPOOL_ATTR_USED_MEM_HIGH} set to 0). */
    void resetUsedHigh() {
        usedHigh = used;
    }

    /** Resets the high-water mark of reserved bytes ({@code CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH} set to 0). */
    void resetReservedHigh() {
        reservedHigh = reserved();
    }
}
