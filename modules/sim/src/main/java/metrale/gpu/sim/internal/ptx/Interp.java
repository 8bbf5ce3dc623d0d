// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static metrale.gpu.sim.internal.ptx.PtxLaunch.AT_BAR;
import static metrale.gpu.sim.internal.ptx.PtxLaunch.AT_WARP;
import static metrale.gpu.sim.internal.ptx.PtxLaunch.EXITED;
import static metrale.gpu.sim.internal.ptx.PtxLaunch.RUNNABLE;

import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.ptx.PtxLaunch.Block;
import metrale.gpu.sim.internal.ptx.PtxLaunch.Frame;
import metrale.gpu.sim.internal.ptx.PtxLaunch.Thr;

/** The interpreter: runs one thread until it exits or must wait for others ({@link PtxLaunch}). */
final class Interp {

    private Interp() {
    }

    private static long v(long[] r, Insn in, int k) {
        int s = in.src[k];
        return s >= 0 ? r[s] : in.imm[k];
    }

    /** Runs {@code t} from its pc until it exits, or waits at a barrier or a warp operation. */
    static void run(Thr t) {
        Block b = t.block;
        PtxLaunch l = b.l;
        Frame fr = t.frame;
        long[] r = fr.r;
        Insn[] code = fr.fn.code;
        int pc = fr.pc;
        long steps = t.steps;
        try {
            while (true) {
                Insn in = code[pc];
                if (++steps > PtxLaunch.MAX_STEPS) {
                    t.at = in;
                    throw b.fault(CudaError.LAUNCH_TIMEOUT, t, "ran " + PtxLaunch.MAX_STEPS
                            + " instructions without ending (the simulator's watchdog)");
                }
                if (in.guard >= 0 && ((r[in.guard] & 1) != 0) == in.guardNeg) {
                    pc++;
                    continue;
                }
                int[] d = in.dst;
                switch (in.op) {
                    case Insn.MOV -> r[d[0]] = v(r, in, 0);
                    case Insn.ADD -> r[d[0]] = Alu.add(in.type, in.type2, in.ftz, in.sat, v(r, in, 0), v(r, in, 1));
                    case Insn.SUB -> r[d[0]] = Alu.sub(in.type, in.type2, in.ftz, in.sat, v(r, in, 0), v(r, in, 1));
                    case Insn.MUL -> r[d[0]] = Alu.mul(in.type, in.mode, in.type2, in.ftz, in.sat, v(r, in, 0), v(r, in, 1));
                    case Insn.MAD -> r[d[0]] = Alu.mad(in.type, in.mode, in.type2, in.ftz, in.sat, v(r, in, 0), v(r, in, 1),
                            v(r, in, 2));
                    case Insn.FMA -> r[d[0]] = Alu.fma(in.type, in.type2, in.ftz, in.sat, v(r, in, 0), v(r, in, 1), v(r, in, 2));
                    case Insn.DIV -> r[d[0]] = Alu.div(in.type, in.ftz, v(r, in, 0), v(r, in, 1));
                    case Insn.REM -> r[d[0]] = Alu.rem(in.type, v(r, in, 0), v(r, in, 1));
                    case Insn.MIN -> r[d[0]] = Alu.min(in.type, in.ftz, v(r, in, 0), v(r, in, 1));
                    case Insn.MAX -> r[d[0]] = Alu.max(in.type, in.ftz, v(r, in, 0), v(r, in, 1));
                    case Insn.AND, Insn.OR, Insn.XOR -> r[d[0]] = Alu.logic(in.op, in.type, v(r, in, 0), v(r, in, 1));
                    case Insn.NOT -> r[d[0]] = Alu.not(in.type, v(r, in, 0));
                    case Insn.CNOT -> r[d[0]] = Alu.norm(in.type, v(r, in, 0)) == 0 ? 1 : 0;
                    case Insn.SHL -> r[d[0]] = Alu.shl(in.type, v(r, in, 0), v(r, in, 1));
                    case Insn.SHR -> r[d[0]] = Alu.shr(in.type, v(r, in, 0), v(r, in, 1));
                    case Insn.ABS -> r[d[0]] = Alu.abs(in.type, in.ftz, v(r, in, 0));
                    case Insn.NEG -> r[d[0]] = Alu.neg(in.type, in.ftz, v(r, in, 0));
                    case Insn.POPC -> r[d[0]] = Alu.popc(in.type, v(r, in, 0));
                    case Insn.CLZ -> r[d[0]] = Alu.clz(in.type, v(r, in, 0));
                    case Insn.BREV -> r[d[0]] = Alu.brev(in.type, v(r, in, 0));
                    case Insn.RCP, Insn.SQRT, Insn.RSQRT, Insn.EX2, Insn.LG2, Insn.SIN, Insn.COS, Insn.TANH ->
                            r[d[0]] = Alu.fun(in.op, in.type, in.ftz, v(r, in, 0));
                    case Insn.COPYSIGN -> r[d[0]] = Alu.copysign(in.type, v(r, in, 0), v(r, in, 1));
                    case Insn.TESTP -> r[d[0]] = Alu.testp(in.mode, in.type, v(r, in, 0));
                    case Insn.BFE -> r[d[0]] = Alu.bfe(in.type, v(r, in, 0), v(r, in, 1), v(r, in, 2));
                    case Insn.BFI -> r[d[0]] = Alu.bfi(in.type, v(r, in, 0), v(r, in, 1), v(r, in, 2), v(r, in, 3));
                    case Insn.PRMT -> r[d[0]] = Alu.prmt(v(r, in, 0), v(r, in, 1), v(r, in, 2));
                    case Insn.SHF -> r[d[0]] = Alu.shf(in.mode == 1, in.sat, v(r, in, 0), v(r, in, 1), v(r, in, 2));
                    case Insn.MUL24 -> r[d[0]] = mul24(in, v(r, in, 0), v(r, in, 1));
                    case Insn.MAD24 -> r[d[0]] = mul24(in, v(r, in, 0), v(r, in, 1)) + v(r, in, 2);
                    case Insn.SAD -> r[d[0]] = sad(in.type, v(r, in, 0), v(r, in, 1), v(r, in, 2));
                    case Insn.SETP -> {
                        boolean c = Alu.compare(in.mode, in.type, in.ftz, v(r, in, 0), v(r, in, 1));
                        if (in.boolOp == Insn.BOOL_NONE) {
                            r[d[0]] = c ? 1 : 0;
                            if (d.length > 1) {
                                r[d[1]] = c ? 0 : 1;
                            }
                        } else {
                            boolean q = ((v(r, in, 2) & 1) != 0) != in.negSrc2;
                            boolean p = combine(in.boolOp, c, q);
                            r[d[0]] = p ? 1 : 0;
                            if (d.length > 1) {
                                r[d[1]] = combine(in.boolOp, !c, q) ? 1 : 0;
                            }
                        }
                    }
                    case Insn.SELP -> r[d[0]] = (v(r, in, 2) & 1) != 0 ? v(r, in, 0) : v(r, in, 1);
                    case Insn.CVT -> r[d[0]] = Alu.cvt(in.type, in.type2, in.mode, in.ftz, in.sat, v(r, in, 0));
                    case Insn.CVTA -> r[d[0]] = cvta(in, v(r, in, 0), t);
                    case Insn.PACK -> {
                        int w = Insn.bits(in.type) / in.src.length;
                        long mask = w == 64 ? -1L : (1L << w) - 1;
                        long out = 0;
                        for (int k = 0; k < in.src.length; k++) {
                            out |= (r[in.src[k]] & mask) << (k * w);
                        }
                        r[d[0]] = out;
                    }
                    case Insn.UNPACK -> {
                        int w = Insn.bits(in.type) / d.length;
                        long mask = w == 64 ? -1L : (1L << w) - 1;
                        long x = v(r, in, 0);
                        for (int k = 0; k < d.length; k++) {
                            r[d[k]] = (x >>> (k * w)) & mask;
                        }
                    }
                    case Insn.LD -> {
                        t.at = in;
                        int bytes = Insn.bits(in.type) / 8;
                        long addr = (in.areg >= 0 ? r[in.areg] : 0) + in.aoff;
                        // A vector access must be aligned to its whole size; that is its first element's address.
                        for (int k = 0; k < d.length; k++) {
                            r[d[k]] = Alu.norm(in.type, load(t, fr, in, addr + (long) k * bytes, bytes,
                                    k == 0 ? in.vec * bytes : bytes));
                        }
                    }
                    case Insn.ST -> {
                        t.at = in;
                        int bytes = Insn.bits(in.type) / 8;
                        long addr = (in.areg >= 0 ? r[in.areg] : 0) + in.aoff;
                        for (int k = 0; k < in.src.length; k++) {
                            store(t, fr, in, addr + (long) k * bytes, bytes, k == 0 ? in.vec * bytes : bytes, v(r, in, k));
                        }
                    }
                    case Insn.ATOM, Insn.RED -> {
                        t.at = in;
                        long addr = (in.areg >= 0 ? r[in.areg] : 0) + in.aoff;
                        long old = atomic(t, in, addr, v(r, in, 0), in.src.length > 1 ? v(r, in, 1) : 0);
                        if (in.op == Insn.ATOM) {
                            r[d[0]] = Alu.norm(in.type, old);
                        }
                    }
                    case Insn.BRA -> {
                        pc = in.target;
                        continue;
                    }
                    case Insn.BAR, Insn.BARRED -> {
                        t.at = in;
                        t.state = AT_BAR;
                        fr.pc = pc;
                        t.steps = steps;
                        return;
                    }
                    case Insn.SHFL, Insn.VOTE, Insn.WARPSYNC, Insn.REDUX -> {
                        t.at = in;
                        t.state = AT_WARP;
                        int mk = in.op == Insn.SHFL ? 3 : in.op == Insn.WARPSYNC ? 0 : 1;
                        t.waitMask = (int) v(r, in, mk);
                        fr.pc = pc;
                        t.steps = steps;
                        return;
                    }
                    case Insn.ACTIVEMASK -> r[d[0]] = activeMask(b, t);
                    case Insn.TIMER -> {
                        if (in.mode == Insn.GLOBALTIMER) {
                            t.timer += PtxLaunch.GLOBALTIMER_STEP;
                            r[d[0]] = l.startNanos + t.timer;
                        } else {
                            r[d[0]] = in.mode == Insn.CLOCK ? steps & 0xffffffffL : steps;
                        }
                    }
                    case Insn.NANOSLEEP -> t.timer += v(r, in, 0) & 0xffffffffL;
                    case Insn.FENCE, Insn.NOP -> {
                    }
                    case Insn.TRAP -> {
                        t.at = in;
                        String why = fr.fn.unsupported != null && in.text.indexOf("trap") != 0
                                ? "an instruction the engine does not run" : "trap";
                        throw b.fault(CudaError.LAUNCH_FAILED, t, why);
                    }
                    case Insn.CALL -> {
                        t.at = in;
                        if (in.target < 0) {
                            throw b.fault(in.target == -2 ? CudaError.ASSERT : CudaError.NOT_SUPPORTED, t,
                                    in.target == -2 ? "device-side assert" : "vprintf is not run by the engine");
                        }
                        PtxFunction callee = l.module.byIndex.get(in.target);
                        long[] cr = new long[callee.regCount];
                        System.arraycopy(r, 0, cr, 0, Special.COUNT);
                        byte[] cp = new byte[callee.paramBytes];
                        for (int k = 0; k < in.callArgs.length; k++) {
                            PtxFunction.Param p = callee.params.get(k);
                            System.arraycopy(fr.param, in.callArgs[k], cp, p.offset(), p.size());
                        }
                        int base = (fr.localBase + fr.fn.localBytes + 15) & ~15;
                        if (callee.localBytes > 0) {
                            int need = base + callee.localBytes;
                            if (t.local == null || t.local.length < need) {
                                int had = t.local == null ? 0 : t.local.length;
                                t.local = t.local == null ? new byte[need] : java.util.Arrays.copyOf(t.local, need);
                                java.util.Arrays.fill(t.local, had, need, t.block.l.fill);
                                if (t.block.l.trackOnChip) {
                                    t.localWritten = t.localWritten == null ? new long[(need + 63) >>> 6]
                                            : PtxLaunch.growWritten(t.localWritten, need);
                                }
                            }
                        }
                        fr.pc = pc + 1;
                        fr = new Frame(callee, cr, cp, base, fr, in);
                        t.frame = fr;
                        r = cr;
                        code = callee.code;
                        pc = 0;
                        continue;
                    }
                    case Insn.RET, Insn.EXIT -> {
                        if (in.op == Insn.RET && fr.parent != null) {
                            Frame caller = fr.parent;
                            Insn call = fr.call;
                            for (int k = 0; k < call.callRets.length; k++) {
                                PtxFunction.Param p = fr.fn.rets.get(k);
                                System.arraycopy(fr.param, p.offset(), caller.param, call.callRets[k], p.size());
                            }
                            fr = caller;
                            t.frame = fr;
                            r = fr.r;
                            code = fr.fn.code;
                            pc = fr.pc;
                            continue;
                        }
                        t.state = EXITED;
                        t.steps = steps;
                        return;
                    }
                    default -> {
                        t.at = in;
                        throw b.fault(CudaError.NOT_SUPPORTED, t, "an instruction the engine does not run");
                    }
                }
                pc++;
                if (pc >= code.length) {
                    // Falling off the end of a function is a return.
                    t.state = EXITED;
                    t.steps = steps;
                    return;
                }
            }
        } catch (ArithmeticException | IndexOutOfBoundsException e) {
            throw failed(t, e);
        }
    }

