// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashSet;
import java.util.Set;
import java.util.function.LongSupplier;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Driver;

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
 * <p>The device calls its doors ({@code cuMemAllocAsync}, {@code cuMemFreeAsync}, the pool's
 * attributes and trim) after its own stream and capture checks. Not thread-safe: the device lock
 * guards it.
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

    /**
     * {@code cuMemAllocAsync} of {@code bytes}: {@return the address {@code allocate} gives, a fresh
     * range charged to the device less the reserved bytes it draws on} A failed allocation leaves
     * the reserve as it was.
     *
     * @param allocate the device's allocation of {@code bytes}, with its checks and injected faults
     */
    long allocate(long bytes, LongSupplier allocate) {
        long take = Math.min(cached, bytes);
        cached -= take;
        memory.uncharge(take);
        long p;
        try {
            p = allocate.getAsLong();
        } catch (RuntimeException e) {
            cached += take;
            memory.charge(take);
            throw e;
        }
        live.add(p);
        used += bytes;
        usedHigh = Math.max(usedHigh, used);
        reservedHigh = Math.max(reservedHigh, reserved());
        return p;
    }

    /** {@code cuMemFree} of a pool allocation: released at once, as the driver's free. */
    void freedNow(long ptr, long bytes) {
        if (live.remove(ptr)) {
            used -= bytes;
        }
    }

    /**
     * {@code cuMemFreeAsync} of {@code ptr}: {@return the stream-ordered work that frees it}
     *
     * @param d the call's operands, for the message
     * @throws GpuException {@code INVALID_VALUE} unless {@code ptr} is a live allocation of the pool
     */
    Work freeAsync(long ptr, String op, String d) {
        Alloc a = memory.atBase(ptr);
        if (a == null || !live.contains(ptr)) {
            throw new GpuException(CudaError.INVALID_VALUE, op, d + ": not a live allocation of cuMemAllocAsync ("
                    + memory.whyNotFreeable(ptr, a != null && a.kind == Alloc.Kind.PINNED ? a : null) + ")");
        }
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

    /** {@code cuMemPoolGetAttribute}: {@return one of the 64-bit attributes, in bytes} */
    long attribute(int attr, String op) {
        return switch (attr) {
            case Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD -> threshold;
            case Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT -> reserved();
            case Driver.MEMPOOL_ATTR_USED_MEM_CURRENT -> used;
            case Driver.MEMPOOL_ATTR_RESERVED_MEM_HIGH -> reservedHigh;
            case Driver.MEMPOOL_ATTR_USED_MEM_HIGH -> usedHigh;
            default -> throw new GpuException(CudaError.INVALID_VALUE, op, "attr=" + attr
                    + ": not a 64-bit pool attribute (4 to 8)");
        };
    }

    /**
     * {@code cuMemPoolSetAttribute}: the release threshold, or a high-water mark set to 0, which
     * resets it to the current value.
     */
    void setAttribute(int attr, long value, String op) {
        if (attr == Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD) {
            threshold = value;
        } else if (attr == Driver.MEMPOOL_ATTR_RESERVED_MEM_HIGH && value == 0) {
            reservedHigh = reserved();
        } else if (attr == Driver.MEMPOOL_ATTR_USED_MEM_HIGH && value == 0) {
            usedHigh = used;
        } else {
            throw new GpuException(CudaError.INVALID_VALUE, op, "attr=" + attr + ", value=" + value
                    + ": settable are the release threshold (4) and, to 0, the high-water marks (6, 8)");
        }
    }
}
