// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.Arrays;
import metrale.gpu.CudaError;

/**
 * Global memory for engine tests: one heap array at device address {@link #base}; an access
 * outside it is {@code ILLEGAL_ADDRESS} with the site's description, as the simulator's own memory
 * reports one. Atomics hold the object's lock, so blocks on several threads stay atomic.
 */
final class FlatGlobal implements GlobalMemory {

    final long base;
    final byte[] bytes;

    FlatGlobal(long base, byte[] bytes) {
        this.base = base;
        this.bytes = bytes;
    }

    FlatGlobal copy() {
        return new FlatGlobal(base, Arrays.copyOf(bytes, bytes.length));
    }

    private int offset(long addr, int n, Site at, String what) {
        long off = addr - base;
        if (off < 0 || off > bytes.length - n) {
            throw new PtxFault(CudaError.ILLEGAL_ADDRESS, at.describe() + ": " + what + " 0x" + Long.toHexString(addr)
                    + " (+" + n + ") outside [0x" + Long.toHexString(base) + ", 0x" + Long.toHexString(base + bytes.length)
                    + ") at " + at.where());
        }
        return (int) off;
    }

    @Override
    public long load(long addr, int n, Site at) {
        return PtxLaunch.get(bytes, offset(addr, n, at, "a load from"), n);
    }

    @Override
    public void store(long addr, int n, long bits, Site at) {
        PtxLaunch.put(bytes, offset(addr, n, at, "a store to"), n, bits);
    }

    @Override
    public synchronized long atomic(int op, int type, long addr, long b, long c, Site at) {
        int n = Alu.bytes(type);
        int off = offset(addr, n, at, "an atomic on");
        long old = PtxLaunch.get(bytes, off, n);
        PtxLaunch.put(bytes, off, n, Alu.atom(op, type, old, b, c));
        return old;
    }
}
