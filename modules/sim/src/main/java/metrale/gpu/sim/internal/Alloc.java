package metrale.gpu.sim.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

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

    Alloc(long index, Kind kind, long base, long size, Arena arena, MemorySegment block, MemorySegment segment) {
        this.index = index;
        this.kind = kind;
        this.base = base;
        this.size = size;
        this.arena = arena;
        this.block = block;
        this.segment = segment;
    }

    /** {@return whether {@code [addr, addr + bytes)} lies inside this allocation} */
    boolean contains(long addr, long bytes) {
        long off = addr - base;
        return off >= 0 && bytes >= 0 && bytes <= size && off <= size - bytes;
    }

    @Override
    public String toString() {
        return kind.label + " allocation #" + index + " [0x" + Long.toHexString(base) + ", +" + size + " bytes)"
                + (freed ? " (freed)" : "");
    }
}
