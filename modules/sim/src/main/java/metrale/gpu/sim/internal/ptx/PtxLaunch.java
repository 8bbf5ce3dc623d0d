// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import metrale.gpu.CudaError;

/**
 * One launch of a PTX kernel: the grid, the argument area and the memory it runs against.
 * {@link #runBlock} runs one block to completion; blocks may run on several threads at once
 * ({@code sim.blocks=parallel}), each with its own shared memory.
 *
 * <p><b>How a block runs.</b> Threads run one at a time, each until it exits or reaches a point
 * where it must wait for others: {@code bar.sync} (the whole block) or a warp-synchronous
 * instruction ({@code shfl.sync}, {@code vote.sync}, {@code bar.warp.sync}, {@code redux.sync}: the
 * lanes of its member mask). When every thread waits, the warp operations whose lanes have all
 * arrived complete; when none can, and every live thread waits at one {@code bar.sync}, the barrier
 * completes. Anything else is a kernel that hangs or is undefined on a GPU, and is reported: a
 * barrier that part of the block exited without reaching, threads waiting at different barriers,
 * a warp operation whose member lanes exited or wait elsewhere.
 *
 * <p><b>Shared-memory race check.</b> Two threads of a block that touch the same 4-byte word of
 * shared memory, one of them writing, with no {@code bar.sync} between (and, within one warp, no
 * {@code bar.warp.sync}), are reported with both threads and lines. Atomics are not checked.
 *
 * <p><b>Generic addresses.</b> {@code cvta} maps shared memory to a window at
 * {@link #SHARED_WINDOW} and each thread's local memory to {@link #LOCAL_WINDOW}; both lie between
 * the host's 47-bit user space and the simulator's device addresses, so a generic address tells
 * its space.
 *
 * <p><b>Timers.</b> {@code %clock} and {@code %clock64} count the thread's instructions;
 * {@code %globaltimer} starts at the launch's virtual time and moves {@value #GLOBALTIMER_STEP} ns
 * each time the thread reads it, so a kernel that spins on it ends; the launch then takes as long
 * as its longest thread saw ({@link #timerNanos}).
 */
public final class PtxLaunch {

    /** Base of the generic window onto a block's shared memory. */
    public static final long SHARED_WINDOW = 0x0000_8000_0000_0000L;
    /** Base of the generic window onto a thread's local memory. */
    public static final long LOCAL_WINDOW = 0x0000_9000_0000_0000L;
    private static final long WINDOW = 1L << 32;
    /** Nanoseconds {@code %globaltimer} moves per read. */
    public static final long GLOBALTIMER_STEP = 1024;
    /** Instructions one thread may run before the launch fails with {@code LAUNCH_TIMEOUT}. */
    static final long MAX_STEPS = 1L << 31;

    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    final PtxModule module;
    final PtxFunction fn;
    final String kernel;
    final byte[] params;
    final int gx, gy, gz, bx, by, bz;
    final int sharedBytes;
    final int dynamicShared;
    final GlobalMemory global;
    final long startNanos;
    final int sms;
    /** The entry's compiled code, or {@code null}: its threads run on the interpreter. */
    final CompiledCode code;
    /** Whether each thread of a block runs on its own ({@link #independent(PtxFunction)}). */
    final boolean independent;
    /** Whether the entry's parameter area has slots for call sequences past its arguments: each thread gets its own copy. */
    private final boolean calls;
    private final AtomicLong maxTimer = new AtomicLong();
    /** The byte shared and local memory start as: the device's fill byte, garbage as on a GPU. */
    final byte fill;
    /** Whether on-chip memory keeps written bits, so an unwritten read is reported to the initcheck. */
    final boolean trackOnChip;

