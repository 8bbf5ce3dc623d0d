// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decodes one function body into {@link Insn}s. Every modifier of an instruction must be one the
 * engine gives a meaning to (or one that does not change a result on one simulated device, such as
 * a cache hint); anything else marks the function unsupported, naming the instruction and line.
 */
final class Decoder {

    /** Types the engine has no arithmetic or conversions for: an instruction of one names it. */
    private static final Set<String> UNRUN_TYPES = Set.of("bf16", "bf16x2", "f16x2", "tf32", "e4m3", "e5m2", "e4m3x2",
            "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2");

    /** Modifiers that change nothing a single-device simulation can observe. */
    private static final Set<String> IGNORED = Set.of("ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile",
            "relaxed", "acquire", "release", "acq_rel", "sc", "weak", "mmio", "cta", "gpu", "sys", "uni", "aligned",
            "sync", "full", "noftz", "unified");

    /** The name and optional array length ending a {@code .local} or {@code .param} declaration. */
    private static final java.util.regex.Pattern DECLARED = java.util.regex.Pattern.compile(
            "([A-Za-z_$%][\\w$%]*)\\s*(?:\\[\\s*(\\d+)\\s*\\])?\\s*$");
    /** The name of a {@code .shared} declaration, an unsized array or an initializer allowed. */
    private static final java.util.regex.Pattern SHARED_NAME = java.util.regex.Pattern.compile(
            "([A-Za-z_$%][\\w$%]*)\\s*(?:\\[\\s*\\d*\\s*\\])?\\s*(?:=.*)?$");

    private final PtxModule module;
    private final PtxFunction f;
    private final PtxModule.Scope scope = new PtxModule.Scope();
    private final List<Insn> code = new ArrayList<>();
    private final Map<String, Integer> paramSyms = new HashMap<>();
    private int sink = -1;
    /**
     * The registers declared in each open scope, innermost first: a register a nested {@code { }}
     * declares (as inline PTX does) is a register of its own, which hides one of the same name
     * outside until the scope closes. Names need no {@code %}.
     */
    private final java.util.ArrayDeque<Map<String, Integer>> regScopes = new java.util.ArrayDeque<>();
    private int slots;
    /** The {@code .loc} in force: {@code file.cu:line}, or {@code null}. */
    private String source;
    /** The last {@code .loc} not inlined from elsewhere: the application's own line. */
    private String outerSource;

    Decoder(PtxModule module, PtxFunction f) {
        this.module = module;
        this.f = f;
        for (PtxFunction.Param p : f.params) {
            paramSyms.put(p.name(), p.offset());
        }
        for (PtxFunction.Param p : f.rets) {
            paramSyms.put(p.name(), p.offset());
        }
        scope.params.push(paramSyms);
    }

    private static final class Unsupported extends RuntimeException {
        Unsupported(String m) {
            super(m, null, false, false);
        }
    }

    void decodeBody(List<PtxModule.Stmt> body) {
        // Labels first, so forward branches resolve.
        int pc = 0;
        for (PtxModule.Stmt s : body) {
            if (s.kind() == PtxModule.Stmt.LABEL) {
                scope.labels.put(s.text(), pc);
            } else if (s.kind() == PtxModule.Stmt.TEXT && isInstruction(s.text())) {
                pc++;
            }
        }
        regScopes.push(new HashMap<>());
        for (PtxModule.Stmt s : body) {
            try {
                switch (s.kind()) {
                    case PtxModule.Stmt.OPEN -> {
                        scope.params.push(new HashMap<>());
                        regScopes.push(new HashMap<>());
                    }
                    case PtxModule.Stmt.CLOSE -> {
                        if (scope.params.size() > 1) {
                            scope.params.pop();
                        }
                        if (regScopes.size() > 1) {
                            regScopes.pop();
                        }
                    }
                    case PtxModule.Stmt.LABEL, PtxModule.Stmt.FILE -> {
                    }
                    case PtxModule.Stmt.LOC -> source = sourceOf(s);
                    default -> statement(s);
                }
            } catch (Unsupported u) {
                if (f.unsupported == null) {
                    f.unsupported = u.getMessage() + " (" + f + ", PTX line " + s.line()
                            + (source == null ? "" : " (" + source + ")") + ": `" + s.text() + "`)";
                }
                if (s.kind() == PtxModule.Stmt.TEXT && isInstruction(s.text())) {
                    Insn trap = new Insn(Insn.TRAP, s.line(), s.text());
                    trap.source = source;
                    code.add(trap);
                }
            }
        }
        f.code = code.toArray(new Insn[0]);
        f.regCount = Special.COUNT + slots + 1;
    }

    /**
     * {@return {@code file.cu:line} of a {@code .loc}: for code inlined from a header, the
     * application's line first, the last {@code .loc} not inlined from anywhere
     * ({@code frontend.cu:85 via sm_30_intrinsics.hpp:397}: nvcc names only the innermost call
     * of a chain of inlined functions in each {@code .loc}); {@code null} when the module names no
     * such file}
     */
    private String sourceOf(PtxModule.Stmt loc) {
        String own = module.source(loc.a(), loc.b());
        if (loc.c() == 0) {
            outerSource = own;
            return own;
        }
        String at = outerSource != null ? outerSource : module.source(loc.c(), loc.d());
        if (at == null) {
            return own;
        }
        return own == null ? at : at + " via " + own;
    }

