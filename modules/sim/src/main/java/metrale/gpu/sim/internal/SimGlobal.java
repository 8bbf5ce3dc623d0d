// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;
import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.ptx.Alu;
import metrale.gpu.sim.internal.ptx.GlobalMemory;
import metrale.gpu.sim.internal.ptx.PtxFault;

/**
 * Device memory as one PTX launch reaches it: each access is checked against the device's live
 * allocations (and enabled peers'), as a twin's views are, so a stray address is
 * {@code ILLEGAL_ADDRESS} naming the thread, the PTX line, the address and the nearest allocation
 * with its site; reads and writes of the device's own memory go to the initcheck when it is on.
 * Safe for blocks running on several threads at once: the cache of recently hit allocations is
 * written only on a miss, an entry at a time, and atomics are compare-and-set loops.
 */
final class SimGlobal implements GlobalMemory {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final VarHandle A32 = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle A64 = ValueLayout.JAVA_LONG.varHandle();

    private final Engine engine;
    private final DeviceMemory memory;
    private final String kernel;
    /**
     * Allocations recent accesses hit, this device's or an enabled peer's (a kernel reads and writes
     * a few buffers in turn). Racing blocks may overwrite each other's entries; an entry is one
     * reference, so a reader sees a whole one. Entries are the allocations themselves, made on the
     * host's thread, not objects a kernel thread allocates: every block reads them on every access,
     * and an object made on a block's thread would share cache lines with that thread's own state,
     * which it writes thread after thread.
     */
    private final Alloc[] recent = new Alloc[RECENT];
    private static final int RECENT = 4;
    private int next;
    private final ConcurrentHashMap<String, String> accesses = new ConcurrentHashMap<>();

    SimGlobal(Engine engine, String kernel) {
        this.engine = engine;
        this.memory = engine.memory;
        this.kernel = kernel;
    }

    private Alloc resolve(long addr, int bytes, Site at, String what) {
        for (Alloc a : recent) {
            if (a == null) {
                break;
            }
            long off = addr - a.base;
            if (off >= 0 && off <= a.buffer - bytes && !a.freed && !a.held) {
                return a;
            }
        }
        Alloc a = memory.find(addr);
        if (a == null) {
            a = engine.peerFind(addr);
        }
        if (a != null && a.contains(addr, bytes) && addr - a.base > a.buffer - bytes) {
            long past = addr - a.base + bytes - a.buffer;
            throw new PtxFault(CudaError.ILLEGAL_ADDRESS, "kernel " + kernel + ", " + at.describe() + ": " + what + " 0x"
                    + Long.toHexString(addr) + " (+" + bytes + " bytes) runs " + past + " bytes past the end of the "
                    + a.buffer + "-byte buffer at 0x" + Long.toHexString(a.base) + ", into the red zone after it");
        }
        if (a != null && a.held) {
            throw new PtxFault(CudaError.ILLEGAL_ADDRESS, "kernel " + kernel + ", " + at.describe() + ": " + what + " 0x"
                    + Long.toHexString(addr) + " (+" + bytes + " bytes) lies in " + a + ", freed by the application");
        }
        if (a == null || !a.contains(addr, bytes)) {
            String other = a == null ? engine.notReachable(addr) : null;
            throw new PtxFault(CudaError.ILLEGAL_ADDRESS, "kernel " + kernel + ", " + at.describe() + ": " + what + " "
                    + (other != null ? "0x" + Long.toHexString(addr) + " points into memory this context may not address: " + other
                    : memory.explain(addr, bytes)));
        }
        int i = next;
        recent[i] = a;
        next = (i + 1) % RECENT;
        return a;
    }

    @Override
    public byte fill() {
        return memory.fill();
    }

    @Override
    public boolean initCheck() {
        return memory.init != null;
    }

    @Override
    public void uninitialized(String where, String mem, long size, long offset, long bytes) {
        InitCheck init = memory.init;
        if (init != null) {
            init.readOnChip("kernel " + kernel + " at " + where, mem, size, offset, bytes);
        }
    }

    private String access(Site at) {
        String where = at.where();
        return accesses.computeIfAbsent(where, w -> "kernel " + kernel + " at " + w);
    }

    @Override
    public long load(long addr, int bytes, Site at) {
        Alloc a = resolve(addr, bytes, at, "a load from");
        long off = addr - a.base;
        // A peer's allocation has no shadow in this device's initcheck, which passes over it.
        if (memory.init != null) {
            memory.init.read(access(at), a, off, bytes);
        }
        MemorySegment s = a.segment;
        return switch (bytes) {
            case 1 -> s.get(ValueLayout.JAVA_BYTE, off) & 0xffL;
            case 2 -> s.get(I16, off) & 0xffffL;
            case 4 -> s.get(I32, off) & 0xffffffffL;
            default -> s.get(I64, off);
        };
    }

    @Override
    public void store(long addr, int bytes, long bits, Site at) {
        Alloc a = resolve(addr, bytes, at, "a store to");
        long off = addr - a.base;
        MemorySegment s = a.segment;
        switch (bytes) {
            case 1 -> s.set(ValueLayout.JAVA_BYTE, off, (byte) bits);
            case 2 -> s.set(I16, off, (short) bits);
            case 4 -> s.set(I32, off, (int) bits);
            default -> s.set(I64, off, bits);
        }
        if (memory.init != null) {
            memory.init.wrote(a, off, bytes);
        }
    }

    @Override
    public long atomic(int op, int type, long addr, long b, long c, Site at) {
        int bytes = Alu.bytes(type);
        Alloc a = resolve(addr, bytes, at, "an atomic on");
        long off = addr - a.base;
        if (memory.init != null) {
            memory.init.read(access(at), a, off, bytes);
            memory.init.wrote(a, off, bytes);
        }
        MemorySegment s = a.segment;
        if (bytes == 4) {
            while (true) {
                int old = (int) A32.getVolatile(s, off);
                int nw = (int) Alu.atom(op, type, old & 0xffffffffL, b, c);
                if (A32.compareAndSet(s, off, old, nw)) {
                    return old & 0xffffffffL;
                }
            }
        }
        while (true) {
            long old = (long) A64.getVolatile(s, off);
            long nw = Alu.atom(op, type, old, b, c);
            if (A64.compareAndSet(s, off, old, nw)) {
                return old;
            }
        }
    }
}