    /**
     * @param module        the kernel's module
     * @param fn            the {@code .entry}
     * @param kernel        the kernel's name for messages ({@code module::func})
     * @param params        the argument area, laid out as {@link PtxFunction#paramOffsets()} says
     * @param grid          grid dimensions x, y, z
     * @param block         block dimensions x, y, z
     * @param dynamicShared the launch's dynamic shared memory in bytes
     * @param global        device memory
     * @param startNanos    the virtual time the launch starts at
     * @param sms           the SM count the device reports ({@code %nsmid})
     */
    public PtxLaunch(PtxModule module, PtxFunction fn, String kernel, byte[] params, int[] grid, int[] block,
                     int dynamicShared, GlobalMemory global, long startNanos, int sms) {
        this(module, fn, kernel, params, grid, block, dynamicShared, global, startNanos, sms, true);
    }

    /**
     * A launch that runs the entry compiled to JVM bytecode ({@link PtxCompiler}) when
     * {@code compiled} is true and the entry compiles, else on the interpreter; both give the
     * same results, faults and timings.
     *
     * @param module        the kernel's module
     * @param fn            the {@code .entry}
     * @param kernel        the kernel's name for messages ({@code module::func})
     * @param params        the argument area, laid out as {@link PtxFunction#paramOffsets()} says
     * @param grid          grid dimensions x, y, z
     * @param block         block dimensions x, y, z
     * @param dynamicShared the launch's dynamic shared memory in bytes
     * @param global        device memory
     * @param startNanos    the virtual time the launch starts at
     * @param sms           the SM count the device reports ({@code %nsmid})
     * @param compiled      whether to run the compiled code ({@code sim.ptx=compiled}) or interpret
     */
    public PtxLaunch(PtxModule module, PtxFunction fn, String kernel, byte[] params, int[] grid, int[] block,
                     int dynamicShared, GlobalMemory global, long startNanos, int sms, boolean compiled) {
        this.module = module;
        this.fn = fn;
        this.kernel = kernel;
        this.params = params;
        this.gx = grid[0];
        this.gy = grid[1];
        this.gz = grid[2];
        this.bx = block[0];
        this.by = block[1];
        this.bz = block[2];
        this.dynamicShared = dynamicShared;
        this.sharedBytes = dynamicShared > 0 ? module.dynamicSharedOffset() + dynamicShared : module.staticSharedBytes(fn);
        this.global = global;
        this.startNanos = startNanos;
        this.sms = Math.max(1, sms);
        this.code = compiled ? PtxCompiler.codeFor(fn) : null;
        this.independent = independent(fn);
        this.calls = fn.paramBytes > fn.argBytes();
        this.fill = global.fill();
        this.trackOnChip = global.initCheck();
    }

    /**
     * {@return whether no thread of {@code fn} can see another of its block} No barrier, warp
     * operation, {@code activemask} or call, and every access in a state space other than shared
     * (a generic one might reach shared memory). Its threads then run one after the other, each
     * to its end, which is what {@link Block#run} does with them too; so they can share one
     * thread record and register file, reset between them.
     */
    static boolean independent(PtxFunction fn) {
        for (Insn in : fn.code) {
            switch (in.op) {
                case Insn.BAR, Insn.BARRED, Insn.SHFL, Insn.VOTE, Insn.WARPSYNC, Insn.REDUX, Insn.ACTIVEMASK, Insn.CALL -> {
                    return false;
                }
                case Insn.LD, Insn.ST, Insn.ATOM, Insn.RED -> {
                    int sp = in.asym >= 0 ? in.asym : in.space;
                    if (sp == Insn.GENERIC || sp == Insn.SHARED) {
                        return false;
                    }
                }
                default -> {
                }
            }
        }
        return true;
    }

    /** {@return whether this launch's threads run compiled code rather than the interpreter} */
    public boolean runsCompiled() {
        return code != null;
    }

    /** {@return the longest virtual time a thread's {@code %globaltimer} moved, in nanoseconds} */
    public long timerNanos() {
        return maxTimer.get();
    }

    /**
     * Runs block ({@code x}, {@code y}, {@code z}) of the grid to its end.
     *
     * @throws PtxFault what the block did wrong
     */
    public void runBlock(int x, int y, int z) {
        if (independent) {
            new Block(this, x, y, z, false).runEach();
        } else {
            new Block(this, x, y, z).run();
        }
    }

