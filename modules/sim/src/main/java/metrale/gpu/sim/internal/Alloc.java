// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * One allocation the device knows: device memory at a fake address, managed memory or page-locked
 * host memory at its real native address. Each owns its arena, closed when it is freed, so a freed
 * allocation's segment can no longer be touched; except small device allocations, whose native
 * block comes from the device's pool ({@link #arena} {@code null}, {@link #block} set) and goes
 * back to it. Device memory is reached only through its fake address, which is never reused, so a
 * stale pointer still finds no live allocation.
 */
final class Alloc {

    /** What kind of memory an allocation is. */
    enum Kind {
        /** {@code cuMemAlloc}: a fake device address; charged to the capacity. */
        DEVICE("device"),
        /** {@code cuMemAllocManaged}: its native address, reachable by the host; charged to the capacity. */
        MANAGED("managed"),
        /** {@code cuMemHostAlloc}: page-locked host memory, device pointer = host pointer; not charged. */
        PINNED("page-locked host");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    final long index;
    final Kind kind;
    final long base;
    final long size;
    /** The allocation's own arena, or {@code null} when its block is pooled. */
    final Arena arena;
    /** The pooled native block (a size class, at least {@link #size} bytes), or {@code null}. */
    final MemorySegment block;
    /** Exactly {@link #size} bytes: views and copies never reach past the allocation. */
    final MemorySegment segment;
    boolean freed;
    /**
     * Freed by the application and held in the runtime's quarantine: copies (the runtime's red-zone
     * scan) still reach it, a kernel does not. Set once the work enqueued before the hold has run.
     */
    volatile boolean held;
    /**
     * The bytes of the application's buffer, the runtime's red zone after them: the PTX engine's
     * accesses end here, other accesses at {@link #size}. {@link #size} when there is no red zone.
     */
    volatile long buffer;
    /** The device allocation a pool block was carved from, or {@code null} for an allocation of the driver's own. */
    final Alloc parent;
    /**
     * The runtime's pool blocks carved from this allocation, by base, never overlapping; {@code null}
     * until the first. Once set, the bytes outside every block belong to the pool and fault.
     * Concurrent: a peer's kernel looks addresses up without this device's lock.
     */
    volatile ConcurrentSkipListMap<Long, Alloc> blocks;
    /**
     * Blocks released on a stream whose release has not run yet, or displaced by a block carved over
     * them before it did: work enqueued before the release may still reach them.
     */
    final ConcurrentLinkedDeque<Alloc> releasing;

    Alloc(long index, Kind kind, long base, long size, Arena arena, MemorySegment block, MemorySegment segment) {
        this(index, kind, base, size, arena, block, segment, null);
    }

    private Alloc(long index, Kind kind, long base, long size, Arena arena, MemorySegment block, MemorySegment segment,
                  Alloc parent) {
        this.index = index;
        this.kind = kind;
        this.base = base;
        this.size = size;
        this.arena = arena;
        this.block = block;
        this.segment = segment;
        this.parent = parent;
        this.buffer = size;
        this.releasing = parent == null && kind == Kind.DEVICE ? new ConcurrentLinkedDeque<>() : null;
    }

    /** {@return a pool block of {@code size} bytes at {@code base}, inside this device allocation} */
    Alloc carve(long index, long base, long size) {
        return new Alloc(index, kind, base, size, null, null, segment.asSlice(base - this.base, size), this);
    }

    /**
     * {@return the pool block of this allocation holding {@code addr}, or {@code null}} Only where
     * {@link #blocks} is set. Of a block and releasing ones that hold it, the one reaching furthest:
     * work enqueued before a release may use the old block's bytes, and which work asks is not known here.
     * A releasing block the quarantine held is no candidate: the work before its free has run.
     */
    Alloc blockAt(long addr) {
        var e = blocks.floorEntry(addr);
        Alloc best = e != null && addr - e.getKey() < e.getValue().size ? e.getValue() : null;
        for (Alloc r : releasing) {
            if (!r.held && addr - r.base >= 0 && addr - r.base < r.size
                    && (best == null || r.base + r.size > best.base + best.size)) {
                best = r;
            }
        }
        return best;
    }

    /** {@return whether {@code [addr, addr + bytes)} lies inside this allocation} */
    boolean contains(long addr, long bytes) {
        long off = addr - base;
        return off >= 0 && bytes >= 0 && bytes <= size && off <= size - bytes;
    }

    @Override
    public String toString() {
        // No number: the runtime adds the ledger's creation index for the same buffer, and two
        // numbers for one buffer in one message mislead.
        String state = freed ? " (freed)" : held ? " (freed, held in the runtime's quarantine)" : "";
        if (parent != null) {
            return "pool block [0x" + Long.toHexString(base) + ", +" + size + " bytes)" + state
                    + " of the runtime's caching pool";
        }
        return kind.label + " allocation [0x" + Long.toHexString(base) + ", +" + size + " bytes)" + state;
    }
}