    /** {@return the slot of the register {@code name} in the innermost scope declaring it, or {@code null}} */
    private Integer declared(String name) {
        for (Map<String, Integer> m : regScopes) {
            Integer r = m.get(name);
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    /** {@return whether an operand names a register: {@code %}-prefixed, the sink {@code _}, or declared by {@code .reg}} */
    private boolean isRegister(String o) {
        return o.startsWith("%") || o.equals("_") || declared(o) != null;
    }

    private static boolean isInstruction(String t) {
        return !t.isEmpty() && t.charAt(0) != '.';
    }

    private void statement(PtxModule.Stmt s) {
        String t = s.text();
        if (t.isEmpty()) {
            return;
        }
        if (t.startsWith(".reg")) {
            Map<String, Integer> here = regScopes.peek();
            for (String r : PtxModule.registerNames(t)) {
                if (!here.containsKey(r)) {
                    here.put(r, Special.COUNT + slots++);
                }
            }
            return;
        }
        if (t.startsWith(".local")) {
            var n = DECLARED.matcher(t);
            if (!n.find()) {
                throw new Unsupported("a .local declaration the engine cannot read");
            }
            int align = Math.max(1, PtxModule.alignOf(t));
            int off = (f.localBytes + align - 1) / align * align;
            scope.locals.put(n.group(1), off);
            f.localBytes = off + PtxModule.elemBytes(t) * (n.group(2) == null ? 1 : Integer.parseInt(n.group(2)));
            return;
        }
        if (t.startsWith(".param")) {
            // A call sequence's argument or return slot, in this frame's parameter area.
            var n = DECLARED.matcher(t);
            if (!n.find()) {
                throw new Unsupported("a .param declaration the engine cannot read");
            }
            int align = Math.max(1, PtxModule.alignOf(t));
            int off = (f.paramBytes + align - 1) / align * align;
            scope.params.peek().put(n.group(1), off);
            f.paramBytes = off + PtxModule.elemBytes(t) * (n.group(2) == null ? 1 : Integer.parseInt(n.group(2)));
            return;
        }
        if (t.startsWith(".") && t.contains(".shared")) {
            if (module.sharedSymbol(f, sharedName(t)) == null) {
                throw new Unsupported("a .shared declaration the engine cannot read");
            }
            return;
        }
        if (t.startsWith(".")) {
            // .loc, .pragma, .maxnreg and the like: no effect on results.
            return;
        }
        Insn in = decode(t, s.line());
        in.source = source;
        code.add(in);
    }

    private static String sharedName(String t) {
        var n = SHARED_NAME
                .matcher(t.replaceAll("=.*$", "").strip());
        return n.find() ? n.group(1) : "";
    }

    // ---- one instruction ---------------------------------------------------------------------------

    /** The modifiers of an opcode, consumed as the op's decoder recognizes them. */
    private static final class Mods {
        final String base;
        final List<String> rest = new ArrayList<>();

        Mods(String opcode) {
            String[] p = opcode.split("\\.");
            base = p[0];
            for (int i = 1; i < p.length; i++) {
                if (!p[i].isEmpty()) {
                    rest.add(p[i]);
                }
            }
        }

        boolean take(String m) {
            return rest.remove(m);
        }

        /**
         * {@return the types among the modifiers, in order, removed}
         *
         * @throws Unsupported naming the type, for a type the engine has no arithmetic for
         */
        List<Integer> types() {
            for (String r : rest) {
                if (UNRUN_TYPES.contains(r)) {
                    throw new Unsupported("." + r + " (" + (r.startsWith("bf16") ? "bfloat16" : r.startsWith("f16")
                            ? "packed half precision" : r.equals("tf32") ? "TensorFloat-32" : "FP8")
                            + ") is not run by the engine: register a Java twin of this kernel (SimKernels.register)"
                            + " so the simulator runs it, and test its arithmetic on the GPU");
                }
            }
            List<Integer> out = new ArrayList<>();
            for (var it = rest.iterator(); it.hasNext(); ) {
                int t = typeOf(it.next());
                if (t != 0) {
                    out.add(t);
                    it.remove();
                }
            }
            return out;
        }

        int rounding() {
            for (String r : List.of("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")) {
                if (take(r)) {
                    return switch (r) {
                        case "rn" -> Insn.RN;
                        case "rz" -> Insn.RZ;
                        case "rm" -> Insn.RM;
                        case "rp" -> Insn.RP;
                        case "rni" -> Insn.RNI;
                        case "rzi" -> Insn.RZI;
                        case "rmi" -> Insn.RMI;
                        default -> Insn.RPI;
                    };
                }
            }
            return -1;
        }

        int space() {
            for (String s : List.of("global", "shared", "local", "param", "const")) {
                if (take(s)) {
                    return switch (s) {
                        case "global" -> Insn.GLOBAL;
                        case "shared" -> Insn.SHARED;
                        case "local" -> Insn.LOCAL;
                        case "param" -> Insn.PARAM;
                        default -> Insn.CONST;
                    };
                }
            }
            // shared::cta is shared; shared::cluster is not ours.
            if (take("shared::cta")) {
                return Insn.SHARED;
            }
            return Insn.GENERIC;
        }

        /** Drops what changes nothing, and fails on anything left. */
        void done(String text) {
            rest.removeIf(m -> IGNORED.contains(m) || m.startsWith("L1::") || m.startsWith("L2::"));
            if (!rest.isEmpty()) {
                throw new Unsupported("the engine does not implement ." + String.join(".", rest) + " of " + base);
            }
        }
    }

    static int typeOf(String m) {
        return switch (m) {
            case "b8" -> Insn.type(Insn.B, 8);
            case "b16" -> Insn.type(Insn.B, 16);
            case "b32" -> Insn.type(Insn.B, 32);
            case "b64" -> Insn.type(Insn.B, 64);
            case "u8" -> Insn.type(Insn.U, 8);
            case "u16" -> Insn.type(Insn.U, 16);
            case "u32" -> Insn.type(Insn.U, 32);
            case "u64" -> Insn.type(Insn.U, 64);
            case "s8" -> Insn.type(Insn.S, 8);
            case "s16" -> Insn.type(Insn.S, 16);
            case "s32" -> Insn.type(Insn.S, 32);
            case "s64" -> Insn.type(Insn.S, 64);
            case "f16" -> Insn.type(Insn.F, 16);
            case "f32" -> Insn.type(Insn.F, 32);
            case "f64" -> Insn.type(Insn.F, 64);
            case "pred" -> Insn.type(Insn.PRED, 1);
            default -> 0;
        };
    }

    private static final int U32 = Insn.type(Insn.U, 32);
    private static final int PRED = Insn.type(Insn.PRED, 1);

    private Insn decode(String text, int line) {
        int guard = -1;
        boolean neg = false;
        String t = text;
        if (t.startsWith("@")) {
            int sp = firstSpace(t);
            String g = t.substring(1, sp);
            neg = g.startsWith("!");
            guard = reg(neg ? g.substring(1) : g);
            t = t.substring(sp).strip();
        }
        int sp = firstSpace(t);
        String opcode = sp < 0 ? t : t.substring(0, sp);
        List<String> ops = sp < 0 ? List.of() : operands(t.substring(sp).strip());
        Mods m = new Mods(opcode);
        Insn in = build(m, ops, line, text);
        m.done(text);
        in.guard = guard;
        in.guardNeg = neg;
        return in;
    }

    private Insn build(Mods m, List<String> ops, int line, String text) {
        return switch (m.base) {
            case "mov" -> mov(m, ops, line, text);
            case "ld", "ldu" -> ldst(Insn.LD, m, ops, line, text);
            case "st" -> ldst(Insn.ST, m, ops, line, text);
            case "cvta" -> cvta(m, ops, line, text);
            case "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "and", "or", "xor", "copysign",
                 "mul24", "mad24", "sad" -> arith(m, ops, line, text);
            case "abs", "neg", "not", "cnot", "popc", "clz", "brev", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin",
                 "cos", "tanh" -> unary(m, ops, line, text);
            case "shl", "shr" -> shift(m, ops, line, text);
            case "setp" -> setp(m, ops, line, text);
            case "selp" -> selp(m, ops, line, text);
            case "cvt" -> cvt(m, ops, line, text);
            case "bra" -> bra(m, ops, line, text);
            case "bar", "barrier" -> bar(m, ops, line, text);
            case "membar", "fence" -> {
                m.rest.clear();
                yield new Insn(Insn.FENCE, line, text);
            }
            case "atom", "red" -> atom(m, ops, line, text);
            case "shfl" -> shfl(m, ops, line, text);
            case "vote" -> vote(m, ops, line, text);
            case "activemask" -> {
                m.types();
                Insn in = new Insn(Insn.ACTIVEMASK, line, text);
                in.dst = new int[] {dst(ops.get(0))};
                yield in;
            }
            case "trap" -> new Insn(Insn.TRAP, line, text);
            case "brkpt", "pmevent", "prefetch", "prefetchu" -> {
                m.rest.clear();
                yield new Insn(Insn.NOP, line, text);
            }
            case "nanosleep" -> {
                m.types();
                Insn in = new Insn(Insn.NANOSLEEP, line, text);
                src(in, ops.subList(0, 1), U32);
                yield in;
            }
            case "ret" -> new Insn(Insn.RET, line, text);
            case "exit" -> new Insn(Insn.EXIT, line, text);
            case "call" -> call(m, ops, line, text);
            case "bfe" -> {
                Insn in = new Insn(Insn.BFE, line, text);
                in.type = one(m);
                in.dst = new int[] {dst(ops.get(0))};
                src(in, ops.subList(1, 4), in.type, U32, U32);
                yield in;
            }
            case "bfi" -> {
                Insn in = new Insn(Insn.BFI, line, text);
                in.type = one(m);
                in.dst = new int[] {dst(ops.get(0))};
                src(in, ops.subList(1, 5), in.type, in.type, U32, U32);
                yield in;
            }
            case "prmt" -> {
                Insn in = new Insn(Insn.PRMT, line, text);
                in.type = one(m);
                if (!m.rest.isEmpty()) {
                    throw new Unsupported("the engine implements prmt's default mode only, not ." + m.rest.get(0));
                }
                in.dst = new int[] {dst(ops.get(0))};
                src(in, ops.subList(1, 4), U32, U32, U32);
                yield in;
            }
            case "shf" -> {
                Insn in = new Insn(Insn.SHF, line, text);
                in.mode = m.take("l") ? 0 : m.take("r") ? 1 : err("shf needs .l or .r");
                in.sat = m.take("clamp");
                m.take("wrap");
                in.type = one(m);
                in.dst = new int[] {dst(ops.get(0))};
                src(in, ops.subList(1, 4), U32, U32, U32);
                yield in;
            }
            case "testp" -> {
                Insn in = new Insn(Insn.TESTP, line, text);
                in.mode = m.take("finite") ? 1 : m.take("infinite") ? 2 : m.take("number") ? 3
                        : m.take("notanumber") ? 4 : m.take("normal") ? 5 : m.take("subnormal") ? 6
                        : err("testp needs a test");
                in.type = one(m);
                in.dst = new int[] {dst(ops.get(0))};
                src(in, ops.subList(1, 2), in.type);
                yield in;
            }
            case "redux" -> {
                Insn in = new Insn(Insn.REDUX, line, text);
                in.mode = atomOp(m);
                in.type = one(m);
                in.dst = new int[] {dst(ops.get(0))};
                src(in, ops.subList(1, 3), in.type, U32);
                yield in;
            }
            default -> throw new Unsupported("the engine does not implement the instruction '" + m.base + "'");
        };
    }

    private static int err(String why) {
        throw new Unsupported(why);
    }

    private static int one(Mods m) {
        List<Integer> ts = m.types();
        if (ts.size() != 1) {
            throw new Unsupported("expected one type, found " + ts.size());
        }
        return ts.get(0);
    }

    private Insn mov(Mods m, List<String> ops, int line, String text) {
        int type = one(m);
        String d = ops.get(0);
        String s = ops.get(1);
        if (d.startsWith("{")) {
            Insn in = new Insn(Insn.UNPACK, line, text);
            in.type = type;
            in.dst = vector(d);
            src(in, List.of(s), type);
            return in;
        }
        if (s.startsWith("{")) {
            Insn in = new Insn(Insn.PACK, line, text);
            in.type = type;
            in.dst = new int[] {dst(d)};
            int[] parts = vector(s);
            in.src = parts;
            in.imm = new long[parts.length];
            return in;
        }
        Integer timer = Special.TIMERS.get(s);
        if (timer != null) {
            Insn in = new Insn(Insn.TIMER, line, text);
            in.type = type;
            in.mode = timer;
            in.dst = new int[] {dst(d)};
            return in;
        }
        Insn in = new Insn(Insn.MOV, line, text);
        in.type = type;
        in.dst = new int[] {dst(d)};
        src(in, List.of(s), type);
        return in;
    }

    private Insn ldst(int op, Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(op, line, text);
        in.space = m.space();
        for (int v : new int[] {2, 4, 8}) {
            if (m.take("v" + v)) {
                in.vec = v;
            }
        }
        in.type = one(m);
        if (Insn.cls(in.type) == Insn.F && Insn.bits(in.type) == 16) {
            in.type = Insn.type(Insn.B, 16);
        }
        String value = op == Insn.LD ? ops.get(0) : ops.get(1);
        address(in, op == Insn.LD ? ops.get(1) : ops.get(0));
        if (op == Insn.LD) {
            in.dst = in.vec > 1 ? vector(value) : new int[] {dst(value)};
        } else if (in.vec > 1) {
            List<String> parts = operands(value.substring(1, value.length() - 1));
            src(in, parts, repeat(in.type, parts.size()));
        } else {
            src(in, List.of(value), in.type);
        }
        return in;
    }

    private static int[] repeat(int t, int n) {
        int[] r = new int[n];
        java.util.Arrays.fill(r, t);
        return r;
    }

    private Insn cvta(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.CVTA, line, text);
        in.mode = m.take("to") ? 1 : 0;
        in.space = m.space();
        in.type = one(m);
        in.dst = new int[] {dst(ops.get(0))};
        src(in, ops.subList(1, 2), in.type);
        return in;
    }

    private Insn arith(Mods m, List<String> ops, int line, String text) {
        int op = switch (m.base) {
            case "add" -> Insn.ADD;
            case "sub" -> Insn.SUB;
            case "mul" -> Insn.MUL;
            case "mad" -> Insn.MAD;
            case "fma" -> Insn.FMA;
            case "div" -> Insn.DIV;
            case "rem" -> Insn.REM;
            case "min" -> Insn.MIN;
            case "max" -> Insn.MAX;
            case "and" -> Insn.AND;
            case "or" -> Insn.OR;
            case "xor" -> Insn.XOR;
            case "mul24" -> Insn.MUL24;
            case "mad24" -> Insn.MAD24;
            case "sad" -> Insn.SAD;
            default -> Insn.COPYSIGN;
        };
        Insn in = new Insn(op, line, text);
        in.mode = m.take("lo") ? Insn.LO : m.take("hi") ? Insn.HI : m.take("wide") ? Insn.WIDE : Insn.LO;
        int r = m.rounding();
        in.type2 = r < 0 ? Insn.RN : r;
        in.ftz = m.take("ftz");
        in.sat = m.take("sat");
        in.approx = m.take("approx");
        if (m.take("cc")) {
            throw new Unsupported("the engine does not implement carry (.cc)");
        }
        m.take("relu");
        m.take("NaN");
        in.type = one(m);
        if (in.type2 != Insn.RN && Insn.cls(in.type) == Insn.F && (op == Insn.DIV || Insn.bits(in.type) == 64)) {
            throw new Unsupported("the engine rounds " + m.base + "." + Insn.bits(in.type)
                    + " to nearest only, not with a directed rounding mode");
        }
        if (Insn.cls(in.type) == Insn.F && Insn.bits(in.type) == 16) {
            throw new Unsupported("the engine does not implement .f16 arithmetic");
        }
        int n = switch (op) {
            case Insn.MAD, Insn.FMA, Insn.MAD24, Insn.SAD -> 3;
            default -> 2;
        };
        in.dst = new int[] {dst(ops.get(0))};
        int[] types = repeat(in.type, n);
        if (op == Insn.MAD && in.mode == Insn.WIDE) {
            types[2] = Insn.type(Insn.cls(in.type), Insn.bits(in.type) * 2);
        }
        if (ops.size() != n + 1) {
            throw new Unsupported(m.base + " takes " + n + " source operands");
        }
        src(in, ops.subList(1, n + 1), types);
        return in;
    }

    private Insn unary(Mods m, List<String> ops, int line, String text) {
        int op = switch (m.base) {
            case "abs" -> Insn.ABS;
            case "neg" -> Insn.NEG;
            case "not" -> Insn.NOT;
            case "cnot" -> Insn.CNOT;
            case "popc" -> Insn.POPC;
            case "clz" -> Insn.CLZ;
            case "brev" -> Insn.BREV;
            case "rcp" -> Insn.RCP;
            case "sqrt" -> Insn.SQRT;
            case "rsqrt" -> Insn.RSQRT;
            case "ex2" -> Insn.EX2;
            case "lg2" -> Insn.LG2;
            case "sin" -> Insn.SIN;
            case "cos" -> Insn.COS;
            default -> Insn.TANH;
        };
        Insn in = new Insn(op, line, text);
        int r = m.rounding();
        in.type2 = r < 0 ? Insn.RN : r;
        in.ftz = m.take("ftz");
        in.approx = m.take("approx");
        in.type = one(m);
        if (in.type2 != Insn.RN) {
            throw new Unsupported("the engine rounds " + m.base + " to nearest only");
        }
        in.dst = new int[] {dst(ops.get(0))};
        src(in, ops.subList(1, 2), in.type);
        return in;
    }

    private Insn shift(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(m.base.equals("shl") ? Insn.SHL : Insn.SHR, line, text);
        in.type = one(m);
        in.dst = new int[] {dst(ops.get(0))};
        src(in, ops.subList(1, 3), in.type, U32);
        return in;
    }

    private Insn setp(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.SETP, line, text);
        in.mode = cmp(m);
        in.boolOp = m.take("and") ? Insn.BOOL_AND : m.take("or") ? Insn.BOOL_OR : m.take("xor") ? Insn.BOOL_XOR
                : Insn.BOOL_NONE;
        in.ftz = m.take("ftz");
        in.type = one(m);
        in.dst = dsts(ops.get(0));
        if (in.boolOp != Insn.BOOL_NONE) {
            String c = ops.get(3);
            in.negSrc2 = c.startsWith("!");
            src(in, List.of(ops.get(1), ops.get(2), in.negSrc2 ? c.substring(1) : c), in.type, in.type, PRED);
        } else {
            src(in, ops.subList(1, 3), in.type, in.type);
        }
        return in;
    }

