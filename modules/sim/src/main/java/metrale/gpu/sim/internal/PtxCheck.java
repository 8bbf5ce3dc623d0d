// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A light check of PTX text, standing in for the JIT: braces must balance, every statement inside
 * a function body must be a directive ({@code .reg ...}) or start with a PTX instruction (after any
 * labels and a {@code @p} guard), and every register an instruction names must be declared by a
 * {@code .reg} earlier in the same function ({@code %r<6>} declares {@code %r0} to {@code %r5}) or
 * be a special register. Each suffix of an instruction must be a PTX modifier or type
 * ({@link PtxSuffixes}), and the text must not end inside a function's header (a file cut off in an
 * {@code .entry}'s parameter list). It does not type-check operands, and a register declared in a
 * nested block counts for the rest of its function.
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

    /** Special registers ({@code %tid.x} is {@code %tid}), and prefixes of numbered ones ({@code %pm0}, {@code %envreg3}). */
    private static final Set<String> SPECIAL = Set.of(
            "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid",
            "%clock", "%clock64", "%clock_hi", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%lanemask_eq",
            "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%dynamic_smem_size", "%total_smem_size",
            "%aggr_smem_size", "%is_explicit_cluster", "%clusterid", "%nclusterid", "%cluster_ctaid",
            "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank", "%current_graph_exec");
    private static final String[] SPECIAL_NUMBERED = {"%pm", "%envreg", "%reserved_smem_offset_"};
    /** A function header: {@code .entry name} or {@code .func name} (after any return parameters). */
    private static final Pattern FUNCTION = Pattern.compile("(\\.entry|\\.func)\\b[^(]*?(?:\\([^)]*\\)\\s*)?([A-Za-z_$%][\\w$%]*)");
    private static final Pattern REG_USE = Pattern.compile("%[A-Za-z_$][\\w$]*");
    private static final Pattern REG_DECL = Pattern.compile("(%[A-Za-z_$][\\w$]*)\\s*(?:<\\s*(\\d+)\\s*>)?");

    /** The registers one function has declared so far: exact names and parameterized ranges. */
    private static final class Registers {
        final Set<String> names = new HashSet<>();
        final Map<String, Integer> ranges = new HashMap<>();

        void declare(String directive) {
            // ".reg .b32 %r<6>;", ".reg .f32 %a, %b;", ".reg .v4 .b32 %v;"
            Matcher m = REG_DECL.matcher(directive);
            while (m.find()) {
                if (m.group(2) != null) {
                    ranges.merge(m.group(1), Integer.parseInt(m.group(2)), Math::max);
                } else {
                    names.add(m.group(1));
                }
            }
        }

        /** {@return the first register {@code statement} uses without a declaration, or {@code null}} */
        String undeclared(String statement) {
            Matcher m = REG_USE.matcher(statement);
            while (m.find()) {
                String r = m.group();
                if (!known(r)) {
                    return r;
                }
            }
            return null;
        }

        private boolean known(String r) {
            if (names.contains(r) || SPECIAL.contains(r)) {
                return true;
            }
            int d = r.length();
            while (d > 1 && Character.isDigit(r.charAt(d - 1))) {
                d--;
            }
            if (d == r.length()) {
                return false;
            }
            String prefix = r.substring(0, d);
            for (String sp : SPECIAL_NUMBERED) {
                if (prefix.equals(sp)) {
                    return true;
                }
            }
            Integer n = ranges.get(prefix);
            try {
                return n != null && Integer.parseInt(r.substring(d)) < n;
            } catch (NumberFormatException e) {
                return false;
            }
        }

        String describe() {
            StringBuilder sb = new StringBuilder();
            new TreeMap<>(ranges).forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append('<').append(v).append('>'));
            for (String n : new TreeSet<>(names)) {
                sb.append(sb.isEmpty() ? "" : ", ").append(n);
            }
            return sb.isEmpty() ? "none" : sb.toString();
        }
    }

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
        Registers regs = new Registers();
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
                    String t = stripLabels(stmt.toString());
                    if (t.startsWith(".reg")) {
                        regs.declare(t.substring(4));
                    } else if (!t.startsWith(".")) {
                        String r = regs.undeclared(t);
                        if (r != null) {
                            return "line " + stmtLine + ": register " + r + " is used but not declared in this function"
                                    + " (declared: " + regs.describe() + ") in '" + t + ";'";
                        }
                    }
                }
                if (c == '{' && depth == 0) {
                    // A new function body: its registers are those its header declares (a .func's .reg parameters).
                    regs = new Registers();
                    if (stmt.indexOf(".reg") >= 0) {
                        regs.declare(stmt.toString());
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
            // The debugging directives nvcc writes under -lineinfo and -G end at the end of their
            // line, with no ';' (PtxParser reads them the same way), after a label too.
            if (c == '.' && lineDirective(text, i) && stripLabels(stmt.toString()).isEmpty()) {
                while (i + 1 < text.length() && text.charAt(i + 1) != '\n') {
                    i++;
                }
                continue;
            }
            if (stmt.toString().isBlank()) {
                stmtLine = line;
            }
            stmt.append(c);
        }
        if (depth != 0) {
            return "unbalanced braces: " + depth + " '{' left open at the end";
        }
        return stmt.toString().isBlank() ? null : cutOff(stmt.toString(), stmtLine);
    }

    /** {@return whether {@code .loc} or {@code .file} starts at {@code i}} */
    private static boolean lineDirective(String text, int i) {
        for (String d : new String[] {".loc", ".file"}) {
            if (text.startsWith(d, i) && i + d.length() < text.length() && Character.isWhitespace(text.charAt(i + d.length()))) {
                return true;
            }
        }
        return false;
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
            // "a::b" is a qualifier (.shared::cta, .L1::no_allocate), never a label's colon.
            boolean qualifier = colon + 1 < t.length() && t.charAt(colon + 1) == ':';
            // nvcc writes "prototype_0 : .callprototype ..." with spaces around the colon.
            if (colon <= 0 || qualifier || !t.substring(0, colon).strip().matches("[A-Za-z_$%][\\w$%.]*")) {
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
        if (!OPCODES.contains(base)) {
            return "'" + base + "' is not a PTX instruction (in '" + t + ";')";
        }
        String suffix = PtxSuffixes.unknown(word);
        return suffix == null ? null : "'." + suffix + "' is not a PTX instruction modifier or type of '" + base
                + "' (in '" + t + ";')";
    }

    /**
     * {@return why the text after the last statement is a function cut off, or {@code null}} A
     * file may end in directives without a {@code ;} ({@code .version}, {@code .target}), but not
     * inside an {@code .entry} or {@code .func} header, which a body or a {@code ;} must close.
     */
    private static String cutOff(String rest, int firstLine) {
        Matcher m = FUNCTION.matcher(rest);
        if (!m.find()) {
            return null;
        }
        // firstLine is the line of the first character that is not white space.
        int line = firstLine;
        int from = 0;
        while (Character.isWhitespace(rest.charAt(from))) {
            from++;
        }
        for (int i = from; i < m.start(); i++) {
            if (rest.charAt(i) == '\n') {
                line++;
            }
        }
        int open = 0;
        for (int i = m.end(); i < rest.length(); i++) {
            char c = rest.charAt(i);
            open += c == '(' ? 1 : c == ')' ? -1 : 0;
        }
        return "line " + line + ": the " + m.group(1) + " '" + m.group(2) + "' is cut off: the text ends "
                + (open > 0 ? "inside its parameter list" : "before its body") + " ('{' ... '}' or ';' never comes)";
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
