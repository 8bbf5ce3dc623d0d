package metrale.gpu.sim.internal;

import java.util.Set;

/**
 * A light syntax check of PTX text, standing in for the JIT: braces must balance, and every
 * statement inside a function body must be a directive ({@code .reg ...}) or start with a PTX
 * instruction (after any labels and a {@code @p} guard). It does not type-check operands.
 */
final class PtxCheck {

    /** PTX instruction names up to their first {@code .}, as of PTX ISA 8.x. */
    private static final Set<String> OPCODES = Set.of(
            "abs", "activemask", "add", "addc", "alloca", "and", "applypriority", "atom", "bar", "barrier", "bfe",
            "bfi", "bfind", "bmsk", "bra", "brev", "brkpt", "brx", "call", "clusterlaunchcontrol", "clz", "cnot",
            "copysign", "cos", "cp", "createpolicy", "cvt", "cvta", "discard", "div", "dp2a", "dp4a", "elect", "ex2",
            "exit", "fence", "fma", "fns", "getctarank", "griddepcontrol", "isspacep", "istypeof", "ld", "ldmatrix",
            "ldu", "lg2", "lop3", "mad", "mad24", "madc", "mapa", "match", "max", "mbarrier", "membar", "min", "mma",
            "mov", "movmatrix", "mul", "mul24", "multimem", "nanosleep", "neg", "not", "or", "pmevent", "popc",
            "prefetch", "prefetchu", "prmt", "rcp", "red", "redux", "rem", "ret", "rsqrt", "sad", "selp", "set",
            "setmaxnreg", "setp", "shf", "shfl", "shl", "shr", "sin", "slct", "sqrt", "st", "stackrestore",
            "stacksave", "stmatrix", "sub", "subc", "suld", "suq", "sured", "sust", "szext", "tanh", "tcgen05",
            "tensormap", "testp", "tex", "tld4", "trap", "txq", "vabsdiff", "vabsdiff2", "vabsdiff4", "vadd",
            "vadd2", "vadd4", "vavrg2", "vavrg4", "vmad", "vmax", "vmax2", "vmax4", "vmin", "vmin2", "vmin4", "vote",
            "vset", "vset2", "vset4", "vshl", "vshr", "vsub", "vsub2", "vsub4", "wgmma", "wmma", "xor");

    private PtxCheck() {
    }

    /** {@return what is wrong with {@code ptx}, or {@code null} when it passes} */
    static String problem(String ptx) {
        String text = stripComments(ptx);
        int depth = 0;
        int line = 1;
        int stmtLine = 1;
        int operandBraces = 0;
        StringBuilder stmt = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n') {
                line++;
            }
            // A brace inside an instruction is a vector operand ({%f1, %f2}), not a scope.
            if (c == '{' && (operandBraces > 0 || (depth > 0 && isInstruction(stripLabels(stmt.toString()))))) {
                operandBraces++;
                stmt.append(c);
                continue;
            }
            if (c == '}' && operandBraces > 0) {
                operandBraces--;
                stmt.append(c);
                continue;
            }
            if (c == '{' || c == '}' || c == ';') {
                if (c == ';' && depth > 0) {
                    String bad = badStatement(stmt.toString());
                    if (bad != null) {
                        return "line " + stmtLine + ": " + bad;
                    }
                }
                stmt.setLength(0);
                if (c == '{') {
                    depth++;
                } else if (c == '}' && --depth < 0) {
                    return "line " + line + ": '}' without a matching '{'";
                }
                continue;
            }
            if (stmt.toString().isBlank()) {
                stmtLine = line;
            }
            stmt.append(c);
        }
        return depth != 0 ? "unbalanced braces: " + depth + " '{' left open at the end" : null;
    }

    /** {@return whether a statement so far is an instruction: not empty and not a directive} */
    private static boolean isInstruction(String t) {
        return !t.isEmpty() && !t.startsWith(".");
    }

    /** {@return {@code s} without leading labels ({@code name:}), stripped} */
    private static String stripLabels(String s) {
        String t = s.strip();
        while (true) {
            int colon = t.indexOf(':');
            if (colon <= 0 || !t.substring(0, colon).matches("[A-Za-z_$%][\\w$%.]*")) {
                return t;
            }
            t = t.substring(colon + 1).strip();
        }
    }

    private static String badStatement(String s) {
        String t = stripLabels(s);
        if (t.startsWith("@")) {
            int sp = firstSpace(t);
            t = sp < 0 ? "" : t.substring(sp).strip();
        }
        if (t.isEmpty() || t.startsWith(".")) {
            return null;
        }
        int sp = firstSpace(t);
        String word = sp < 0 ? t : t.substring(0, sp);
        int dot = word.indexOf('.');
        String base = dot < 0 ? word : word.substring(0, dot);
        return OPCODES.contains(base) ? null : "'" + base + "' is not a PTX instruction (in '" + t + ";')";
    }

    private static int firstSpace(String t) {
        for (int i = 0; i < t.length(); i++) {
            if (Character.isWhitespace(t.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    /** {@return {@code s} without {@code //} and block comments, keeping its line breaks} */
    static String stripComments(String s) {
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        while (i < s.length()) {
            if (s.startsWith("//", i)) {
                while (i < s.length() && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (s.startsWith("/*", i)) {
                int end = s.indexOf("*/", i + 2);
                int stop = end < 0 ? s.length() : end + 2;
                for (int j = i; j < stop; j++) {
                    if (s.charAt(j) == '\n') {
                        out.append('\n');
                    }
                }
                i = stop;
            } else {
                out.append(s.charAt(i++));
            }
        }
        return out.toString();
    }
}