    /**
     * {@return a runner of this launch's blocks for one thread} It runs blocks one at a time as
     * {@link #runBlock} does, and for a function whose threads are {@linkplain #independent
     * independent} keeps one block's state from block to block, so a block allocates nothing.
     */
    public BlockRunner runner() {
        return new BlockRunner();
    }

    /** Runs blocks of its launch one at a time, on one thread ({@link #runner}). */
    public final class BlockRunner {
        private Block each;

        private BlockRunner() {
        }

        /**
         * Runs block ({@code x}, {@code y}, {@code z}) of the grid to its end.
         *
         * @throws PtxFault what the block did wrong
         */
        public void run(int x, int y, int z) {
            if (!independent) {
                new Block(PtxLaunch.this, x, y, z).run();
                return;
            }
            if (each == null) {
                each = new Block(PtxLaunch.this, x, y, z, false);
            } else {
                each.moveTo(x, y, z);
            }
            each.runEach();
        }
    }

    /** Raises {@link #timerNanos} to {@code timer}: a write only when higher, not a compare-and-set of one shared word per block. */
    private void timerSeen(long timer) {
        if (timer > maxTimer.get()) {
            maxTimer.accumulateAndGet(timer, Math::max);
        }
    }

    // ---- state ---------------------------------------------------------------------------------

    static final int RUNNABLE = 0, AT_BAR = 1, AT_WARP = 2, EXITED = 3;

    /** One call frame: a function's registers, its pc, its parameter area and its local depot. */
    static final class Frame {
        final PtxFunction fn;
        final long[] r;
        final byte[] param;
        final int localBase;
        final Frame parent;
        final Insn call;
        int pc;

        Frame(PtxFunction fn, long[] r, byte[] param, int localBase, Frame parent, Insn call) {
            this.fn = fn;
            this.r = r;
            this.param = param;
            this.localBase = localBase;
            this.parent = parent;
            this.call = call;
        }
    }

    /** One thread of a block. */
    static final class Thr implements GlobalMemory.Site {
        final Block block;
        /** Which thread of the block: fixed, except for the one record of {@link Block#runEach}. */
        int idx;
        int tx, ty, tz;
        int lane, warp;
        Frame frame;
        int state;
        long steps;
        long timer;
        byte[] local;
        /** Written bits of {@link #local}, one a byte, when the initcheck is on; else {@code null}. */
        long[] localWritten;
        Insn at;
        /** The member mask of the warp operation the thread waits at. */
        int waitMask;

        Thr(Block block, int idx, int tx, int ty, int tz) {
            this.block = block;
            place(idx, tx, ty, tz);
        }

        void place(int idx, int tx, int ty, int tz) {
            this.idx = idx;
            this.tx = tx;
            this.ty = ty;
            this.tz = tz;
            this.lane = idx & 31;
            this.warp = idx >>> 5;
        }

        String who() {
            return "thread (" + tx + "," + ty + "," + tz + ") of block (" + block.x + "," + block.y + "," + block.z + ")";
        }

        @Override
        public String where() {
            return at == null ? "PTX line ?" : at.where();
        }

        @Override
        public String describe() {
            return who() + " at " + (at == null ? "PTX line ?" : at.where());
        }
    }

    /** One block while it runs. */
    static final class Block {
        final PtxLaunch l;
        /** The block's indices; {@link #moveTo} changes them, for a block of {@link #runEach} alone. */
        int x, y, z;
        final Thr[] threads;
        final byte[] shared;
        /** Written bits of {@link #shared}, one a byte, when the initcheck is on; else {@code null}. */
        final long[] sharedWritten;
        final Race race;
        int epoch = 1;
        final int[] warpEpoch;

        /** A fresh register file: the block's special registers, the rest zero. */
        private final long[] fresh;
        /** The one thread record, register file and frame of {@link #runEach}; {@code null} in a block of all its threads. */
        private final long[] eachRegs;
        private final Frame eachFrame;
        private final Thr eachThr;

        Block(PtxLaunch l, int x, int y, int z) {
            this(l, x, y, z, true);
        }

