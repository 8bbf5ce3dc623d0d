// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import metrale.gpu.sim.ByteView;
import metrale.gpu.sim.DoubleView;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.LongView;
import metrale.gpu.sim.SimInitCheck;
import metrale.gpu.sim.UninitializedRead;
import metrale.telemetry.CallSites;

/**
 * The shadow "written" map of every device allocation and the unwritten reads found through it
 * ({@link SimInitCheck}). One bit per byte; an allocation's bits start clear (the fill byte is
 * garbage, not a value). Managed and page-locked memory are not tracked: the host writes them
 * directly.
 *
 * <p>Kernel bodies may call it from any thread, blocks from several at once
 * ({@code sim.blocks=parallel}): an access takes no lock, marking written bits is an atomic or of
 * the bits not yet set, and only a read that finds unwritten bytes takes the monitor that guards
 * what was found. A read racing a write of the same bytes by another block may see them either
 * way, as a race between blocks is undefined on a GPU.
 */
final class InitCheck {

    /** The most distinct (access, allocation) pairs kept; later ones are only counted. */
    private static final int MAX_REPORTS = 256;

    private static final VarHandle BITS = MethodHandles.arrayElementVarHandle(long[].class);

    /** By allocation, which compares by identity. */
    private final Map<Alloc, Shadow> shadows = new ConcurrentHashMap<>();
    /** Guarded by this, as {@link #dropped} is. */
    private final Map<String, Found> found = new LinkedHashMap<>();
    private long dropped;

    /** An allocation's written bits and its application call site. */
    private static final class Shadow {
        final Alloc alloc;
        final String site;
        final long[] bits;

        Shadow(Alloc alloc, String site) {
            this.alloc = alloc;
            this.site = site;
            this.bits = new long[(int) ((alloc.size + 63) >>> 6)];
        }

        void mark(long off, long len) {
            long end = off + len;
            for (long b = off; b < end; ) {
                int w = (int) (b >>> 6);
                int lo = (int) (b & 63);
                int n = (int) Math.min(64 - lo, end - b);
                long m = n == 64 ? -1L : ((1L << n) - 1) << lo;
                // Rewritten bytes cost no atomic: most stores go to memory already written once.
                if (((long) BITS.getOpaque(bits, w) & m) != m) {
                    BITS.getAndBitwiseOr(bits, w, m);
                }
                b += n;
            }
        }

        /** {@return the first unwritten offset in {@code [off, off + len)}, or -1} */
        long firstUnwritten(long off, long len) {
            long end = off + len;
            for (long b = off; b < end; b++) {
                if (((long) BITS.getOpaque(bits, (int) (b >>> 6)) & (1L << (b & 63))) == 0) {
                    return b;
                }
            }
            return -1;
        }

        long unwritten(long off, long len) {
            long n = 0;
            for (long b = off; b < off + len; b++) {
                if (((long) BITS.getOpaque(bits, (int) (b >>> 6)) & (1L << (b & 63))) == 0) {
                    n++;
                }
            }
            return n;
        }
    }

    private static final class Found {
        final String access;
        final Shadow shadow;
        final long offset;
        final long bytes;
        long count = 1;

        Found(String access, Shadow shadow, long offset, long bytes) {
            this.access = access;
            this.shadow = shadow;
            this.offset = offset;
            this.bytes = bytes;
        }
    }

    /** Starts tracking a new allocation: nothing of it is written. */
    void allocated(Alloc a) {
        if (a.kind == Alloc.Kind.DEVICE) {
            shadows.put(a, new Shadow(a, applicationSite()));
        }
    }

    /** Stops tracking a freed allocation; what was found through it stays. */
    void freed(Alloc a) {
        shadows.remove(a);
    }

    /** Marks {@code [addr, addr + bytes)} written; the range lies in one allocation or is untracked. */
    void wrote(DeviceMemory memory, long addr, long bytes) {
        Alloc a = memory.find(addr);
        if (a != null) {
            wrote(a, addr - a.base, bytes);
        }
    }