    /** {@return the fault of a thread whose instruction threw {@code e} inside the engine} */
    static PtxFault failed(Thr t, RuntimeException e) {
        return t.block.fault(CudaError.LAUNCH_FAILED, t, "the engine failed: " + e);
    }

    /** {@code sad}: {@code |a - b| + c}, the difference taken in {@code type}. */
    static long sad(int type, long a, long b, long c) {
        long x = Alu.norm(type, a);
        long y = Alu.norm(type, b);
        boolean u = Insn.cls(type) != Insn.S;
        long diff = (u ? Long.compareUnsigned(x, y) < 0 : x < y) ? y - x : x - y;
        return diff + c;
    }

    private static boolean combine(int op, boolean a, boolean b) {
        return switch (op) {
            case Insn.BOOL_AND -> a && b;
            case Insn.BOOL_OR -> a || b;
            default -> a ^ b;
        };
    }

    static long mul24(Insn in, long a, long b) {
        boolean s = Insn.cls(in.type) == Insn.S;
        long x = s ? (a << 40) >> 40 : a & 0xffffff;
        long y = s ? (b << 40) >> 40 : b & 0xffffff;
        long p = x * y;
        return in.mode == Insn.HI ? p >> 16 : p;
    }

    static long cvta(Insn in, long a, Thr t) {
        long win = switch (in.space) {
            case Insn.SHARED -> PtxLaunch.SHARED_WINDOW;
            case Insn.LOCAL -> PtxLaunch.LOCAL_WINDOW;
            default -> 0;
        };
        return in.mode == 1 ? a - win : a + win;
    }

