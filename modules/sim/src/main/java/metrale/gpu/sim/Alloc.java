package metrale.gpu.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One allocation the device knows: device memory at a fake address, managed memory or page-locked
 * host memory at its real native address. Each owns its arena, closed when it is freed, so a freed
 * allocation's segment can no longer be touched.
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
    final Arena arena;
    final MemorySegment segment;
    boolean freed;

    Alloc(long index, Kind kind, long base, long size, Arena arena, MemorySegment segment) {
        this.index = index;
        this.kind = kind;
        this.base = base;
        this.size = size;
        this.arena = arena;
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
