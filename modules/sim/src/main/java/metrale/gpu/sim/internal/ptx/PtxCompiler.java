// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static java.lang.constant.ConstantDescs.CD_Object;
import static java.lang.constant.ConstantDescs.CD_String;
import static java.lang.constant.ConstantDescs.CD_boolean;
import static java.lang.constant.ConstantDescs.CD_double;
import static java.lang.constant.ConstantDescs.CD_float;
import static java.lang.constant.ConstantDescs.CD_int;
import static java.lang.constant.ConstantDescs.CD_long;
import static java.lang.constant.ConstantDescs.CD_void;

import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Label;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.instruction.SwitchCase;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.DynamicConstantDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.ptx.PtxLaunch.Thr;

/**
 * Compiles one decoded {@link PtxFunction} to JVM bytecode ({@code java.lang.classfile}), defined
 * as a hidden class of this package, so the JIT runs a kernel as Java code. The compiled code keeps
 * {@link Interp}'s rules exactly: it is the interpreter's switch unrolled over the function's
 * instructions, with the registers in JVM locals.
 *
 * <p><b>Shape of the code.</b> The registers the function names are loaded from the frame's
 * register file on entry and stored back (those it writes) before every way out: an exit, a wait
 * at a barrier or warp operation (whose completion reads and writes other threads' register
 * files), and a hand-over to the interpreter. Entry dispatches on the frame's pc over the points a
 * thread resumes at (0, and the instruction after each barrier and warp operation). Each basic
 * block adds its instruction count to the step counter on entry; a block that would pass the
 * watchdog's limit hands the thread to the interpreter at its first instruction, which then
 * faults at the same instruction with the same counts. The hot operations (integer and .rn float
 * arithmetic, comparisons, moves, branches, parameter and global accesses) are bytecode; the rest
 * call the interpreter's own helpers ({@link Alu}, {@link Interp}).
 *
 * <p><b>When it does not compile.</b> A function with a {@code call}, an empty body, an opcode the
 * compiler does not know, or whose method would exceed {@value #MAX_BYTECODE} bytes (HotSpot does
 * not JIT a larger method), or any failure to build or verify the class, is refused and runs
 * interpreted: compiling never changes a result.
 */
final class PtxCompiler {

    /** HotSpot's limit on the bytecode of a method it JIT-compiles ({@code -XX:+DontCompileHugeMethods}). */
    static final int MAX_BYTECODE = 8000;

    /** What {@link PtxFunction#compiled} holds for a function that does not compile, and why. */
    record Refused(String why) {
    }

    private static final class Refusal extends Exception {
        Refusal(String why) {
            super(why, null, false, false);
        }
    }

    private PtxCompiler() {
    }

    /**
     * {@return the compiled code of {@code fn}, compiled on the first call and cached on the
     * function, or {@code null} when it does not compile (it then runs interpreted)} Safe to call
     * from several threads at once: a function compiles once.
     */
    static CompiledCode codeFor(PtxFunction fn) {
        Object c = fn.compiled;
        if (c == null) {
            synchronized (fn) {
                c = fn.compiled;
                if (c == null) {
                    try {
                        c = compile(fn);
                    } catch (Refusal e) {
                        c = new Refused(e.getMessage());
                    } catch (RuntimeException | LinkageError e) {
                        c = new Refused("the compiler failed: " + e);
                    }
                    fn.compiled = c;
                }
            }
        }
        return c instanceof CompiledCode cc ? cc : null;
    }

    /** {@return why {@code fn} runs interpreted, or {@code null} when it compiled} */
    static String refusal(PtxFunction fn) {
        codeFor(fn);
        return fn.compiled instanceof Refused r ? r.why() : null;
    }

    // ---- helpers the compiled code calls ---------------------------------------------------------

    /** {@return the fault of {@code trap} (or of a placeholder for an instruction the engine does not run)} */
    static PtxFault trap(Thr t, String why) {
        return t.block.fault(CudaError.LAUNCH_FAILED, t, why);
    }

    // ---- compiling -------------------------------------------------------------------------------

    private static final ClassDesc CD_THR = ClassDesc.of(PtxLaunch.class.getName() + "$Thr");
    private static final ClassDesc CD_FRAME = ClassDesc.of(PtxLaunch.class.getName() + "$Frame");
    private static final ClassDesc CD_BLOCK = ClassDesc.of(PtxLaunch.class.getName() + "$Block");
    private static final ClassDesc CD_LAUNCH = ClassDesc.of(PtxLaunch.class.getName());
    private static final ClassDesc CD_INSN = ClassDesc.of(Insn.class.getName());
    private static final ClassDesc CD_ALU = ClassDesc.of(Alu.class.getName());
    private static final ClassDesc CD_INTERP = ClassDesc.of(Interp.class.getName());
    private static final ClassDesc CD_COMPILER = ClassDesc.of(PtxCompiler.class.getName());
    private static final ClassDesc CD_CODE = ClassDesc.of(CompiledCode.class.getName());
    private static final ClassDesc CD_FAULT = ClassDesc.of(PtxFault.class.getName());
    private static final ClassDesc CD_FLOAT = ClassDesc.of("java.lang.Float");
    private static final ClassDesc CD_DOUBLE = ClassDesc.of("java.lang.Double");
    private static final ClassDesc CD_LONG = ClassDesc.of("java.lang.Long");
    private static final ClassDesc CD_MATH = ClassDesc.of("java.lang.Math");
    private static final ClassDesc CD_RUNTIME_EX = ClassDesc.of("java.lang.RuntimeException");
    private static final ClassDesc CD_LONGS = CD_long.arrayType();