    static long activeMask(Block b, Thr t) {
        long m = 0;
        for (int lane = 0; lane < 32; lane++) {
            int i = t.warp * 32 + lane;
            if (i < b.threads.length && b.threads[i].state != EXITED) {
                m |= 1L << lane;
            }
        }
        return m;
    }

    // ---- memory --------------------------------------------------------------------------------

    static int spaceOf(Insn in, long addr) {
        if (in.asym >= 0) {
            return in.asym;
        }
        if (in.space != Insn.GENERIC) {
            return in.space;
        }
        if (PtxLaunch.inShared(addr)) {
            return -Insn.SHARED;
        }
        if (PtxLaunch.inLocal(addr)) {
            return -Insn.LOCAL;
        }
        return Insn.GLOBAL;
    }

    static void aligned(Thr t, long addr, int access, String space) {
        if ((addr & (access - 1)) != 0) {
            throw t.block.fault(CudaError.MISALIGNED_ADDRESS, t, space + " address 0x" + Long.toHexString(addr)
                    + " is not aligned to the access's " + access + " bytes");
        }
    }

    static long load(Thr t, Frame fr, Insn in, long addr, int bytes, int access) {
        int sp = spaceOf(in, addr);
        switch (sp) {
            case Insn.PARAM -> {
                return loadParam(t, fr, addr, bytes);
            }
            case Insn.SHARED, -Insn.SHARED -> {
                long off = sp < 0 ? addr - PtxLaunch.SHARED_WINDOW : addr;
                return t.block.sharedLoad(t, off, bytes);
            }
            case Insn.LOCAL, -Insn.LOCAL -> {
                long off = (sp < 0 ? addr - PtxLaunch.LOCAL_WINDOW : addr) + fr.localBase;
                checkLocal(t, off, bytes);
                if (t.localWritten != null) {
                    PtxLaunch.readOnChip(t.localWritten, off, bytes, t, "local memory of " + t.who(), t.local.length);
                }
                return PtxLaunch.get(t.local, (int) off, bytes);
            }
            default -> {
                return loadGlobal(t, addr, bytes, access);
            }
        }
    }