        /**
         * @param all whether to make every thread's record and its shared memory now; without,
         *            the block is for {@link #runEach} alone
         */
        Block(PtxLaunch l, int x, int y, int z, boolean all) {
            this.l = l;
            this.x = x;
            this.y = y;
            this.z = z;
            int n = l.bx * l.by * l.bz;
            PtxFunction f = l.fn;
            fresh = new long[f.regCount];
            fresh[Special.NTID_X] = l.bx;
            fresh[Special.NTID_Y] = l.by;
            fresh[Special.NTID_Z] = l.bz;
            fresh[Special.NCTAID_X] = l.gx;
            fresh[Special.NCTAID_Y] = l.gy;
            fresh[Special.NCTAID_Z] = l.gz;
            fresh[Special.NWARPID] = (n + 31) / 32;
            fresh[Special.NSMID] = l.sms;
            fresh[Special.GRIDID] = 1;
            fresh[Special.DYN_SMEM] = l.dynamicShared;
            fresh[Special.TOTAL_SMEM] = l.sharedBytes;
            threads = new Thr[all ? n : 0];
            this.shared = new byte[all ? l.sharedBytes : 0];
            if (l.fill != 0) {
                Arrays.fill(shared, l.fill);
            }
            this.sharedWritten = l.trackOnChip && shared.length > 0 ? new long[(shared.length + 63) >>> 6] : null;
            this.race = all && l.sharedBytes > 0 ? new Race(l.sharedBytes) : null;
            this.warpEpoch = new int[(n + 31) / 32];
            Arrays.fill(warpEpoch, 1);
            placeSpecials();
            // The slots an entry's call sequences declare follow the arguments in its parameter area:
            // each thread writes its own, so a thread with calls gets its own copy of the area.
            boolean calls = l.calls;
            for (int i = 0; all && i < n; i++) {
                Thr t = new Thr(this, i, i % l.bx, (i / l.bx) % l.by, i / (l.bx * l.by));
                long[] r = new long[f.regCount];
                start(t, r);
                t.frame = new Frame(f, r, calls ? Arrays.copyOf(l.params, Math.max(l.params.length, f.paramBytes)) : l.params,
                        0, null, null);
                threads[i] = t;
            }
            eachRegs = all ? null : new long[f.regCount];
            eachFrame = all ? null : new Frame(f, eachRegs, l.params, 0, null, null);
            eachThr = all ? null : new Thr(this, 0, 0, 0, 0);
        }

        /** The block's own special registers in {@link #fresh}: its indices and its SM. */
        private void placeSpecials() {
            fresh[Special.CTAID_X] = x;
            fresh[Special.CTAID_Y] = y;
            fresh[Special.CTAID_Z] = z;
            fresh[Special.SMID] = (int) (((long) z * l.gy * l.gx + (long) y * l.gx + x) % l.sms);
        }

        /** Makes this block of {@link #runEach} alone block ({@code x}, {@code y}, {@code z}) of the grid. */
        void moveTo(int x, int y, int z) {
            this.x = x;
            this.y = y;
            this.z = z;
            placeSpecials();
        }

        /** Gives {@code t} (placed) a fresh start in register file {@code r}: registers, local memory. */
        private void start(Thr t, long[] r) {
            System.arraycopy(fresh, 0, r, 0, r.length);
            threadSpecials(t, r);
        }

        /** Writes the special registers of {@code t}'s own into {@code r} (not the block's); gives it fresh local memory. */
        private void threadSpecials(Thr t, long[] r) {
            r[Special.TID_X] = t.tx;
            r[Special.TID_Y] = t.ty;
            r[Special.TID_Z] = t.tz;
            r[Special.LANEID] = t.lane;
            r[Special.WARPID] = t.warp;
            r[Special.LANEMASK_EQ] = 1L << t.lane;
            r[Special.LANEMASK_LE] = (1L << (t.lane + 1)) - 1 & 0xffffffffL;
            r[Special.LANEMASK_LT] = (1L << t.lane) - 1;
            r[Special.LANEMASK_GE] = ~((1L << t.lane) - 1) & 0xffffffffL;
            r[Special.LANEMASK_GT] = ~((1L << (t.lane + 1)) - 1) & 0xffffffffL;
            if (l.fn.localBytes > 0) {
                if (t.local == null) {
                    t.local = new byte[l.fn.localBytes];
                    t.localWritten = l.trackOnChip ? new long[(t.local.length + 63) >>> 6] : null;
                } else if (t.localWritten != null) {
                    Arrays.fill(t.localWritten, 0);
                }
                // A thread starts with local memory of garbage, a record run again (runEach) too.
                Arrays.fill(t.local, l.fill);
            }
        }

