// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The page-locked host ranges {@code [address, address + size)} this runtime allocated, so a copy
 * can tell whether its source is pinned. Thread-safe.
 */
final class PinnedRegistry {

    // Host addresses are unsigned; keyed so floorEntry finds the range that may hold an address.
    private final ConcurrentSkipListMap<Long, MemorySegment> ranges = new ConcurrentSkipListMap<>(Long::compareUnsigned);

    void add(MemorySegment seg) {
        ranges.put(seg.address(), seg);
    }

    /**
     * {@return the registered segment whose base is {@code seg}'s address, removed; {@code null}
     * if none} Only the address counts, as {@code cuMemFreeHost} takes a pointer.
     */
    MemorySegment remove(MemorySegment seg) {
        MemorySegment reg = ranges.get(seg.address());
        if (reg == null) {
            return null;
        }
        return ranges.remove(seg.address(), reg) ? reg : null;
    }

    /** {@return whether all of {@code seg} lies inside one registered range} */
    boolean contains(MemorySegment seg) {
        if (!seg.isNative() || ranges.isEmpty()) {
            return false;
        }
        long a = seg.address();
        Map.Entry<Long, MemorySegment> e = ranges.floorEntry(a);
        if (e == null) {
            return false;
        }
        long base = e.getKey();
        long size = e.getValue().byteSize();
        return Long.compareUnsigned(a - base, size) <= 0 && Long.compareUnsigned(seg.byteSize(), size - (a - base)) <= 0;
    }

    /**
     * {@return whether {@code [p, p + bytes)}, as a device address, lies inside one registered
     * range} Under unified addressing, mapped page-locked memory has the same device address as
     * host address.
     */
    boolean coversAddress(long p, long bytes) {
        Map.Entry<Long, MemorySegment> e = ranges.floorEntry(p);
        if (e == null) {
            return false;
        }
        long off = p - e.getKey();
        long size = e.getValue().byteSize();
        return Long.compareUnsigned(off, size) < 0 && Long.compareUnsigned(bytes, size - off) <= 0;
    }

    /** Removes every range. {@return their segments} */
    List<MemorySegment> drain() {
        List<MemorySegment> out = List.copyOf(ranges.values());
        ranges.clear();
        return out;
    }
}