    private static final MethodTypeDesc RUN = MethodTypeDesc.of(CD_void, CD_THR);

    private static CompiledCode compile(PtxFunction fn) throws Refusal {
        Insn[] code = fn.code;
        if (code.length == 0) {
            throw new Refusal("an empty function");
        }
        for (Insn in : code) {
            if (in.op == Insn.CALL) {
                throw new Refusal("a call (" + in + ")");
            }
            if (in.op < Insn.MOV || in.op > Insn.NANOSLEEP) {
                throw new Refusal("an opcode the compiler does not know (" + in + ")");
            }
        }
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        ClassDesc self = ClassDesc.of(PtxCompiler.class.getPackageName() + ".Compiled_" + javaName(fn.name));
        ClassFile cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(
                ClassHierarchyResolver.defaultResolver().orElse(ClassHierarchyResolver.ofClassLoading(lookup))));
        byte[] bytes = cf.build(self, cb -> {
            cb.withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC);
            cb.withInterfaceSymbols(CD_CODE);
            cb.withMethodBody(ConstantDescs.INIT_NAME, ConstantDescs.MTD_void, ClassFile.ACC_PUBLIC, c -> {
                c.aload(0);
                c.invokespecial(CD_Object, ConstantDescs.INIT_NAME, ConstantDescs.MTD_void);
                c.return_();
            });
            cb.withMethodBody("run", RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                    c -> new Emitter(fn, c, false).method());
            cb.withMethodBody("runFresh", RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                    c -> new Emitter(fn, c, true).method());
        });
        for (MethodModel m : cf.parse(bytes).methods()) {
            if (m.methodName().equalsString("run") || m.methodName().equalsString("runFresh")) {
                int length = m.findAttribute(Attributes.code()).map(CodeAttribute::codeLength).orElse(0);
                if (length > MAX_BYTECODE) {
                    throw new Refusal("its method would be " + length + " bytes of bytecode, more than the JIT compiles ("
                            + MAX_BYTECODE + ")");
                }
            }
        }
        try {
            MethodHandles.Lookup hidden = lookup.defineHiddenClassWithClassData(bytes, List.of(code), true);
            return (CompiledCode) hidden.findConstructor(hidden.lookupClass(),
                    java.lang.invoke.MethodType.methodType(void.class)).invoke();
        } catch (IllegalAccessException | NoSuchMethodException e) {
            throw new Refusal("the class could not be defined: " + e);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new Refusal("the class could not be instantiated: " + e);
        }
    }

    private static String javaName(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(Character.isJavaIdentifierPart(c) && c != '$' ? c : '_');
        }
        return b.toString();
    }

    private static boolean waits(int op) {
        return op == Insn.BAR || op == Insn.BARRED || op == Insn.SHFL || op == Insn.VOTE || op == Insn.WARPSYNC
                || op == Insn.REDUX;
    }

    private static boolean ends(int op) {
        return waits(op) || op == Insn.BRA || op == Insn.RET || op == Insn.EXIT || op == Insn.TRAP;
    }

    /** Writes the {@code run} method of one function. */
    private static final class Emitter {
        // Locals: 0 this, 1 the thread, then the frame, its register file, the step counter,
        // a pc, scratch, and two slots per register of the function.
        private static final int T = 1, FR = 2, R = 3, STEPS = 4, PC = 6, TL = 7, TL2 = 9, TI = 11, TI2 = 12, REGS = 13;

        private final PtxFunction fn;
        private final Insn[] code;
        private final CodeBuilder c;
        /** Whether this is {@code runFresh}: zero registers in, no register file written at the exit. */
        private final boolean fresh;
        private final BitSet used = new BitSet();
        private final BitSet written = new BitSet();
        private final BitSet leader = new BitSet();
        private final BitSet resume = new BitSet();
        private final Label[] at;
        private final Label bail;
        private final Label exit;

        Emitter(PtxFunction fn, CodeBuilder c, boolean fresh) {
            this.fn = fn;
            this.code = fn.code;
            this.c = c;
            this.fresh = fresh;
            this.at = new Label[code.length];
            this.bail = c.newLabel();
            this.exit = c.newLabel();
            leader.set(0);
            resume.set(0);
            for (int i = 0; i < code.length; i++) {
                Insn in = code[i];
                if (in.guard >= 0) {
                    used.set(in.guard);
                }
                if (in.areg >= 0) {
                    used.set(in.areg);
                }
                for (int s : in.src) {
                    if (s >= 0) {
                        used.set(s);
                    }
                }
                for (int d : in.dst) {
                    used.set(d);
                    written.set(d);
                }
                if (in.op == Insn.BRA && in.target >= 0 && in.target < code.length) {
                    leader.set(in.target);
                }
                if (ends(in.op) && i + 1 < code.length) {
                    leader.set(i + 1);
                    if (waits(in.op)) {
                        resume.set(i + 1);
                    }
                }
            }
            for (int i = leader.nextSetBit(0); i >= 0; i = leader.nextSetBit(i + 1)) {
                at[i] = c.newLabel();
            }
        }

        private static int local(int reg) {
            return REGS + 2 * reg;
        }

        void method() {
            c.aload(T).getfield(CD_THR, "frame", CD_FRAME).astore(FR);
            c.aload(FR).getfield(CD_FRAME, "r", CD_LONGS).astore(R);
            c.aload(T).getfield(CD_THR, "steps", CD_long).lstore(STEPS);
            c.iconst_0().istore(PC);
            c.lconst_0().lstore(TL);
            c.lconst_0().lstore(TL2);
            c.iconst_0().istore(TI);
            c.iconst_0().istore(TI2);
            for (int s = used.nextSetBit(0); s >= 0; s = used.nextSetBit(s + 1)) {
                if (fresh && s >= Special.COUNT) {
                    c.lconst_0().lstore(local(s));
                } else {
                    c.aload(R).loadConstant(s).laload().lstore(local(s));
                }
            }
            Label start = c.newBoundLabel();
            if (fresh) {
                c.goto_(at[0]);
            } else {
                Label unknown = c.newLabel();
                int high = resume.length() - 1;
                List<SwitchCase> cases = new ArrayList<>();
                for (int p = 0; p <= high; p++) {
                    cases.add(SwitchCase.of(p, resume.get(p) ? at[p] : unknown));
                }
                c.aload(FR).getfield(CD_FRAME, "pc", CD_int);
                c.tableswitch(0, high, unknown, cases);
                c.labelBinding(unknown);
                c.aload(FR).getfield(CD_FRAME, "pc", CD_int).istore(PC);
                c.goto_(bail);
            }
            for (int s = 0; s < code.length; ) {
                int e = leader.nextSetBit(s + 1);
                if (e < 0) {
                    e = code.length;
                }
                block(s, e);
                s = e;
            }
            // Hand the thread to the interpreter at pc PC.
            c.labelBinding(bail);
            spill();
            c.aload(FR).iload(PC).putfield(CD_FRAME, "pc", CD_int);
            c.aload(T).lload(STEPS).putfield(CD_THR, "steps", CD_long);
            c.aload(T).invokestatic(CD_INTERP, "run", RUN);
            c.return_();
            c.labelBinding(exit);
            if (!fresh) {
                spill();
            }
            c.aload(T).loadConstant(PtxLaunch.EXITED).putfield(CD_THR, "state", CD_int);
            c.aload(T).lload(STEPS).putfield(CD_THR, "steps", CD_long);
            c.return_();
            Label end = c.newBoundLabel();
            for (String ex : List.of("java.lang.ArithmeticException", "java.lang.IndexOutOfBoundsException")) {
                Label h = c.newBoundLabel();
                c.exceptionCatch(start, end, h, ClassDesc.of(ex));
                c.aload(T).swap();
                c.invokestatic(CD_INTERP, "failed", MethodTypeDesc.of(CD_FAULT, CD_THR, CD_RUNTIME_EX));
                c.athrow();
            }
        }

        /** Stores the registers the function writes back into the frame's register file. */
        private void spill() {
            for (int s = written.nextSetBit(0); s >= 0; s = written.nextSetBit(s + 1)) {
                c.aload(R).loadConstant(s).lload(local(s)).lastore();
            }
        }

        private void block(int s, int e) {
            int k = e - s;
            c.labelBinding(at[s]);
            c.lload(STEPS).loadConstant((long) k).ladd().lstore(STEPS);
            Label ok = c.newLabel();
            c.lload(STEPS).loadConstant(PtxLaunch.MAX_STEPS).lcmp().ifle(ok);
            c.lload(STEPS).loadConstant((long) k).lsub().lstore(STEPS);
            c.loadConstant(s).istore(PC).goto_(bail);
            c.labelBinding(ok);
            for (int i = s; i < e; i++) {
                insn(i, e - 1 - i);
            }
            Insn last = code[e - 1];
            boolean falls = last.guard >= 0 || !(last.op == Insn.BRA || last.op == Insn.RET || last.op == Insn.EXIT
                    || last.op == Insn.TRAP || waits(last.op));
            if (falls && e == code.length) {
                c.goto_(exit);
            }
        }

        // ---- operands ----------------------------------------------------------------------------

        /** Pushes source {@code k} as a long. */
        private void v(Insn in, int k) {
            int s = in.src[k];
            if (s >= 0) {
                c.lload(local(s));
            } else {
                c.loadConstant(in.imm[k]);
            }
        }

        private void store(int reg) {
            c.lstore(local(reg));
        }

        /** Pushes the instruction object (for helpers that take it, and for {@code t.at}). */
        private void insnConst(int i) {
            // Element i of the class data, a constant the JIT folds.
            c.ldc(DynamicConstantDesc.ofNamed(ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, CD_INSN, i));
        }

        private void setAt(int i) {
            c.aload(T);
            insnConst(i);
            c.putfield(CD_THR, "at", CD_INSN);
        }

        /** Normalizes the long on the stack to {@code type}, as {@link Alu#norm}. */
        private void norm(int type) {
            int cls = Insn.cls(type);
            if (cls == Insn.PRED) {
                c.lconst_1().land();
                return;
            }
            boolean s = cls == Insn.S;
            switch (Insn.bits(type)) {
                case 32 -> {
                    if (s) {
                        c.l2i().i2l();
                    } else {
                        c.loadConstant(0xffffffffL).land();
                    }
                }
                case 16 -> {
                    if (s) {
                        c.l2i().i2s().i2l();
                    } else {
                        c.loadConstant(0xffffL).land();
                    }
                }
                case 8 -> {
                    if (s) {
                        c.l2i().i2b().i2l();
                    } else {
                        c.loadConstant(0xffL).land();
                    }
                }
                default -> {
                }
            }
        }

        private void f32(Insn in, int k) {
            v(in, k);
            c.l2i().invokestatic(CD_FLOAT, "intBitsToFloat", MethodTypeDesc.of(CD_float, CD_int));
        }

        private void f64(Insn in, int k) {
            v(in, k);
            c.invokestatic(CD_DOUBLE, "longBitsToDouble", MethodTypeDesc.of(CD_double, CD_long));
        }

        private void bitsF() {
            c.invokestatic(CD_ALU, "bits", MethodTypeDesc.of(CD_long, CD_float));
        }

        private void bitsD() {
            c.invokestatic(CD_DOUBLE, "doubleToRawLongBits", MethodTypeDesc.of(CD_long, CD_double));
        }

        /** Turns the int comparison result on the stack into 0/1 by {@code branch}, into local {@code into}. */
        private void flag(java.util.function.Consumer<Label> branch, int into) {
            Label yes = c.newLabel();
            Label done = c.newLabel();
            branch.accept(yes);
            c.iconst_0().goto_(done);
            c.labelBinding(yes);
            c.iconst_1();
            c.labelBinding(done);
            c.istore(into);
        }

        private static final int F32 = Insn.type(Insn.F, 32), F64 = Insn.type(Insn.F, 64);

        /** Whether a float op of {@code in} is the plain IEEE one: .rn, no .ftz, no .sat. */
        private static boolean plainFloat(Insn in, int rnd) {
            return (in.type == F32 || in.type == F64) && !in.ftz && !in.sat && rnd == Insn.RN;
        }

        private static boolean integer(Insn in) {
            return Insn.cls(in.type) != Insn.F;
        }

        // ---- one instruction ---------------------------------------------------------------------

        /** Emits instruction {@code i}; {@code after} instructions of its block follow it. */
        private void insn(int i, int after) {
            Insn in = code[i];
            Label skip = null;
            if (in.guard >= 0) {
                skip = c.newLabel();
                c.lload(local(in.guard)).lconst_1().land().l2i();
                if (in.guardNeg) {
                    c.ifne(skip);
                } else {
                    c.ifeq(skip);
                }
            }
            body(i, in, after);
            if (skip != null) {
                c.labelBinding(skip);
            }
        }

        private void body(int i, Insn in, int after) {
            int[] d = in.dst;
            switch (in.op) {
                case Insn.MOV -> {
                    v(in, 0);
                    store(d[0]);
                }
                case Insn.ADD, Insn.SUB -> addSub(in);
                case Insn.MUL -> mul(in);
                case Insn.MAD -> mad(in);
                case Insn.FMA -> fma(in);
                case Insn.DIV -> alu(in, "div", "(IZJJ)J", in.type, in.ftz, 0, 1);
                case Insn.REM -> alu(in, "rem", "(IJJ)J", in.type, 0, 1);
                case Insn.MIN -> alu(in, "min", "(IZJJ)J", in.type, in.ftz, 0, 1);
                case Insn.MAX -> alu(in, "max", "(IZJJ)J", in.type, in.ftz, 0, 1);
                case Insn.AND, Insn.OR, Insn.XOR -> {
                    v(in, 0);
                    v(in, 1);
                    switch (in.op) {
                        case Insn.AND -> c.land();
                        case Insn.OR -> c.lor();
                        default -> c.lxor();
                    }
                    if (Insn.cls(in.type) == Insn.PRED) {
                        c.lconst_1().land();
                    }
                    store(d[0]);
                }
                case Insn.NOT -> {
                    v(in, 0);
                    if (Insn.cls(in.type) == Insn.PRED) {
                        c.lconst_1().land().lconst_1().lxor();
                    } else {
                        c.loadConstant(-1L).lxor();
                    }
                    store(d[0]);
                }
                case Insn.CNOT -> {
                    v(in, 0);
                    norm(in.type);
                    c.lconst_0().lcmp();
                    flag(c::ifeq, TI);
                    c.iload(TI).i2l();
                    store(d[0]);
                }
                case Insn.SHL -> shl(in);
                case Insn.SHR -> shr(in);
                case Insn.ABS -> alu(in, "abs", "(IZJ)J", in.type, in.ftz, 0);
                case Insn.NEG -> alu(in, "neg", "(IZJ)J", in.type, in.ftz, 0);
                case Insn.POPC -> alu(in, "popc", "(IJ)J", in.type, 0);
                case Insn.CLZ -> alu(in, "clz", "(IJ)J", in.type, 0);
                case Insn.BREV -> alu(in, "brev", "(IJ)J", in.type, 0);
                case Insn.RCP, Insn.SQRT, Insn.RSQRT, Insn.EX2, Insn.LG2, Insn.SIN, Insn.COS, Insn.TANH ->
                        alu(in, "fun", "(IIZJ)J", in.op, in.type, in.ftz, 0);
                case Insn.COPYSIGN -> alu(in, "copysign", "(IJJ)J", in.type, 0, 1);
                case Insn.TESTP -> alu(in, "testp", "(IIJ)J", in.mode, in.type, 0);
                case Insn.BFE -> alu(in, "bfe", "(IJJJ)J", in.type, 0, 1, 2);
                case Insn.BFI -> alu(in, "bfi", "(IJJJJ)J", in.type, 0, 1, 2, 3);
                case Insn.PRMT -> alu(in, "prmt", "(JJJ)J", 0, 1, 2);
                case Insn.SHF -> alu(in, "shf", "(ZZJJJ)J", in.mode == 1, in.sat, 0, 1, 2);
                case Insn.MUL24, Insn.MAD24 -> {
                    insnConst(i);
                    v(in, 0);
                    v(in, 1);
                    c.invokestatic(CD_INTERP, "mul24", MethodTypeDesc.ofDescriptor("(" + CD_INSN.descriptorString() + "JJ)J"));
                    if (in.op == Insn.MAD24) {
                        v(in, 2);
                        c.ladd();
                    }
                    store(d[0]);
                }
                case Insn.SAD -> {
                    c.loadConstant(in.type);
                    v(in, 0);
                    v(in, 1);
                    v(in, 2);
                    c.invokestatic(CD_INTERP, "sad", MethodTypeDesc.ofDescriptor("(IJJJ)J"));
                    store(d[0]);
                }
                case Insn.SETP -> setp(in);
                case Insn.SELP -> {
                    Label no = c.newLabel();
                    Label done = c.newLabel();
                    v(in, 2);
                    c.lconst_1().land().l2i().ifeq(no);
                    v(in, 0);
                    c.goto_(done);
                    c.labelBinding(no);
                    v(in, 1);
                    c.labelBinding(done);
                    store(d[0]);
                }
                case Insn.CVT -> cvt(in);
                case Insn.CVTA -> {
                    long win = switch (in.space) {
                        case Insn.SHARED -> PtxLaunch.SHARED_WINDOW;
                        case Insn.LOCAL -> PtxLaunch.LOCAL_WINDOW;
                        default -> 0;
                    };
                    v(in, 0);
                    if (win != 0) {
                        c.loadConstant(win);
                        if (in.mode == 1) {
                            c.lsub();
                        } else {
                            c.ladd();
                        }
                    }
                    store(d[0]);
                }
                case Insn.PACK -> {
                    int w = Insn.bits(in.type) / in.src.length;
                    long mask = w == 64 ? -1L : (1L << w) - 1;
                    c.lconst_0();
                    for (int k = 0; k < in.src.length; k++) {
                        c.lload(local(in.src[k])).loadConstant(mask).land().loadConstant(k * w).lshl().lor();
                    }
                    store(d[0]);
                }
                case Insn.UNPACK -> {
                    int w = Insn.bits(in.type) / d.length;
                    long mask = w == 64 ? -1L : (1L << w) - 1;
                    v(in, 0);
                    c.lstore(TL2);
                    for (int k = 0; k < d.length; k++) {
                        c.lload(TL2).loadConstant(k * w).lushr().loadConstant(mask).land();
                        store(d[k]);
                    }
                }
                case Insn.LD -> load(i, in);
                case Insn.ST -> store(i, in);
                case Insn.ATOM, Insn.RED -> {
                    setAt(i);
                    address(in);
                    c.aload(T);
                    insnConst(i);
                    c.lload(TL);
                    v(in, 0);
                    if (in.src.length > 1) {
                        v(in, 1);
                    } else {
                        c.lconst_0();
                    }
                    c.invokestatic(CD_INTERP, "atomic", MethodTypeDesc.of(CD_long, CD_THR, CD_INSN, CD_long, CD_long, CD_long));
                    if (in.op == Insn.ATOM) {
                        norm(in.type);
                        store(d[0]);
                    } else {
                        c.pop2();
                    }
                }
                case Insn.BRA -> {
                    int tg = in.target;
                    if (tg >= 0 && tg < code.length) {
                        c.goto_(at[tg]);
                    } else {
                        c.loadConstant(tg).istore(PC).goto_(bail);
                    }
                }
                case Insn.BAR, Insn.BARRED -> waitAt(i, PtxLaunch.AT_BAR, -1);
                case Insn.SHFL, Insn.VOTE, Insn.WARPSYNC, Insn.REDUX ->
                        waitAt(i, PtxLaunch.AT_WARP, in.op == Insn.SHFL ? 3 : in.op == Insn.WARPSYNC ? 0 : 1);
                case Insn.ACTIVEMASK -> {
                    c.aload(T).getfield(CD_THR, "block", CD_BLOCK).aload(T);
                    c.invokestatic(CD_INTERP, "activeMask", MethodTypeDesc.of(CD_long, CD_BLOCK, CD_THR));
                    store(d[0]);
                }
                case Insn.TIMER -> {
                    if (in.mode == Insn.GLOBALTIMER) {
                        c.aload(T).dup().getfield(CD_THR, "timer", CD_long).loadConstant(PtxLaunch.GLOBALTIMER_STEP).ladd()
                                .putfield(CD_THR, "timer", CD_long);
                        c.aload(T).getfield(CD_THR, "block", CD_BLOCK).getfield(CD_BLOCK, "l", CD_LAUNCH)
                                .getfield(CD_LAUNCH, "startNanos", CD_long);
                        c.aload(T).getfield(CD_THR, "timer", CD_long).ladd();
                    } else {
                        // The step count the interpreter has at this instruction.
                        c.lload(STEPS);
                        if (after > 0) {
                            c.loadConstant((long) after).lsub();
                        }
                        if (in.mode == Insn.CLOCK) {
                            c.loadConstant(0xffffffffL).land();
                        }
                    }
                    store(d[0]);
                }
                case Insn.NANOSLEEP -> {
                    c.aload(T).dup().getfield(CD_THR, "timer", CD_long);
                    v(in, 0);
                    c.loadConstant(0xffffffffL).land().ladd().putfield(CD_THR, "timer", CD_long);
                }
                case Insn.FENCE, Insn.NOP -> {
                }
                case Insn.TRAP -> {
                    setAt(i);
                    String why = fn.unsupported != null && in.text.indexOf("trap") != 0
                            ? "an instruction the engine does not run" : "trap";
                    c.aload(T).loadConstant(why);
                    c.invokestatic(CD_COMPILER, "trap", MethodTypeDesc.of(CD_FAULT, CD_THR, CD_String));
                    c.athrow();
                }
                case Insn.RET, Insn.EXIT -> c.goto_(exit);
                default -> throw new IllegalStateException("opcode " + in.op);
            }
        }

        /** A wait at a barrier or warp operation: the interpreter's return with state {@code state}. */
        private void waitAt(int i, int state, int maskSrc) {
            Insn in = code[i];
            setAt(i);
            c.aload(T).loadConstant(state).putfield(CD_THR, "state", CD_int);
            if (maskSrc >= 0) {
                c.aload(T);
                v(in, maskSrc);
                c.l2i().putfield(CD_THR, "waitMask", CD_int);
            }
            c.aload(FR).loadConstant(i).putfield(CD_FRAME, "pc", CD_int);
            c.aload(T).lload(STEPS).putfield(CD_THR, "steps", CD_long);
            spill();
            c.return_();
        }

        /** A call of an {@link Alu} function: each argument an int / boolean constant, or a source index (Integer 0..3 in a J slot). */
        private void alu(Insn in, String name, String desc, Object... args) {
            MethodTypeDesc t = MethodTypeDesc.ofDescriptor(desc);
            for (int k = 0; k < args.length; k++) {
                ClassDesc p = t.parameterType(k);
                Object a = args[k];
                if (p.equals(CD_long)) {
                    v(in, (Integer) a);
                } else if (p.equals(CD_boolean)) {
                    c.loadConstant((Boolean) a ? 1 : 0);
                } else {
                    c.loadConstant((Integer) a);
                }
            }
            c.invokestatic(CD_ALU, name, t);
            store(in.dst[0]);
        }

        private void addSub(Insn in) {
            boolean sub = in.op == Insn.SUB;
            if (plainFloat(in, in.type2)) {
                if (in.type == F32) {
                    f32(in, 0);
                    v(in, 1);
                    if (sub) {
                        c.loadConstant(0x80000000L).lxor();
                    }
                    c.l2i().invokestatic(CD_FLOAT, "intBitsToFloat", MethodTypeDesc.of(CD_float, CD_int));
                    c.fadd();
                    bitsF();
                } else {
                    f64(in, 0);
                    v(in, 1);
                    if (sub) {
                        c.loadConstant(0x8000000000000000L).lxor();
                    }
                    c.invokestatic(CD_DOUBLE, "longBitsToDouble", MethodTypeDesc.of(CD_double, CD_long));
                    c.dadd();
                    bitsD();
                }
                store(in.dst[0]);
                return;
            }
            if (integer(in) && !(in.sat && in.type == Insn.type(Insn.S, 32))) {
                v(in, 0);
                v(in, 1);
                if (sub) {
                    c.lsub();
                } else {
                    c.ladd();
                }
                store(in.dst[0]);
                return;
            }
            alu(in, sub ? "sub" : "add", "(IIZZJJ)J", in.type, in.type2, in.ftz, in.sat, 0, 1);
        }

        /** Pushes the integer product {@code mul.half} of sources 0 and 1, or returns false when it does not inline. */
        private boolean product(Insn in) {
            int w = Insn.bits(in.type);
            if (!integer(in) || (w != 32 && w != 64)) {
                return false;
            }
            boolean s = Insn.cls(in.type) == Insn.S;
            v(in, 0);
            norm(in.type);
            v(in, 1);
            norm(in.type);
            if (in.mode == Insn.HI) {
                if (w == 64) {
                    c.invokestatic(CD_MATH, s ? "multiplyHigh" : "unsignedMultiplyHigh",
                            MethodTypeDesc.of(CD_long, CD_long, CD_long));
                } else {
                    c.lmul().loadConstant(32).lshr();
                }
            } else {
                c.lmul();
            }
            return true;
        }

        private void mul(Insn in) {
            if (plainFloat(in, in.type2)) {
                if (in.type == F32) {
                    f32(in, 0);
                    f32(in, 1);
                    c.fmul();
                    bitsF();
                } else {
                    f64(in, 0);
                    f64(in, 1);
                    c.dmul();
                    bitsD();
                }
                store(in.dst[0]);
                return;
            }
            if (product(in)) {
                store(in.dst[0]);
                return;
            }
            alu(in, "mul", "(IIIZZJJ)J", in.type, in.mode, in.type2, in.ftz, in.sat, 0, 1);
        }

        private void mad(Insn in) {
            if (Insn.cls(in.type) == Insn.F) {
                fma(in);
                return;
            }
            if (!(in.sat && in.type == Insn.type(Insn.S, 32) && in.mode == Insn.HI) && product(in)) {
                v(in, 2);
                if (in.mode != Insn.WIDE) {
                    norm(in.type);
                }
                c.ladd();
                store(in.dst[0]);
                return;
            }
            alu(in, "mad", "(IIIZZJJJ)J", in.type, in.mode, in.type2, in.ftz, in.sat, 0, 1, 2);
        }

        private void fma(Insn in) {
            if (plainFloat(in, in.type2)) {
                if (in.type == F32) {
                    f32(in, 0);
                    f32(in, 1);
                    f32(in, 2);
                    c.invokestatic(CD_MATH, "fma", MethodTypeDesc.of(CD_float, CD_float, CD_float, CD_float));
                    bitsF();
                } else {
                    f64(in, 0);
                    f64(in, 1);
                    f64(in, 2);
                    c.invokestatic(CD_MATH, "fma", MethodTypeDesc.of(CD_double, CD_double, CD_double, CD_double));
                    bitsD();
                }
                store(in.dst[0]);
                return;
            }
            alu(in, "fma", "(IIZZJJJ)J", in.type, in.type2, in.ftz, in.sat, 0, 1, 2);
        }

        private void shl(Insn in) {
            int w = Insn.bits(in.type);
            if (in.src[1] < 0) {
                long k = in.imm[1] & 0xffffffffL;
                if (k >= w) {
                    c.lconst_0();
                } else {
                    v(in, 0);
                    c.loadConstant((int) k).lshl();
                }
                store(in.dst[0]);
                return;
            }
            Label zero = c.newLabel();
            Label done = c.newLabel();
            v(in, 1);
            c.loadConstant(0xffffffffL).land().lstore(TL2);
            c.lload(TL2).loadConstant((long) w).lcmp().ifge(zero);
            v(in, 0);
            c.lload(TL2).l2i().lshl().goto_(done);
            c.labelBinding(zero);
            c.lconst_0();
            c.labelBinding(done);
            store(in.dst[0]);
        }

        private void shr(Insn in) {
            int w = Insn.bits(in.type);
            boolean s = Insn.cls(in.type) == Insn.S;
            if (in.src[1] < 0) {
                long k = in.imm[1] & 0xffffffffL;
                if (s) {
                    v(in, 0);
                    norm(in.type);
                    c.loadConstant((int) Math.min(k, 63)).lshr();
                } else if (k >= w) {
                    c.lconst_0();
                } else {
                    v(in, 0);
                    norm(in.type);
                    c.loadConstant((int) k).lushr();
                }
                store(in.dst[0]);
                return;
            }
            alu(in, "shr", "(IJJ)J", in.type, 0, 1);
        }

        private void setp(Insn in) {
            int[] d = in.dst;
            if (!compareInline(in)) {
                c.loadConstant(in.mode).loadConstant(in.type).loadConstant(in.ftz ? 1 : 0);
                v(in, 0);
                v(in, 1);
                c.invokestatic(CD_ALU, "compare", MethodTypeDesc.of(CD_boolean, CD_int, CD_int, CD_boolean, CD_long, CD_long));
                c.istore(TI);
            }
            if (in.boolOp == Insn.BOOL_NONE) {
                c.iload(TI).i2l();
                store(d[0]);
                if (d.length > 1) {
                    c.iload(TI).iconst_1().ixor().i2l();
                    store(d[1]);
                }
                return;
            }
            v(in, 2);
            c.lconst_1().land().l2i();
            if (in.negSrc2) {
                c.iconst_1().ixor();
            }
            c.istore(TI2);
            // Both results before either store, as a destination may be source 2; then the first
            // destination before the second, which wins when they are one register.
            c.iload(TI).iload(TI2);
            combine(in.boolOp);
            if (d.length > 1) {
                c.iload(TI).iconst_1().ixor().iload(TI2);
                combine(in.boolOp);
                c.swap().i2l();
                store(d[0]);
                c.i2l();
                store(d[1]);
            } else {
                c.i2l();
                store(d[0]);
            }
        }

        private void combine(int op) {
            switch (op) {
                case Insn.BOOL_AND -> c.iand();
                case Insn.BOOL_OR -> c.ior();
                default -> c.ixor();
            }
        }

        /** Emits the comparison of setp into local TI (0/1) when it inlines; {@return whether it did} */
        private boolean compareInline(Insn in) {
            int cmp = in.mode;
            if (integer(in) && Insn.cls(in.type) != Insn.PRED) {
                boolean unsignedType = Insn.cls(in.type) != Insn.S;
                boolean unsigned = switch (cmp) {
                    case Insn.EQ, Insn.NE, Insn.LT, Insn.LE, Insn.GT, Insn.GE -> unsignedType;
                    case Insn.LO_, Insn.LS, Insn.HI_, Insn.HS -> true;
                    default -> {
                        yield false;
                    }
                };
                if (cmp < Insn.EQ || cmp > Insn.HS) {
                    return false;
                }
                v(in, 0);
                norm(in.type);
                v(in, 1);
                norm(in.type);
                if (unsigned) {
                    c.invokestatic(CD_LONG, "compareUnsigned", MethodTypeDesc.of(CD_int, CD_long, CD_long));
                } else {
                    c.lcmp();
                }
                flag(switch (cmp) {
                    case Insn.EQ -> c::ifeq;
                    case Insn.NE -> c::ifne;
                    case Insn.LT, Insn.LO_ -> c::iflt;
                    case Insn.LE, Insn.LS -> c::ifle;
                    case Insn.GT, Insn.HI_ -> c::ifgt;
                    default -> c::ifge;
                }, TI);
                return true;
            }
            if ((in.type == F32 || in.type == F64) && !in.ftz && cmp >= Insn.EQ && cmp <= Insn.GE && cmp != Insn.NE) {
                boolean f = in.type == F32;
                if (f) {
                    f32(in, 0);
                    f32(in, 1);
                } else {
                    f64(in, 0);
                    f64(in, 1);
                }
                // A NaN makes every one of these false: the cmpg variant for < and <=, cmpl for the rest.
                boolean g = cmp == Insn.LT || cmp == Insn.LE;
                if (f) {
                    if (g) {
                        c.fcmpg();
                    } else {
                        c.fcmpl();
                    }
                } else if (g) {
                    c.dcmpg();
                } else {
                    c.dcmpl();
                }
                flag(switch (cmp) {
                    case Insn.EQ -> c::ifeq;
                    case Insn.LT -> c::iflt;
                    case Insn.LE -> c::ifle;
                    case Insn.GT -> c::ifgt;
                    default -> c::ifge;
                }, TI);
                return true;
            }
            return false;
        }

        private void cvt(Insn in) {
            boolean dF = Insn.cls(in.type) == Insn.F;
            boolean sF = Insn.cls(in.type2) == Insn.F;
            if (!dF && !sF && !in.sat) {
                v(in, 0);
                norm(in.type2);
                norm(in.type);
                store(in.dst[0]);
                return;
            }
            alu(in, "cvt", "(IIIZZJ)J", in.type, in.type2, in.mode, in.ftz, in.sat, 0);
        }

        /** Leaves the instruction's address in local TL. */
        private void address(Insn in) {
            if (in.areg >= 0) {
                c.lload(local(in.areg));
                if (in.aoff != 0) {
                    c.loadConstant(in.aoff).ladd();
                }
            } else {
                c.loadConstant(in.aoff);
            }
            c.lstore(TL);
        }

        private void addressPlus(long off) {
            c.lload(TL);
            if (off != 0) {
                c.loadConstant(off).ladd();
            }
        }

        /** {@return the state space an access of {@code in} lies in when the decode alone tells it, else -1} */
        private static int fixedSpace(Insn in) {
            if (in.asym >= 0) {
                return in.asym;
            }
            return in.space != Insn.GENERIC ? in.space : -1;
        }

        /** A vector access is aligned to its whole size at its first element only, as in the interpreter. */
        private void load(int i, Insn in) {
            setAt(i);
            int bytes = Insn.bits(in.type) / 8;
            int access = in.vec * bytes;
            int sp = fixedSpace(in);
            address(in);
            for (int k = 0; k < in.dst.length; k++) {
                if (sp == Insn.PARAM) {
                    c.aload(T).aload(FR);
                    addressPlus((long) k * bytes);
                    c.loadConstant(bytes);
                    c.invokestatic(CD_INTERP, "loadParam", MethodTypeDesc.of(CD_long, CD_THR, CD_FRAME, CD_long, CD_int));
                } else if (sp == Insn.GLOBAL) {
                    c.aload(T);
                    addressPlus((long) k * bytes);
                    c.loadConstant(bytes).loadConstant(k == 0 ? access : bytes);
                    c.invokestatic(CD_INTERP, "loadGlobal", MethodTypeDesc.of(CD_long, CD_THR, CD_long, CD_int, CD_int));
                } else {
                    c.aload(T).aload(FR);
                    insnConst(i);
                    addressPlus((long) k * bytes);
                    c.loadConstant(bytes).loadConstant(k == 0 ? access : bytes);
                    c.invokestatic(CD_INTERP, "load", MethodTypeDesc.of(CD_long, CD_THR, CD_FRAME, CD_INSN, CD_long, CD_int, CD_int));
                }
                norm(in.type);
                store(in.dst[k]);
            }
        }

        private void store(int i, Insn in) {
            setAt(i);
            int bytes = Insn.bits(in.type) / 8;
            int access = in.vec * bytes;
            int sp = fixedSpace(in);
            address(in);
            for (int k = 0; k < in.src.length; k++) {
                if (sp == Insn.GLOBAL) {
                    c.aload(T);
                    addressPlus((long) k * bytes);
                    c.loadConstant(bytes).loadConstant(k == 0 ? access : bytes);
                    v(in, k);
                    c.invokestatic(CD_INTERP, "storeGlobal", MethodTypeDesc.of(CD_void, CD_THR, CD_long, CD_int, CD_int, CD_long));
                } else {
                    c.aload(T).aload(FR);
                    insnConst(i);
                    addressPlus((long) k * bytes);
                    c.loadConstant(bytes).loadConstant(k == 0 ? access : bytes);
                    v(in, k);
                    c.invokestatic(CD_INTERP, "store", MethodTypeDesc.of(CD_void, CD_THR, CD_FRAME, CD_INSN, CD_long, CD_int,
                            CD_int, CD_long));
                }
            }
        }
    }
}