    /** A load from the frame's parameter area. */
    static long loadParam(Thr t, Frame fr, long addr, int bytes) {
        if (addr < 0 || addr + bytes > fr.param.length) {
            throw t.block.fault(CudaError.ILLEGAL_ADDRESS, t, "parameter offset " + addr + " (+" + bytes
                    + ") is outside the " + fr.param.length + "-byte parameter area");
        }
        return PtxLaunch.get(fr.param, (int) addr, bytes);
    }

    /** A load from global memory: {@code access} is the whole (vector) access's bytes, its alignment. */
    static long loadGlobal(Thr t, long addr, int bytes, int access) {
        aligned(t, addr, access, "global");
        return t.block.l.global.load(addr, bytes, t);
    }

    /** A store to global memory, aligned as {@link #loadGlobal}. */
    static void storeGlobal(Thr t, long addr, int bytes, int access, long v) {
        aligned(t, addr, access, "global");
        t.block.l.global.store(addr, bytes, v, t);
    }

    static void store(Thr t, Frame fr, Insn in, long addr, int bytes, int access, long v) {
        int sp = spaceOf(in, addr);
        switch (sp) {
            case Insn.PARAM -> {
                if (fr.parent == null && addr < fr.fn.argBytes()) {
                    throw t.block.fault(CudaError.ILLEGAL_INSTRUCTION, t, "a store to the kernel's parameters");
                }
                if (addr < 0 || addr + bytes > fr.param.length) {
                    throw t.block.fault(CudaError.ILLEGAL_ADDRESS, t, "parameter offset " + addr
                            + " is outside the parameter area");
                }
                PtxLaunch.put(fr.param, (int) addr, bytes, v);
            }
            case Insn.SHARED, -Insn.SHARED -> {
                long off = sp < 0 ? addr - PtxLaunch.SHARED_WINDOW : addr;
                t.block.sharedStore(t, off, bytes, v);
            }
            case Insn.LOCAL, -Insn.LOCAL -> {
                long off = (sp < 0 ? addr - PtxLaunch.LOCAL_WINDOW : addr) + fr.localBase;
                checkLocal(t, off, bytes);
                if (t.localWritten != null) {
                    PtxLaunch.markWritten(t.localWritten, off, bytes);
                }
                PtxLaunch.put(t.local, (int) off, bytes, v);
            }
            default -> storeGlobal(t, addr, bytes, access, v);
        }
    }