        /**
         * Runs the block's threads one after the other, each to its end, in one reused thread
         * record: for a function whose threads are {@linkplain PtxLaunch#independent independent},
         * the same runs, results, faults and timers as {@link #run}.
         */
        void runEach() {
            CompiledCode c = l.code;
            long[] r = eachRegs;
            Frame fr = eachFrame;
            Thr t = eachThr;
            // The block's special registers once; no instruction writes a special register.
            System.arraycopy(fresh, 0, r, 0, r.length);
            long timer = 0;
            int i = 0;
            for (int tz = 0; tz < l.bz; tz++) {
                for (int ty = 0; ty < l.by; ty++) {
                    for (int tx = 0; tx < l.bx; tx++, i++) {
                        t.place(i, tx, ty, tz);
                        t.state = RUNNABLE;
                        t.steps = 0;
                        t.timer = 0;
                        t.at = null;
                        fr.pc = 0;
                        t.frame = fr;
                        if (c != null) {
                            // Registers beyond the special ones start at zero in the compiled code.
                            threadSpecials(t, r);
                            c.runFresh(t);
                        } else {
                            start(t, r);
                            Interp.run(t);
                        }
                        timer = Math.max(timer, t.timer);
                    }
                }
            }
            l.timerSeen(timer);
        }

        void run() {
            CompiledCode c = l.code;
            while (true) {
                for (Thr t : threads) {
                    if (t.state == RUNNABLE) {
                        // Compiled code runs the entry's own frame; it has no calls.
                        if (c != null && t.frame.parent == null) {
                            c.run(t);
                        } else {
                            Interp.run(t);
                        }
                    }
                }
                if (resolveWarps()) {
                    continue;
                }
                if (!resolveBarrier()) {
                    long timer = 0;
                    for (Thr t : threads) {
                        timer = Math.max(timer, t.timer);
                    }
                    l.timerSeen(timer);
                    return;
                }
            }
        }

        /** {@return whether a warp operation completed} */
        private boolean resolveWarps() {
            boolean any = false;
            for (Thr t : threads) {
                if (t.state != AT_WARP) {
                    continue;
                }
                int base = t.warp * 32;
                int mask = t.waitMask;
                if ((mask & (1 << t.lane)) == 0) {
                    throw fault(CudaError.ILLEGAL_INSTRUCTION, t, "the member mask 0x" + Integer.toHexString(mask)
                            + " does not include the thread's own lane " + t.lane);
                }
                boolean ready = true;
                for (int lane = 0; lane < 32; lane++) {
                    if ((mask & (1 << lane)) == 0 || base + lane >= threads.length) {
                        continue;
                    }
                    Thr o = threads[base + lane];
                    if (o.state == AT_WARP && o.at == t.at) {
                        if (o.waitMask != mask) {
                            throw fault(CudaError.ILLEGAL_INSTRUCTION, t, "lane " + lane + " reached it with member mask 0x"
                                    + Integer.toHexString(o.waitMask) + ", this lane with 0x" + Integer.toHexString(mask));
                        }
                        continue;
                    }
                    ready = false;
                    if (o.state == EXITED) {
                        throw fault(CudaError.ILLEGAL_INSTRUCTION, t, "lane " + lane + " is in the member mask 0x"
                                + Integer.toHexString(mask) + " but exited without reaching it (a hang on a GPU)");
                    }
                }
                if (ready) {
                    Interp.warpOp(this, t, mask);
                    any = true;
                }
            }
            if (!any) {
                for (Thr t : threads) {
                    if (t.state == AT_WARP) {
                        Thr other = null;
                        for (int lane = 0; lane < 32; lane++) {
                            int i = t.warp * 32 + lane;
                            if ((t.waitMask & (1 << lane)) != 0 && i < threads.length && threads[i].at != t.at) {
                                other = threads[i];
                                break;
                            }
                        }
                        throw fault(CudaError.ILLEGAL_INSTRUCTION, t, "its member lanes never all reach it"
                                + (other == null ? "" : ": " + other.describe() + " waits elsewhere")
                                + " (a hang on a GPU)");
                    }
                }
            }
            return any;
        }

