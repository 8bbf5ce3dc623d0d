// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CudaError;

/**
 * A {@link GlobalMemory} double for engine tests: regions of heap memory at made-up device
 * addresses (below the engine's shared and local windows), every access checked against them, and
 * atomics serialized on the object.
 */
final class HeapGlobal implements GlobalMemory {

    /** Where the first region starts; regions follow at 1 MiB steps. */
    static final long BASE = 0x10_0000_0000L;

    private record Region(long base, ByteBuffer bytes) {
    }

    private final List<Region> regions = new ArrayList<>();

    /** {@return the device address of a new zeroed region of {@code bytes}} */
    synchronized long alloc(int bytes) {
        long base = BASE + ((long) regions.size() << 20);
        if (bytes > 1 << 20) {
            throw new IllegalArgumentException("a region is at most 1 MiB");
        }
        regions.add(new Region(base, ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN)));
        return base;
    }

    /** {@return the region whose base is {@code base}} */
    synchronized ByteBuffer region(long base) {
        for (Region r : regions) {
            if (r.base == base) {
                return r.bytes;
            }
        }
        throw new IllegalArgumentException("no region at 0x" + Long.toHexString(base));
    }

    private Region find(long addr, int bytes, Site at) {
        for (Region r : regions) {
            long off = addr - r.base;
            if (off >= 0 && off + bytes <= r.bytes.capacity()) {
                return r;
            }
        }
        throw new PtxFault(CudaError.ILLEGAL_ADDRESS, at.describe() + ": 0x" + Long.toHexString(addr) + " is outside every region");
    }

    @Override
    public synchronized long load(long addr, int bytes, Site at) {
        Region r = find(addr, bytes, at);
        int off = (int) (addr - r.base);
        return switch (bytes) {
            case 1 -> r.bytes.get(off) & 0xffL;
            case 2 -> r.bytes.getShort(off) & 0xffffL;
            case 4 -> r.bytes.getInt(off) & 0xffffffffL;
            default -> r.bytes.getLong(off);
        };
    }

    @Override
    public synchronized void store(long addr, int bytes, long bits, Site at) {
        Region r = find(addr, bytes, at);
        int off = (int) (addr - r.base);
        switch (bytes) {
            case 1 -> r.bytes.put(off, (byte) bits);
            case 2 -> r.bytes.putShort(off, (short) bits);
            case 4 -> r.bytes.putInt(off, (int) bits);
            default -> r.bytes.putLong(off, bits);
        }
    }

    @Override
    public synchronized long atomic(int op, int type, long addr, long b, long c, Site at) {
        int bytes = Alu.bytes(type);
        long old = load(addr, bytes, at);
        store(addr, bytes, Alu.atom(op, type, old, b, c), at);
        return old;
    }
}