    private static int cmp(Mods m) {
        String[] names = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu",
                "geu", "num", "nan"};
        for (int i = 0; i < names.length; i++) {
            if (m.take(names[i])) {
                return i + 1;
            }
        }
        throw new Unsupported("setp needs a comparison");
    }

    private Insn selp(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.SELP, line, text);
        in.type = one(m);
        in.dst = new int[] {dst(ops.get(0))};
        src(in, ops.subList(1, 4), in.type, in.type, PRED);
        return in;
    }

    private Insn cvt(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.CVT, line, text);
        int r = m.rounding();
        in.mode = r;
        in.ftz = m.take("ftz");
        in.sat = m.take("sat");
        m.take("relu");
        List<Integer> ts = m.types();
        if (ts.size() != 2) {
            throw new Unsupported("cvt needs a destination and a source type");
        }
        in.type = ts.get(0);
        in.type2 = ts.get(1);
        boolean dF = Insn.cls(in.type) == Insn.F;
        boolean sF = Insn.cls(in.type2) == Insn.F;
        if (dF && sF && Insn.bits(in.type) == Insn.bits(in.type2) && r >= 0 && r < Insn.RNI) {
            throw new Unsupported("cvt between equal float types takes an integer rounding (.rni/.rzi/.rmi/.rpi)");
        }
        if (!dF && sF && r >= 0 && r < Insn.RNI) {
            throw new Unsupported("cvt to an integer takes an integer rounding (.rni/.rzi/.rmi/.rpi)");
        }
        if (dF && !sF && r >= Insn.RNI) {
            throw new Unsupported("cvt from an integer to a float takes a float rounding (.rn/.rz/.rm/.rp)");
        }
        in.dst = new int[] {dst(ops.get(0))};
        src(in, ops.subList(1, 2), in.type2);
        return in;
    }

    private Insn bra(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.BRA, line, text);
        m.take("uni");
        String label = ops.get(0);
        Integer pc = scope.labels.get(label);
        if (pc == null) {
            throw new Unsupported("a branch to an unknown label '" + label + "'");
        }
        in.target = pc;
        in.label = label;
        return in;
    }

    private Insn bar(Mods m, List<String> ops, int line, String text) {
        if (m.take("warp")) {
            m.take("sync");
            Insn in = new Insn(Insn.WARPSYNC, line, text);
            src(in, ops.subList(0, 1), U32);
            return in;
        }
        if (m.take("red")) {
            Insn in = new Insn(Insn.BARRED, line, text);
            in.mode = m.take("popc") ? Insn.RED_POPC : m.take("and") ? Insn.VOTE_ALL : m.take("or") ? Insn.VOTE_ANY
                    : err("bar.red needs .popc, .and or .or");
            m.types();
            in.dst = new int[] {dst(ops.get(0))};
            String c = ops.get(ops.size() - 1);
            in.negSrc2 = c.startsWith("!");
            src(in, List.of(ops.get(1), in.negSrc2 ? c.substring(1) : c), U32, PRED);
            return in;
        }
        if (m.take("arrive")) {
            throw new Unsupported("the engine does not implement bar.arrive");
        }
        m.take("sync");
        m.take("aligned");
        Insn in = new Insn(Insn.BAR, line, text);
        if (ops.size() > 1) {
            throw new Unsupported("the engine implements bar.sync over the whole block only, without a thread count");
        }
        if (!ops.isEmpty()) {
            src(in, ops.subList(0, 1), U32);
        }
        return in;
    }

    private static int atomOp(Mods m) {
        String[] names = {"add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"};
        for (int i = 0; i < names.length; i++) {
            if (m.take(names[i])) {
                return i + 1;
            }
        }
        throw new Unsupported(m.base + " needs an operation");
    }

    private Insn atom(Mods m, List<String> ops, int line, String text) {
        boolean red = m.base.equals("red");
        Insn in = new Insn(red ? Insn.RED : Insn.ATOM, line, text);
        in.space = m.space();
        in.mode = atomOp(m);
        in.type = one(m);
        if (Insn.cls(in.type) == Insn.F && in.mode != Insn.A_ADD && in.mode != Insn.A_EXCH
                && in.mode != Insn.A_MIN && in.mode != Insn.A_MAX) {
            throw new Unsupported("atomic " + in.mode + " on a float type");
        }
        if (Insn.bits(in.type) == 16 || Insn.bits(in.type) == 8) {
            throw new Unsupported("the engine implements 32- and 64-bit atomics only");
        }
        int first = red ? 0 : 1;
        if (!red) {
            in.dst = new int[] {dst(ops.get(0))};
        }
        address(in, ops.get(first));
        int n = in.mode == Insn.A_CAS ? 2 : 1;
        src(in, ops.subList(first + 1, first + 1 + n), repeat(in.type, n));
        return in;
    }

    private Insn shfl(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.SHFL, line, text);
        if (!m.take("sync")) {
            throw new Unsupported("shfl without .sync (removed from sm_70 on)");
        }
        in.mode = m.take("up") ? Insn.SHFL_UP : m.take("down") ? Insn.SHFL_DOWN : m.take("bfly") ? Insn.SHFL_BFLY
                : m.take("idx") ? Insn.SHFL_IDX : err("shfl needs up, down, bfly or idx");
        in.type = one(m);
        in.dst = dsts(ops.get(0));
        src(in, ops.subList(1, 5), in.type, U32, U32, U32);
        return in;
    }

    private Insn vote(Mods m, List<String> ops, int line, String text) {
        Insn in = new Insn(Insn.VOTE, line, text);
        if (!m.take("sync")) {
            throw new Unsupported("vote without .sync (removed from sm_70 on)");
        }
        in.mode = m.take("all") ? Insn.VOTE_ALL : m.take("any") ? Insn.VOTE_ANY : m.take("uni") ? Insn.VOTE_UNI
                : m.take("ballot") ? Insn.VOTE_BALLOT : err("vote needs all, any, uni or ballot");
        in.type = one(m);
        in.dst = new int[] {dst(ops.get(0))};
        String a = ops.get(1);
        in.negSrc2 = a.startsWith("!");
        src(in, List.of(in.negSrc2 ? a.substring(1) : a, ops.get(2)), PRED, U32);
        return in;
    }

    private Insn call(Mods m, List<String> ops, int line, String text) {
        m.take("uni");
        Insn in = new Insn(Insn.CALL, line, text);
        int i = 0;
        List<String> rets = List.of();
        if (ops.get(0).startsWith("(")) {
            rets = inner(ops.get(0));
            i = 1;
        }
        String callee = ops.get(i);
        List<String> args = i + 1 < ops.size() ? inner(ops.get(i + 1)) : List.of();
        if (i + 2 < ops.size()) {
            throw new Unsupported("an indirect call through a prototype");
        }
        PtxFunction target = module.functions.get(callee);
        if (target == null) {
            if (callee.equals("__assertfail") || callee.equals("vprintf")) {
                in.target = callee.equals("__assertfail") ? -2 : -3;
            } else {
                throw new Unsupported("a call to '" + callee + "', which the module does not define");
            }
        } else {
            in.target = module.byIndex.indexOf(target);
            if (target.params.size() != args.size() || target.rets.size() != rets.size()) {
                throw new Unsupported("a call to " + callee + " with " + args.size() + " arguments and "
                        + rets.size() + " return values; it declares " + target.params.size() + " and "
                        + target.rets.size());
            }
        }
        in.callArgs = paramOffsets(args);
        in.callRets = paramOffsets(rets);
        return in;
    }

    private static List<String> inner(String paren) {
        String s = paren.strip();
        if (!s.startsWith("(") || !s.endsWith(")")) {
            throw new Unsupported("a call operand list the engine cannot read: " + paren);
        }
        String body = s.substring(1, s.length() - 1).strip();
        return body.isEmpty() ? List.of() : operands(body);
    }

    private int[] paramOffsets(List<String> names) {
        int[] o = new int[names.size()];
        for (int k = 0; k < o.length; k++) {
            Integer off = param(names.get(k));
            if (off == null) {
                throw new Unsupported("a call argument that is not a .param variable: " + names.get(k));
            }
            o[k] = off;
        }
        return o;
    }

    private Integer param(String name) {
        for (Map<String, Integer> s : scope.params) {
            Integer off = s.get(name);
            if (off != null) {
                return off;
            }
        }
        return null;
    }

    // ---- operands ----------------------------------------------------------------------------------

    private void address(Insn in, String a) {
        String s = a.strip();
        if (!s.startsWith("[") || !s.endsWith("]")) {
            throw new Unsupported("an address operand the engine cannot read: " + a);
        }
        s = s.substring(1, s.length() - 1).replace(" ", "");
        String base = s;
        long off = 0;
        int plus = s.indexOf('+', 1);
        if (plus > 0) {
            base = s.substring(0, plus);
            off = parseInt(s.substring(plus + 1));
        }
        if (isRegister(base)) {
            in.areg = reg(base);
            in.aoff = off;
            return;
        }
        if (Character.isDigit(base.charAt(0)) || base.startsWith("-")) {
            in.aoff = parseInt(base) + off;
            return;
        }
        Integer p = param(base);
        if (p != null) {
            in.asym = Insn.PARAM;
            in.aoff = p + off;
            if (in.space == Insn.GENERIC) {
                throw new Unsupported("a generic access to the parameter '" + base + "'");
            }
            return;
        }
        Integer l = scope.locals.get(base);
        if (l != null) {
            in.asym = Insn.LOCAL;
            in.aoff = l + off;
            return;
        }
        Long sh = module.sharedSymbol(f, base);
        if (sh != null) {
            in.asym = Insn.SHARED;
            in.aoff = (sh == PtxModule.DYNAMIC ? module.dynamicSharedOffset() : sh) + off;
            return;
        }
        throw unknownSymbol(base);
    }

    private Unsupported unknownSymbol(String name) {
        if (module.unplaced.containsKey(name)) {
            return new Unsupported("the module variable '" + name + "' (.global/.const, line "
                    + module.unplaced.get(name) + "): the engine does not place module variables (__device__ and "
                    + "__constant__ variables, and the strings of printf and assert: build with -DNDEBUG to leave "
                    + "asserts out, or register a Java twin of this kernel)");
        }
        return new Unsupported("an unknown symbol '" + name + "'");
    }

    private void src(Insn in, List<String> ops, int... types) {
        in.src = new int[ops.size()];
        in.imm = new long[ops.size()];
        for (int k = 0; k < ops.size(); k++) {
            String o = ops.get(k).strip();
            if (isRegister(o)) {
                in.src[k] = reg(o);
            } else if (o.equals("WARP_SZ")) {
                in.src[k] = -1;
                in.imm[k] = 32;
            } else if (isNumber(o)) {
                in.src[k] = -1;
                in.imm[k] = literal(o, types[Math.min(k, types.length - 1)]);
            } else {
                in.src[k] = -1;
                in.imm[k] = symbolAddress(o);
            }
        }
    }

    /** {@return the address of a symbol used as a value: a state-space address ({@code mov.u64 %rd, smem})} */
    private long symbolAddress(String o) {
        String name = o;
        long off = 0;
        int plus = o.indexOf('+');
        if (plus > 0) {
            name = o.substring(0, plus).strip();
            off = parseInt(o.substring(plus + 1).strip());
        }
        Long sh = module.sharedSymbol(f, name);
        if (sh != null) {
            return (sh == PtxModule.DYNAMIC ? module.dynamicSharedOffset() : sh) + off;
        }
        Integer l = scope.locals.get(name);
        if (l != null) {
            return l + off;
        }
        Integer p = param(name);
        if (p != null) {
            throw new Unsupported("the address of the parameter '" + name + "' taken as a value");
        }
        throw unknownSymbol(name);
    }

    private int reg(String name) {
        if (name.equals("_")) {
            if (sink < 0) {
                sink = Special.COUNT + slots++;
            }
            return sink;
        }
        Integer s = Special.SLOTS.get(name);
        if (s != null) {
            return s;
        }
        Integer r = declared(name);
        if (r == null) {
            if (Special.TIMERS.containsKey(name)) {
                throw new Unsupported("the timer " + name + " read other than by mov");
            }
            throw new Unsupported("an undeclared or unsupported register '" + name + "'");
        }
        return r;
    }

    private int dst(String name) {
        String n = name.strip();
        if (Special.SLOTS.containsKey(n)) {
            throw new Unsupported("a write to the special register " + n);
        }
        return reg(n);
    }

    /** {@return the destination {@code d}, or both of a predicate pair {@code p|q}} */
    private int[] dsts(String d) {
        if (d.contains("|")) {
            String[] pq = d.split("\\|");
            return new int[] {dst(pq[0].strip()), dst(pq[1].strip())};
        }
        return new int[] {dst(d)};
    }

    private int[] vector(String v) {
        String s = v.strip();
        if (!s.startsWith("{") || !s.endsWith("}")) {
            throw new Unsupported("a vector operand the engine cannot read: " + v);
        }
        List<String> parts = operands(s.substring(1, s.length() - 1));
        int[] r = new int[parts.size()];
        for (int k = 0; k < r.length; k++) {
            r[k] = reg(parts.get(k).strip());
        }
        return r;
    }

    private static boolean isNumber(String o) {
        char c = o.charAt(0);
        return Character.isDigit(c) || c == '-' || c == '+' || c == '.';
    }

    static long parseInt(String s) {
        String t = s.strip();
        boolean neg = false;
        if (t.startsWith("-")) {
            neg = true;
            t = t.substring(1);
        } else if (t.startsWith("+")) {
            t = t.substring(1);
        }
        if (t.endsWith("U") || t.endsWith("u")) {
            t = t.substring(0, t.length() - 1);
        }
        long v;
        if (t.startsWith("0x") || t.startsWith("0X")) {
            v = Long.parseUnsignedLong(t.substring(2), 16);
        } else if (t.startsWith("0b") || t.startsWith("0B")) {
            v = Long.parseUnsignedLong(t.substring(2), 2);
        } else if (t.length() > 1 && t.startsWith("0")) {
            v = Long.parseUnsignedLong(t.substring(1), 8);
        } else {
            v = Long.parseUnsignedLong(t);
        }
        return neg ? -v : v;
    }

    /** {@return the bits of a literal as an operand of {@code type}} */
    static long literal(String o, int type) {
        String t = o.strip();
        boolean neg = t.startsWith("-");
        String body = neg ? t.substring(1) : t;
        if (body.startsWith("0f") || body.startsWith("0F")) {
            float v = Float.intBitsToFloat((int) Long.parseLong(body.substring(2), 16));
            v = neg ? -v : v;
            return Insn.bits(type) == 64 && Insn.cls(type) == Insn.F ? Double.doubleToRawLongBits(v)
                    : Float.floatToRawIntBits(v) & 0xffffffffL;
        }
        if (body.startsWith("0d") || body.startsWith("0D")) {
            double v = Double.longBitsToDouble(Long.parseUnsignedLong(body.substring(2), 16));
            v = neg ? -v : v;
            return Insn.bits(type) == 32 && Insn.cls(type) == Insn.F ? Float.floatToRawIntBits((float) v) & 0xffffffffL
                    : Double.doubleToRawLongBits(v);
        }
        boolean isFloat = Insn.cls(type) == Insn.F;
        if (body.contains(".") || (isFloat && (body.contains("e") || body.contains("E")) && !body.startsWith("0x"))) {
            double v = Double.parseDouble(t);
            return Insn.bits(type) == 32 ? Float.floatToRawIntBits((float) v) & 0xffffffffL : Double.doubleToRawLongBits(v);
        }
        long v = parseInt(t);
        if (isFloat) {
            return Insn.bits(type) == 32 ? Float.floatToRawIntBits((float) v) & 0xffffffffL : Double.doubleToRawLongBits(v);
        }
        return v;
    }

    /** {@return the comma-separated operands of {@code s}, commas inside brackets, braces or parentheses kept} */
    static List<String> operands(String s) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '[' || c == '{' || c == '(') {
                depth++;
            } else if (c == ']' || c == '}' || c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i).strip());
                start = i + 1;
            }
        }
        String last = s.substring(start).strip();
        if (!last.isEmpty()) {
            out.add(last);
        }
        return out;
    }

    private static int firstSpace(String t) {
        for (int i = 0; i < t.length(); i++) {
            if (Character.isWhitespace(t.charAt(i))) {
                return i;
            }
        }
        return -1;
    }
}