    void wrote(Alloc a, long off, long bytes) {
        Shadow s = shadows.get(a);
        if (s != null) {
            s.mark(off, Math.min(bytes, a.size - off));
        }
    }

    /** Records a read of {@code [addr, addr + bytes)} by {@code access} if any of it was never written. */
    void read(DeviceMemory memory, String access, long addr, long bytes) {
        Alloc a = memory.find(addr);
        if (a != null) {
            read(access, a, addr - a.base, bytes);
        }
    }

    void read(String access, Alloc a, long off, long bytes) {
        Shadow s = shadows.get(a);
        if (s == null) {
            return;
        }
        long len = Math.min(bytes, a.size - off);
        long first = s.firstUnwritten(off, len);
        if (first >= 0) {
            record(access, s, off, len, first);
        }
    }

    /** Counts a read of {@code [off, off + len)} of {@code s} by {@code access} whose byte {@code first} was never written. */
    private synchronized void record(String access, Shadow s, long off, long len, long first) {
        Alloc a = s.alloc;
        String key = access + "\u0000" + a.index;
        Found f = found.get(key);
        if (f != null) {
            f.count++;
        } else if (found.size() < MAX_REPORTS) {
            found.put(key, new Found(access, s, first, s.unwritten(off, len)));
        } else {
            dropped++;
        }
    }

    /** Reads of on-chip memory (shared, local) nothing wrote, by access and memory, first seen first. */
    private final Map<String, UninitializedRead> onChip = new LinkedHashMap<>();

    /**
     * Records a read of on-chip memory nothing wrote: a block's shared memory or a thread's local
     * memory, which hold garbage until written. Reads by the same access of the same kind of memory
     * are one report, counted.
     *
     * @param access what read ({@code kernel m::f at PTX line N `insn`})
     * @param memory which memory, e.g. {@code shared memory of block (0,0,0)}
     * @param size   its bytes
     * @param offset the first unwritten byte read
     * @param bytes  how many bytes the read took
     */
    synchronized void readOnChip(String access, String memory, long size, long offset, long bytes) {
        String kind = memory.startsWith("shared") ? "shared" : "local";
        String key = access + "\u0000" + kind;
        UninitializedRead r = onChip.get(key);
        if (r != null) {
            onChip.put(key, new UninitializedRead(r.access(), 0, r.allocationBytes(), r.allocationSite(), r.offset(),
                    r.bytes(), r.count() + 1));
        } else if (found.size() + onChip.size() < MAX_REPORTS) {
            onChip.put(key, new UninitializedRead(access, 0, size, memory, offset, bytes, 1));
        } else {
            dropped++;
        }
    }

    /** {@return what was found, first seen first: device memory, then on-chip memory} */
    synchronized List<UninitializedRead> reads() {
        List<UninitializedRead> out = new ArrayList<>(found.size() + onChip.size());
        for (Found f : found.values()) {
            out.add(new UninitializedRead(f.access, f.shadow.alloc.base, f.shadow.alloc.size, f.shadow.site,
                    f.offset, f.bytes, f.count));
        }
        out.addAll(onChip.values());
        return out;
    }

    /** {@return how many further reads were not kept once {@link #MAX_REPORTS} pairs were} */
    synchronized long dropped() {
        return dropped;
    }

    // ---- views: each access goes to the view, then to the shadow map -------------------------------
    //
    // An atomic reads the old value and writes a new one, so it is a read and a write; atomicExch
    // only writes (its old value is usually dropped, as when setting a flag).