    static void checkLocal(Thr t, long off, int bytes) {
        if (t.local == null || off < 0 || off + bytes > t.local.length) {
            throw t.block.fault(CudaError.ILLEGAL_ADDRESS, t, "local address " + off + " (+" + bytes
                    + " bytes) lies outside the thread's " + (t.local == null ? 0 : t.local.length) + " bytes of local memory");
        }
    }

    static long atomic(Thr t, Insn in, long addr, long b, long c) {
        int bytes = Insn.bits(in.type) / 8;
        int sp = spaceOf(in, addr);
        if (sp == Insn.SHARED || sp == -Insn.SHARED) {
            long off = sp < 0 ? addr - PtxLaunch.SHARED_WINDOW : addr;
            Block blk = t.block;
            blk.checkShared(t, off, bytes);
            if (blk.sharedWritten != null) {
                PtxLaunch.readOnChip(blk.sharedWritten, off, bytes, t, "shared memory of block (" + blk.x + "," + blk.y
                        + "," + blk.z + ")", blk.shared.length);
                PtxLaunch.markWritten(blk.sharedWritten, off, bytes);
            }
            long old = PtxLaunch.get(blk.shared, (int) off, bytes);
            PtxLaunch.put(blk.shared, (int) off, bytes, Alu.atomShared(in.mode, in.type, old, b, c));
            return old;
        }
        if (sp != Insn.GLOBAL) {
            throw t.block.fault(CudaError.ILLEGAL_ADDRESS, t, "an atomic on a space other than global or shared");
        }
        aligned(t, addr, bytes, "global");
        return t.block.l.global.atomic(in.mode, in.type, addr, b, c, t);
    }