        /** {@return whether a barrier completed; false when every thread exited} */
        private boolean resolveBarrier() {
            Thr first = null;
            int waiting = 0;
            int exited = 0;
            Thr exitedOne = null;
            for (Thr t : threads) {
                if (t.state == AT_BAR) {
                    waiting++;
                    if (first == null) {
                        first = t;
                    } else if (t.at != first.at) {
                        throw fault(CudaError.ILLEGAL_INSTRUCTION, t, "threads of one block wait at different barriers: "
                                + first.describe() + " and this one (undefined on a GPU)");
                    }
                } else if (t.state == EXITED) {
                    exited++;
                    if (exitedOne == null) {
                        exitedOne = t;
                    }
                }
            }
            if (first == null) {
                return false;
            }
            if (exited > 0) {
                throw fault(CudaError.ILLEGAL_INSTRUCTION, first, "bar.sync reached by " + waiting + " of "
                        + threads.length + " threads of the block; " + exited + " exited without reaching it, "
                        + exitedOne.who() + " first among them (undefined on a GPU: a barrier must be reached by"
                        + " every thread of the block)");
            }
            Interp.barrier(this, first.at);
            epoch++;
            Arrays.fill(warpEpoch, 1);
            return true;
        }

        PtxFault fault(CudaError e, Thr t, String why) {
            return new PtxFault(e, t.describe() + ": " + why);
        }

        long sharedLoad(Thr t, long off, int bytes) {
            checkShared(t, off, bytes);
            if (sharedWritten != null) {
                readOnChip(sharedWritten, off, bytes, t, "shared memory of block (" + x + "," + y + "," + z + ")", shared.length);
            }
            if (race != null) {
                race.access(this, t, off, bytes, false);
            }
            return get(shared, (int) off, bytes);
        }

        void sharedStore(Thr t, long off, int bytes, long v) {
            checkShared(t, off, bytes);
            if (sharedWritten != null) {
                markWritten(sharedWritten, off, bytes);
            }
            if (race != null) {
                race.access(this, t, off, bytes, true);
            }
            put(shared, (int) off, bytes, v);
        }

        void checkShared(Thr t, long off, int bytes) {
            if (off < 0 || off + bytes > shared.length) {
                throw fault(CudaError.ILLEGAL_ADDRESS, t, "shared address 0x" + Long.toHexString(off) + " (+" + bytes
                        + " bytes) lies outside the block's " + shared.length + " bytes of shared memory");
            }
            if ((off & (bytes - 1)) != 0) {
                throw fault(CudaError.MISALIGNED_ADDRESS, t, "shared address 0x" + Long.toHexString(off)
                        + " is not aligned to " + bytes + " bytes");
            }
        }
    }

    /**
     * The last writer and reader of each shared byte since the last barrier: byte by byte, as the
     * hardware orders accesses, so threads that each own one byte of a word do not race.
     */
    static final class Race {
        final int[] wT, wE, wW;
        final Insn[] wAt;
        final int[] rT, rE, rW;
        final Insn[] rAt;
        static final int MANY = -7;

        Race(int bytes) {
            int words = bytes;
            wT = new int[words];
            wE = new int[words];
            wW = new int[words];
            wAt = new Insn[words];
            rT = new int[words];
            rE = new int[words];
            rW = new int[words];
            rAt = new Insn[words];
        }

        /** {@return whether a record of thread {@code other} (epochs {@code e}, {@code w}) is unordered with {@code t}} */
        private static boolean current(Block b, Thr t, int other, int e, int w) {
            if (e != b.epoch) {
                return false;
            }
            if (other >= 0 && other != t.idx && b.threads[other].warp == t.warp) {
                return w == b.warpEpoch[t.warp];
            }
            return true;
        }