    FloatView floats(FloatView v, Alloc a, long startOff, String access) {
        return new FloatView() {
            @Override
            public long length() {
                return v.length();
            }

            @Override
            public float get(long i) {
                float x = v.get(i);
                read(access, a, startOff + i * 4, 4);
                return x;
            }

            @Override
            public void set(long i, float x) {
                v.set(i, x);
                wrote(a, startOff + i * 4, 4);
            }

            @Override
            public float atomicAdd(long i, float x) {
                float old = v.atomicAdd(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }
        };
    }

    IntView ints(IntView v, Alloc a, long startOff, String access) {
        return new IntView() {
            @Override
            public long length() {
                return v.length();
            }

            @Override
            public int get(long i) {
                int x = v.get(i);
                read(access, a, startOff + i * 4, 4);
                return x;
            }

            @Override
            public void set(long i, int x) {
                v.set(i, x);
                wrote(a, startOff + i * 4, 4);
            }

            @Override
            public int atomicAdd(long i, int x) {
                int old = v.atomicAdd(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicExch(long i, int x) {
                int old = v.atomicExch(i, x);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicMin(long i, int x) {
                int old = v.atomicMin(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicMax(long i, int x) {
                int old = v.atomicMax(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicAnd(long i, int x) {
                int old = v.atomicAnd(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicOr(long i, int x) {
                int old = v.atomicOr(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicXor(long i, int x) {
                int old = v.atomicXor(i, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }

            @Override
            public int atomicCas(long i, int expected, int x) {
                int old = v.atomicCas(i, expected, x);
                read(access, a, startOff + i * 4, 4);
                wrote(a, startOff + i * 4, 4);
                return old;
            }
        };
    }

    LongView longs(LongView v, Alloc a, long startOff, String access) {
        return new LongView() {
            @Override
            public long length() {
                return v.length();
            }

            @Override
            public long get(long i) {
                long x = v.get(i);
                read(access, a, startOff + i * 8, 8);
                return x;
            }

            @Override
            public void set(long i, long x) {
                v.set(i, x);
                wrote(a, startOff + i * 8, 8);
            }

            @Override
            public long atomicAdd(long i, long x) {
                long old = v.atomicAdd(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicExch(long i, long x) {
                long old = v.atomicExch(i, x);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicMin(long i, long x) {
                long old = v.atomicMin(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicMax(long i, long x) {
                long old = v.atomicMax(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicAnd(long i, long x) {
                long old = v.atomicAnd(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicOr(long i, long x) {
                long old = v.atomicOr(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicXor(long i, long x) {
                long old = v.atomicXor(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }

            @Override
            public long atomicCas(long i, long expected, long x) {
                long old = v.atomicCas(i, expected, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }
        };
    }

    DoubleView doubles(DoubleView v, Alloc a, long startOff, String access) {
        return new DoubleView() {
            @Override
            public long length() {
                return v.length();
            }

            @Override
            public double get(long i) {
                double x = v.get(i);
                read(access, a, startOff + i * 8, 8);
                return x;
            }

            @Override
            public void set(long i, double x) {
                v.set(i, x);
                wrote(a, startOff + i * 8, 8);
            }

            @Override
            public double atomicAdd(long i, double x) {
                double old = v.atomicAdd(i, x);
                read(access, a, startOff + i * 8, 8);
                wrote(a, startOff + i * 8, 8);
                return old;
            }
        };
    }

    ByteView bytes(ByteView v, Alloc a, long startOff, String access) {
        return new ByteView() {
            @Override
            public long length() {
                return v.length();
            }

            @Override
            public byte get(long i) {
                byte x = v.get(i);
                read(access, a, startOff + i, 1);
                return x;
            }

            @Override
            public void set(long i, byte x) {
                v.set(i, x);
                wrote(a, startOff + i, 1);
            }
        };
    }

    // ---- the application's call site ------------------------------------------------------------

    static {
        // The driver's own frames between the runtime core and the application: every class an
        // allocation passes through.
        CallSites.skip(InitCheck.class.getName(), DeviceMemory.class.getName(), AllocRules.class.getName(),
                SimDevice.class.getName(), SimControlsImpl.class.getName(), SimAsyncPool.class.getName());
    }

    private static String applicationSite() {
        return CallSites.caller();
    }
}
