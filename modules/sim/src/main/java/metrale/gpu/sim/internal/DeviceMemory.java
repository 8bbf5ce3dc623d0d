// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The simulated address space: device allocations at fake addresses, managed and page-locked
 * allocations at their native addresses, all in one map from base address to allocation.
 *
 * <p>Device addresses come from the JVM's one simulated address space ({@link Ids}), above the
 * 47-bit user address space of x86-64 Linux, so they can never collide with a native (pinned or
 * managed) range, nor with another simulated device's. They are 256-byte aligned, never reused,
 * and separated by unmapped gaps of at least {@link #GAP} bytes, so an off-by-N pointer, a stale
 * pointer or another runtime's pointer is never valid here.
 *
 * <p>Capacity is charged in exact bytes for device and managed memory; page-locked memory is host
 * memory and is not charged. Not thread-safe: the device lock guards it, except that {@link #find(long)}
 * may be called from a peer's kernel without it.
 */
final class DeviceMemory {

    /** The unmapped gap after each device allocation. */
    static final long GAP = 64 * 1024;
    /** Device allocation alignment, as {@code cuMemAlloc} guarantees. */
    static final long ALIGN = 256;
    /** How many freed allocations are remembered to explain stale pointers. */
    private static final int FREED_KEPT = 4096;
    /**
     * Device allocations up to this size take a pooled native block. Closing a shared arena per
     * free costs a handshake with every JVM thread, which dominated alloc/free in op-sequence tests.
     */
    static final long POOLED_MAX = 1 << 20;

    // Concurrent so that a kernel of a peer context (peer access enabled) may look addresses up
    // without this device's lock; every change still happens under it.
    private final java.util.concurrent.ConcurrentSkipListMap<Long, Alloc> live = new java.util.concurrent.ConcurrentSkipListMap<>();
    private final TreeMap<Long, Alloc> freed = new TreeMap<>();
    // Idle pooled blocks by size class. The pool holds at most the peak of live pooled bytes.
    private final Arena pool = Arena.ofShared();
    private final HashMap<Long, ArrayDeque<MemorySegment>> idle = new HashMap<>();
    private final ArrayDeque<Alloc> freedOrder = new ArrayDeque<>();
    // Released pool blocks, to explain a stale pointer into pool memory; a later block at the same base replaces one.
    private final TreeMap<Long, Alloc> freedBlocks = new TreeMap<>();
    private final ArrayDeque<Alloc> freedBlockOrder = new ArrayDeque<>();
    private long capacity;
    private long used;
    private long count;
    private final byte fill;
    /** The shadow "written" map, or {@code null} when the initcheck is off. */
    InitCheck init;

    DeviceMemory(long capacity, byte fill) {
        this.capacity = capacity;
        this.fill = fill;
    }

    long capacity() {
        return capacity;
    }

    /** {@return the byte new memory is filled with} */
    byte fill() {
        return fill;
    }

    void setCapacity(long bytes) {
        this.capacity = bytes;
    }

    long used() {
        return used;
    }

    long free() {
        return Math.max(0, capacity - used);
    }

    /** Charges {@code bytes} no allocation holds: memory a pool keeps reserved. */
    void charge(long bytes) {
        used += bytes;
    }

    /** Gives back bytes {@link #charge} took. */
    void uncharge(long bytes) {
        used -= bytes;
    }

    /** {@return whether {@code bytes} more bytes fit in the capacity} */
    boolean fits(long bytes) {
        return bytes <= capacity - used;
    }

    /**
     * Allocates memory of the given kind, filled with the garbage pattern.
     *
     * @return the allocation, or {@code null} when the JVM cannot get the native memory
     */
    Alloc allocate(Alloc.Kind kind, long bytes) {
        Arena arena = null;
        MemorySegment block = null;
        MemorySegment seg;
        if (kind == Alloc.Kind.DEVICE && bytes > 0 && bytes <= POOLED_MAX) {
            long cls = sizeClass(bytes);
            ArrayDeque<MemorySegment> q = idle.get(cls);
            block = q == null ? null : q.pollLast();
            if (block == null) {
                try {
                    block = pool.allocate(cls, ALIGN);
                } catch (OutOfMemoryError e) {
                    return null;
                }
            }
            seg = block.asSlice(0, bytes);
        } else {
            arena = Arena.ofShared();
            try {
                seg = arena.allocate(bytes, kind == Alloc.Kind.PINNED ? 4096 : ALIGN);
            } catch (OutOfMemoryError | IllegalArgumentException e) {
                arena.close();
                return null;
            }
        }
        seg.fill(fill);
        long base;
        if (kind == Alloc.Kind.DEVICE) {
            base = Ids.reserveAddresses(alignUp(bytes, ALIGN) + GAP);
        } else {
            base = seg.address();
        }
        Alloc a = new Alloc(++count, kind, base, bytes, arena, block, seg);
        live.put(base, a);
        if (init != null) {
            init.allocated(a);
        }
        if (kind != Alloc.Kind.PINNED) {
            used += bytes;
        }
        return a;
    }

    /** Frees a live allocation: closes its arena, so its segment can no longer be used, or returns its pooled block. */
    void free(Alloc a) {
        live.remove(a.base);
        a.freed = true;
        if (a.blocks != null) {
            for (Alloc b : List.copyOf(a.blocks.values())) {
                released(b);
            }
            for (Alloc b : List.copyOf(a.releasing)) {
                released(b);
            }
        }
        if (init != null) {
            init.freed(a);
        }
        if (a.arena != null) {
            a.arena.close();
        } else {
            idle.computeIfAbsent(a.block.byteSize(), k -> new ArrayDeque<>()).addLast(a.block);
        }
        if (a.kind != Alloc.Kind.PINNED) {
            used -= a.size;
        }
        if (a.kind == Alloc.Kind.DEVICE) {
            // Native ranges are reused by the allocator; only fake device ranges stay meaningful.
            freed.put(a.base, a);
            freedOrder.addLast(a);
            if (freedOrder.size() > FREED_KEPT) {
                Alloc old = freedOrder.removeFirst();
                freed.remove(old.base);
            }
        }
    }

    /** {@return the live allocation whose base is exactly {@code addr}, or {@code null}} */
    Alloc atBase(long addr) {
        return live.get(addr);
    }

    /** {@return the live allocation containing {@code addr}, or {@code null}} */
    Alloc find(long addr) {
        Map.Entry<Long, Alloc> e = live.floorEntry(addr);
        if (e == null) {
            return null;
        }
        Alloc a = e.getValue();
        if (addr - a.base >= a.size) {
            return null;
        }
        return a.blocks == null ? a : a.blockAt(addr);
    }

    /** {@return the live allocation holding all of {@code [addr, addr + bytes)}, or {@code null}} */
    Alloc find(long addr, long bytes) {
        Alloc a = find(addr);
        return a != null && a.contains(addr, bytes) ? a : null;
    }

    /**
     * Makes {@code [addr, addr + bytes)} a pool block of its own (see {@code Driver.poolBlockCarved}):
     * from the first block on, its allocation's bytes outside every block fault. A block it overlaps
     * is displaced: it stays reachable until its release runs.
     *
     * @return the block
     * @throws metrale.gpu.GpuException {@code INVALID_VALUE} when the range is not inside one live device allocation
     */
    Alloc carve(long addr, long bytes, String op) {
        Map.Entry<Long, Alloc> e = live.floorEntry(addr);
        Alloc a = e == null ? null : e.getValue();
        if (a == null || a.kind != Alloc.Kind.DEVICE || bytes <= 0 || addr - a.base > a.size - bytes) {
            throw new metrale.gpu.GpuException(metrale.gpu.CudaError.INVALID_VALUE, op, "0x" + Long.toHexString(addr)
                    + " (+" + bytes + " bytes) is not inside one live device allocation");
        }
        var blocks = a.blocks;
        if (blocks == null) {
            blocks = new java.util.concurrent.ConcurrentSkipListMap<>();
            a.blocks = blocks;
        }
        Map.Entry<Long, Alloc> below = blocks.floorEntry(addr);
        Long from = below != null && addr - below.getKey() < below.getValue().size ? below.getKey() : addr;
        for (var it = blocks.subMap(from, true, addr + bytes, false).values().iterator(); it.hasNext(); ) {
            a.releasing.add(it.next());
            it.remove();
        }
        Alloc b = a.carve(++count, addr, bytes);
        blocks.put(addr, b);
        if (init != null) {
            init.allocated(b);
        }
        return b;
    }

    /**
     * {@return the pool block carved at {@code addr}, taken out of its allocation's blocks so that it
     * is releasing, or {@code null} when no block is carved there} Exactly the block carved at that
     * base: an older block releasing at the same base (its work still pending) is not the one the
     * runtime frees.
     */
    Alloc releaseBlock(long addr) {
        Map.Entry<Long, Alloc> e = live.floorEntry(addr);
        Alloc p = e == null ? null : e.getValue();
        if (p == null || p.blocks == null || addr - p.base >= p.size) {
            return null;
        }
        Alloc b = p.blocks.get(addr);
        if (b == null) {
            return null;
        }
        if (p.blocks.remove(addr, b)) {
            p.releasing.add(b);
        }
        return b;
    }

    /**
     * {@return the device allocation or pool block based exactly at {@code addr}, for the
     * runtime's quarantine to hold, or {@code null}}
     */
    Alloc heldAt(long addr) {
        Map.Entry<Long, Alloc> e = live.floorEntry(addr);
        Alloc p = e == null ? null : e.getValue();
        if (p == null || p.kind != Alloc.Kind.DEVICE || addr - p.base >= p.size) {
            return null;
        }
        if (p.blocks != null) {
            return p.blocks.get(addr);
        }
        return p.base == addr ? p : null;
    }

    /** Ends a released block: an address in it now faults, as pool memory no block holds. */
    void released(Alloc b) {
        if (b.freed) {
            return;
        }
        b.parent.releasing.remove(b);
        b.parent.blocks.remove(b.base, b);
        b.freed = true;
        if (init != null) {
            init.freed(b);
        }
        freedBlocks.put(b.base, b);
        freedBlockOrder.addLast(b);
        if (freedBlockOrder.size() > FREED_KEPT) {
            Alloc old = freedBlockOrder.removeFirst();
            freedBlocks.remove(old.base, old);
        }
    }

    /** {@return the freed device allocation that contained {@code addr}, if still remembered, or {@code null}} */
    Alloc findFreed(long addr) {
        Map.Entry<Long, Alloc> e = freed.floorEntry(addr);
        if (e == null) {
            return null;
        }
        Alloc a = e.getValue();
        return addr - a.base < a.size ? a : null;
    }

    /**
     * {@return the segment for {@code [addr, addr + bytes)}}
     *
     * @throws SimFault {@code ILLEGAL_ADDRESS} when it is not inside one live allocation (work that
     *                  outlived the memory it touches)
     */
    MemorySegment rangeOrFault(long addr, long bytes, String what) {
        Alloc a = find(addr, bytes);
        if (a == null) {
            throw new SimFault(metrale.gpu.CudaError.ILLEGAL_ADDRESS, what + ": " + explain(addr, bytes));
        }
        return a.segment.asSlice(addr - a.base, bytes);
    }

    /** {@return why {@code [addr, addr + bytes)} is not a valid range, for error messages} */
    String explain(long addr, long bytes) {
        String range = "0x" + Long.toHexString(addr) + " (+" + bytes + " bytes)";
        if (addr == 0) {
            return range + " is a NULL pointer";
        }
        Alloc a = find(addr);
        if (a != null) {
            long past = (addr - a.base) + bytes - a.size;
            return range + " runs " + past + " bytes past the end of " + a;
        }
        Map.Entry<Long, Alloc> holder = live.floorEntry(addr);
        if (holder != null && holder.getValue().blocks != null && addr - holder.getKey() < holder.getValue().size) {
            Map.Entry<Long, Alloc> fb = freedBlocks.floorEntry(addr);
            String was = fb != null && addr - fb.getKey() < fb.getValue().size
                    ? ": it was " + fb.getValue() + ", released back to the pool" : "";
            return range + " lies in memory the runtime's caching pool holds but has not handed out (in "
                    + holder.getValue() + ")" + was;
        }
        Alloc f = findFreed(addr);
        if (f != null) {
            return range + " points into " + f + ", which was freed";
        }
        Map.Entry<Long, Alloc> below = live.floorEntry(addr);
        if (below != null && addr - below.getValue().base - below.getValue().size < GAP
                && addr - below.getValue().base >= below.getValue().size) {
            Alloc b = below.getValue();
            return range + " is not in any live allocation: it lies " + (addr - b.base - b.size)
                    + " bytes past the end of " + b;
        }
        return range + " is not in any live allocation";
    }

    /**
     * Checks that {@code [ptr, ptr + bytes)} lies in one live allocation, for a call that is not in a
     * capture.
     *
     * @param d     the call's operands, for the message
     * @param which the range's role, e.g. {@code "source"}
     * @throws metrale.gpu.GpuException {@code INVALID_VALUE} saying why not
     */
    void checkRange(long ptr, long bytes, String op, String d, String which) {
        if (find(ptr, bytes) == null) {
            throw new metrale.gpu.GpuException(metrale.gpu.CudaError.INVALID_VALUE, op, d + ": the " + which + " "
                    + explain(ptr, bytes));
        }
    }

    /**
     * {@return why {@code ptr} cannot be freed with {@code cuMemFree}, for error messages}
     *
     * @param pinned the page-locked allocation based at {@code ptr}, or {@code null}
     */
    String whyNotFreeable(long ptr, Alloc pinned) {
        if (pinned != null) {
            return "this is page-locked host memory; free it with cuMemFreeHost";
        }
        Alloc inside = find(ptr);
        if (inside != null) {
            return "an interior pointer " + (ptr - inside.base) + " bytes into " + inside
                    + "; only its base may be freed (the allocation is untouched)";
        }
        Alloc f = findFreed(ptr);
        if (f != null) {
            return f.base == ptr ? "a double free of " + f : "points into " + f + ", which was freed";
        }
        return "not a pointer returned by cuMemAlloc or cuMemAllocManaged";
    }

    /** {@return the number of live allocations of the given kind} */
    int liveCount(Alloc.Kind kind) {
        int n = 0;
        for (Alloc a : live.values()) {
            if (a.kind == kind) {
                n++;
            }
        }
        return n;
    }

    /** Frees every live allocation and releases the pool; the memory is not used again. */
    void freeAll() {
        List<Alloc> all = new ArrayList<>(live.values());
        for (Alloc a : all) {
            free(a);
        }
        freed.clear();
        freedOrder.clear();
        idle.clear();
        pool.close();
    }

    /** {@return the pooled block size for {@code bytes}: the next power of two, at least {@link #ALIGN}} */
    private static long sizeClass(long bytes) {
        return Math.max(ALIGN, Long.highestOneBit(bytes - 1) << 1);
    }

    private static long alignUp(long v, long a) {
        return (v + a - 1) & -a;
    }
}