    // ---- completing waits ----------------------------------------------------------------------

    /** Completes the warp operation lane {@code t} waits at, for the lanes of {@code mask}. */
    static void warpOp(Block b, Thr t, int mask) {
        Insn in = t.at;
        int base = t.warp * 32;
        Thr[] th = b.threads;
        switch (in.op) {
            case Insn.WARPSYNC -> b.warpEpoch[t.warp]++;
            case Insn.VOTE -> {
                long ballot = 0;
                for (int lane = 0; lane < 32; lane++) {
                    if ((mask & (1 << lane)) != 0 && base + lane < th.length) {
                        Thr o = th[base + lane];
                        boolean p = ((v(o.frame.r, in, 0) & 1) != 0) != in.negSrc2;
                        if (p) {
                            ballot |= 1L << lane;
                        }
                    }
                }
                long present = presentMask(th, base, mask);
                for (int lane = 0; lane < 32; lane++) {
                    if ((present & (1L << lane)) == 0) {
                        continue;
                    }
                    Thr o = th[base + lane];
                    long out = switch (in.mode) {
                        case Insn.VOTE_ALL -> ballot == present ? 1 : 0;
                        case Insn.VOTE_ANY -> ballot != 0 ? 1 : 0;
                        case Insn.VOTE_UNI -> ballot == 0 || ballot == present ? 1 : 0;
                        default -> ballot;
                    };
                    o.frame.r[in.dst[0]] = out;
                }
            }
            case Insn.REDUX -> {
                long acc = 0;
                boolean firstVal = true;
                long present = presentMask(th, base, mask);
                for (int lane = 0; lane < 32; lane++) {
                    if ((present & (1L << lane)) != 0) {
                        long x = Alu.norm(in.type, v(th[base + lane].frame.r, in, 0));
                        acc = firstVal ? x : Alu.atom(in.mode, in.type, acc, x, 0);
                        firstVal = false;
                    }
                }
                for (int lane = 0; lane < 32; lane++) {
                    if ((present & (1L << lane)) != 0) {
                        th[base + lane].frame.r[in.dst[0]] = acc;
                    }
                }
            }
            default -> shfl(b, in, th, base, mask);
        }
        long present = presentMask(th, base, mask);
        for (int lane = 0; lane < 32; lane++) {
            if ((present & (1L << lane)) != 0) {
                Thr o = th[base + lane];
                o.frame.pc++;
                o.state = RUNNABLE;
            }
        }
    }