        void access(Block b, Thr t, long off, int bytes, boolean write) {
            int first = (int) off;
            int last = (int) (off + bytes - 1);
            for (int k = first; k <= last; k++) {
                int wt = wT[k] - 1;
                if (wt >= 0 && wt != t.idx && current(b, t, wt, wE[k], wW[k])) {
                    throw race(b, t, k, b.threads[wt], wAt[k], "wrote", write ? "writes" : "reads");
                }
                if (write) {
                    int rt = rT[k];
                    if (rt != 0 && (rt == MANY || rt - 1 != t.idx) && current(b, t, rt == MANY ? -1 : rt - 1, rE[k], rW[k])) {
                        throw race(b, t, k, rt == MANY ? null : b.threads[rt - 1], rAt[k], "read", "writes");
                    }
                    wT[k] = t.idx + 1;
                    wE[k] = b.epoch;
                    wW[k] = b.warpEpoch[t.warp];
                    wAt[k] = t.at;
                } else {
                    int rt = rT[k];
                    if (rt != 0 && rE[k] == b.epoch && rt != t.idx + 1) {
                        rT[k] = MANY;
                    } else if (rt == 0 || rE[k] != b.epoch) {
                        rT[k] = t.idx + 1;
                        rE[k] = b.epoch;
                        rW[k] = b.warpEpoch[t.warp];
                        rAt[k] = t.at;
                    }
                }
            }
        }

        private static PtxFault race(Block b, Thr t, int at, Thr other, Insn otherAt, String did, String does) {
            String who = other == null ? "another thread" : other.who();
            return new PtxFault(CudaError.LAUNCH_FAILED, "shared-memory race on byte " + at
                    + " of block (" + b.x + "," + b.y + "," + b.z + ")'s shared memory: " + who + " " + did
                    + " it at " + otherAt.where() + ", then " + t.who() + " " + does
                    + " it at " + t.at.where() + ", with no bar.sync between");
        }
    }

    // ---- byte arrays ---------------------------------------------------------------------------

    /** Sets the written bits of {@code [off, off + bytes)}. */
    static void markWritten(long[] bits, long off, int bytes) {
        for (long b = off; b < off + bytes; b++) {
            bits[(int) (b >>> 6)] |= 1L << (b & 63);
        }
    }

    /**
     * Reports a read of {@code [off, off + bytes)} of on-chip memory to the initcheck when any of it
     * was never written.
     */
    static void readOnChip(long[] bits, long off, int bytes, Thr t, String memory, long size) {
        for (long b = off; b < off + bytes; b++) {
            if ((bits[(int) (b >>> 6)] & (1L << (b & 63))) == 0) {
                t.block.l.global.uninitialized(t.at == null ? "PTX line ?" : t.at.where(), memory, size, b, bytes);
                return;
            }
        }
    }

    /** {@return {@code bits} grown to cover {@code bytes} bytes, the new ones unwritten} */
    static long[] growWritten(long[] bits, int bytes) {
        int words = (bytes + 63) >>> 6;
        return bits.length >= words ? bits : Arrays.copyOf(bits, words);
    }

    static long get(byte[] a, int off, int bytes) {
        return switch (bytes) {
            case 1 -> a[off] & 0xffL;
            case 2 -> (short) I16.get(a, off) & 0xffffL;
            case 4 -> (int) I32.get(a, off) & 0xffffffffL;
            default -> (long) I64.get(a, off);
        };
    }

    static void put(byte[] a, int off, int bytes, long v) {
        switch (bytes) {
            case 1 -> a[off] = (byte) v;
            case 2 -> I16.set(a, off, (short) v);
            case 4 -> I32.set(a, off, (int) v);
            default -> I64.set(a, off, v);
        }
    }

    static boolean inShared(long addr) {
        return Long.compareUnsigned(addr - SHARED_WINDOW, WINDOW) < 0;
    }

    static boolean inLocal(long addr) {
        return Long.compareUnsigned(addr - LOCAL_WINDOW, WINDOW) < 0;
    }
}