    private static long presentMask(Thr[] th, int base, int mask) {
        long m = 0;
        for (int lane = 0; lane < 32; lane++) {
            if ((mask & (1 << lane)) != 0 && base + lane < th.length && th[base + lane].state == AT_WARP) {
                m |= 1L << lane;
            }
        }
        return m;
    }

    /**
     * shfl.sync as PTX specifies it. A source lane outside the block (a partial warp) gives the lane
     * its own value; one of the block outside the member mask, or one that exited, is undefined in
     * PTX (the GPU returns whatever that lane's register holds), so the launch fails naming both
     * lanes and the instruction.
     */
    private static void shfl(Block b, Insn in, Thr[] th, int base, int mask) {
        long present = presentMask(th, base, mask);
        long[] a = new long[32];
        for (int lane = 0; lane < 32; lane++) {
            if ((present & (1L << lane)) != 0) {
                a[lane] = v(th[base + lane].frame.r, in, 0);
            }
        }
        for (int lane = 0; lane < 32; lane++) {
            if ((present & (1L << lane)) == 0) {
                continue;
            }
            Thr o = th[base + lane];
            long[] r = o.frame.r;
            int bval = (int) v(r, in, 1) & 0x1f;
            int c = (int) v(r, in, 2);
            int cval = c & 0x1f;
            int segmask = (c >>> 8) & 0x1f;
            int maxLane = (lane & segmask) | (cval & ~segmask);
            int minLane = lane & segmask;
            int j;
            boolean pval;
            switch (in.mode) {
                case Insn.SHFL_UP -> {
                    j = lane - bval;
                    pval = j >= maxLane;
                }
                case Insn.SHFL_DOWN -> {
                    j = lane + bval;
                    pval = j <= maxLane;
                }
                case Insn.SHFL_BFLY -> {
                    j = lane ^ bval;
                    pval = j <= maxLane;
                }
                default -> {
                    j = minLane | (bval & ~segmask);
                    pval = j <= maxLane;
                }
            }
            if (pval && j >= 0 && j <= 31 && (present & (1L << j)) == 0 && base + j < th.length) {
                boolean inMask = (mask & (1 << j)) != 0;
                throw b.fault(CudaError.LAUNCH_FAILED, o, "shfl.sync in lane " + lane + " reads lane " + j + ", which "
                        + (inMask ? "has exited" : "is not in the member mask 0x" + Integer.toHexString(mask))
                        + ": undefined in PTX (a GPU returns whatever that lane's register holds); name every lane a "
                        + "shuffle reads in its mask, or keep what it reads from them out of the result");
            }
            if (!pval || j < 0 || j > 31 || (present & (1L << j)) == 0) {
                j = lane;
            }
            r[in.dst[0]] = a[j];
            if (in.dst.length > 1) {
                r[in.dst[1]] = pval ? 1 : 0;
            }
        }
    }

    /** Completes a barrier every live thread of the block waits at; {@code bar.red} reduces its predicate. */
    static void barrier(Block b, Insn in) {
        long count = 0;
        boolean all = true;
        boolean any = false;
        if (in.op == Insn.BARRED) {
            for (Thr o : b.threads) {
                if (o.state == AT_BAR) {
                    boolean p = ((v(o.frame.r, in, 1) & 1) != 0) != in.negSrc2;
                    count += p ? 1 : 0;
                    all &= p;
                    any |= p;
                }
            }
        }
        for (Thr o : b.threads) {
            if (o.state == AT_BAR) {
                if (in.op == Insn.BARRED) {
                    o.frame.r[in.dst[0]] = switch (in.mode) {
                        case Insn.RED_POPC -> count;
                        case Insn.VOTE_ALL -> all ? 1 : 0;
                        default -> any ? 1 : 0;
                    };
                }
                o.frame.pc++;
                o.state = RUNNABLE;
            }
        }
    }
}
