// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PTX module parsed for the simulator's engine: every {@code .entry} and {@code .func}, decoded
 * into instructions ({@link Decoder}), and the module's shared-memory symbols. A function the
 * engine cannot run keeps the first reason in {@link PtxFunction#unsupported()}; parsing never
 * fails for that, since a twin may run the kernel instead.
 *
 * <p><b>Shared memory.</b> Each kernel's blocks hold the static {@code .shared} variables of the
 * module scope (and of {@code .func} bodies) first, then those its own body declares: another
 * kernel's arrays are not in its blocks, so a read past its own array does not land in them. The
 * dynamic {@code .extern .shared} arrays all start after the largest kernel's static memory, at
 * {@link #dynamicSharedOffset()}, as the GPU places dynamic shared memory after the static (one
 * offset for the module, since a {@code .func} that uses them is decoded once for every kernel).
 */
public final class PtxModule {

    private static final Pattern HEADER = Pattern.compile(
            "\\.(entry|func)\\s*(\\((?:[^()]*)\\))?\\s*([A-Za-z_$%][\\w$%]*)\\s*(\\((?:[^()]*)\\))?");
    private static final Pattern TYPE = Pattern.compile("\\.([usbf])(8|16|32|64)\\b|\\.(pred)\\b");
    private static final Pattern ALIGN = Pattern.compile("\\.align\\s+(\\d+)");
    private static final Pattern NAME = Pattern.compile("([A-Za-z_$%][\\w$%]*)\\s*(?:\\[\\s*(\\d*)\\s*\\])?\\s*(?:=.*)?$");
    private static final Pattern REG_DECL = Pattern.compile("([%A-Za-z_$][\\w$]*)\\s*(?:<\\s*(\\d+)\\s*>)?");
    private static final Pattern HEADER_DIRECTIVES = Pattern.compile("^(?:\\.(?:version|target|address_size)\\b[^\\n]*\\n\\s*)+");

    final Map<String, PtxFunction> functions = new LinkedHashMap<>();
    final List<PtxFunction> byIndex = new ArrayList<>();
    /** Declared-only functions ({@code .extern .func vprintf(...)}), by name. */
    final Set<String> externs = new java.util.HashSet<>();
    /** Shared symbols: offset in the block's shared memory; dynamic ones map to {@link #DYNAMIC}. */
    final Map<String, Long> shared = new HashMap<>();
    /** Module-scope {@code .global} / {@code .const} variables, which the engine does not place. */
    final Map<String, Integer> unplaced = new HashMap<>();
    private int staticShared;
    private int dynamicAlign = 16;

    static final long DYNAMIC = -1;

    private PtxModule() {
    }

    /** {@return the functions of the module by name} */
    public Map<String, PtxFunction> functions() {
        return java.util.Collections.unmodifiableMap(functions);
    }

    /** {@return the named function, or {@code null}} */
    public PtxFunction function(String name) {
        return functions.get(name);
    }

    /** {@return the most bytes of static shared memory a block of a kernel of this module has} */
    public int staticSharedBytes() {
        int most = staticShared;
        for (PtxFunction f : byIndex) {
            most = Math.max(most, f.staticShared);
        }
        return most;
    }

    /** {@return where dynamic shared memory starts in a block's shared memory} */
    public int dynamicSharedOffset() {
        return (staticSharedBytes() + dynamicAlign - 1) / dynamicAlign * dynamicAlign;
    }

    /** {@return the static shared bytes of a block of {@code f}: the module's and its own} */
    int staticSharedBytes(PtxFunction f) {
        return Math.max(staticShared, f.staticShared);
    }

    /**
     * One statement of the module text: an instruction or directive, a brace, a label, or a
     * debugging directive ({@code .loc}: {@code a} the file index, {@code b} the source line, and for
     * code inlined from another function {@code c} and {@code d} the file and line it was inlined
     * at, else 0; {@code .file}: {@code a} the index, {@code text} the file name).
     */
    record Stmt(int kind, String text, int line, int a, int b, int c, int d) {
        static final int TEXT = 0, OPEN = 1, CLOSE = 2, LABEL = 3, LOC = 4, FILE = 5;

        Stmt(int kind, String text, int line) {
            this(kind, text, line, 0, 0, 0, 0);
        }

        Stmt(int kind, String text, int line, int a, int b) {
            this(kind, text, line, a, b, 0, 0);
        }
    }

    /** The source files {@code .file} directives name, by index: the CUDA file a {@code .loc} points into. */
    final Map<Integer, String> files = new HashMap<>();

    /**
     * {@return {@code name.cu:line} for a {@code .loc} of file {@code file}, or {@code null} when the
     * module names no such file} The file's last path element, as Java names a source file.
     */
    String source(int file, int line) {
        String name = files.get(file);
        if (name == null || line <= 0) {
            return null;
        }
        int slash = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
        return name.substring(slash + 1) + ":" + line;
    }

    /**
     * Parses a module.
     *
     * @param text the PTX without comments (line breaks kept, so lines are the file's)
     * @return the module; functions the engine cannot run say why
     */
    public static PtxModule parse(String text) {
        PtxModule m = new PtxModule();
        List<Stmt> st = PtxParser.statements(text);
        // Pass 1: module-scope symbols and function names, so bodies may call functions defined later.
        List<int[]> bodies = new ArrayList<>();
        Map<PtxFunction, List<String>> ownDecls = new LinkedHashMap<>();
        for (int i = 0; i < st.size(); i++) {
            Stmt s = st.get(i);
            if (s.kind == Stmt.OPEN) {
                i = skip(st, i);
                continue;
            }
            if (s.kind == Stmt.FILE) {
                m.files.put(s.a, s.text);
                continue;
            }
            if (s.kind != Stmt.TEXT) {
                continue;
            }
            // The header directives end without a ';', so they open the module's first statement.
            String t = HEADER_DIRECTIVES.matcher(s.text).replaceFirst("");
            int line = s.line + (int) s.text.substring(0, s.text.length() - t.length()).chars().filter(c -> c == '\n').count();
            boolean hasBody = i + 1 < st.size() && st.get(i + 1).kind == Stmt.OPEN;
            Matcher h = HEADER.matcher(t);
            if ((t.contains(".entry") || t.contains(".func")) && h.find()) {
                String name = h.group(3);
                if (!hasBody) {
                    m.externs.add(name);
                    continue;
                }
                PtxFunction f = new PtxFunction(name, h.group(1).equals("entry"), s.line);
                m.functions.put(name, f);
                m.byIndex.add(f);
                layoutParams(f, h.group(2), f.rets);
                layoutParams(f, h.group(4), f.params);
                int end = skip(st, i + 1);
                // nvcc declares a kernel's static __shared__ arrays inside its body: the kernel's own,
                // laid out once the module's are known; a .func's go with the module's.
                List<String> own = new ArrayList<>();
                for (int j = i + 2; j < end; j++) {
                    Stmt b = st.get(j);
                    if (b.kind == Stmt.TEXT && b.text.startsWith(".") && b.text.contains(".shared")) {
                        if (f.entry && !b.text.contains(".extern")) {
                            own.add(b.text);
                        } else {
                            m.declareShared(b.text);
                        }
                    }
                }
                ownDecls.put(f, own);
                bodies.add(new int[] {m.byIndex.size() - 1, i + 2, end});
                i = end;
            } else if (t.startsWith(".section") && hasBody) {
                i = skip(st, i + 1);
            } else if (t.contains(".shared")) {
                m.declareShared(t);
            } else if (t.matches("^(\\.extern\\s+|\\.visible\\s+|\\.weak\\s+)*\\.(global|const)\\b.*")) {
                Matcher n = NAME.matcher(t.replaceAll("=.*$", "").strip());
                if (n.find()) {
                    m.unplaced.put(n.group(1), line);
                }
            }
        }
        for (var e : ownDecls.entrySet()) {
            m.layOutOwn(e.getKey(), e.getValue());
        }
        // Pass 2: bodies, with every symbol known.
        for (int[] b : bodies) {
            PtxFunction f = m.byIndex.get(b[0]);
            new Decoder(m, f).decodeBody(st.subList(b[1], b[2]));
        }
        return m;
    }

    /** {@return the index of the {@link Stmt#CLOSE} that matches the {@link Stmt#OPEN} at {@code open}} */
    private static int skip(List<Stmt> st, int open) {
        int depth = 0;
        for (int i = open; i < st.size(); i++) {
            int k = st.get(i).kind;
            if (k == Stmt.OPEN) {
                depth++;
            } else if (k == Stmt.CLOSE && --depth == 0) {
                return i;
            }
        }
        return st.size();
    }

    private void declareShared(String t) {
        Matcher n = NAME.matcher(t.replaceAll("=.*$", "").strip());
        if (!n.find()) {
            return;
        }
        int align = alignOf(t);
        if (t.contains(".extern") || "".equals(n.group(2))) {
            dynamicAlign = Math.max(dynamicAlign, align);
            shared.put(n.group(1), DYNAMIC);
            return;
        }
        int elems = n.group(2) == null ? 1 : Integer.parseInt(n.group(2));
        int off = (staticShared + align - 1) / align * align;
        shared.put(n.group(1), (long) off);
        staticShared = off + elems * elemBytes(t);
    }

    /** Lays out an entry's own static shared arrays after the module's. */
    private void layOutOwn(PtxFunction f, List<String> decls) {
        int end = staticShared;
        for (String t : decls) {
            Matcher n = NAME.matcher(t.replaceAll("=.*$", "").strip());
            if (!n.find()) {
                continue;
            }
            int align = alignOf(t);
            int elems = n.group(2) == null || n.group(2).isEmpty() ? 1 : Integer.parseInt(n.group(2));
            int off = (end + align - 1) / align * align;
            f.ownShared.put(n.group(1), (long) off);
            end = off + elems * elemBytes(t);
        }
        f.staticShared = end;
    }

    /** {@return the offset of the shared symbol {@code name} as {@code f} sees it, or {@code null}} */
    Long sharedSymbol(PtxFunction f, String name) {
        Long own = f.ownShared.get(name);
        return own != null ? own : shared.get(name);
    }

    static int elemBytes(String decl) {
        Matcher t = TYPE.matcher(decl);
        if (!t.find()) {
            return 1;
        }
        return t.group(3) != null ? 1 : Integer.parseInt(t.group(2)) / 8;
    }

    static int alignOf(String decl) {
        Matcher a = ALIGN.matcher(decl);
        return a.find() ? Integer.parseInt(a.group(1)) : elemBytes(decl);
    }

    /** Lays out a parenthesized parameter list into the function's parameter area. */
    private static void layoutParams(PtxFunction f, String list, List<PtxFunction.Param> into) {
        if (list == null) {
            return;
        }
        String body = list.substring(1, list.length() - 1).strip();
        if (body.isEmpty()) {
            return;
        }
        for (String decl : body.split(",")) {
            decl = decl.strip();
            Matcher n = NAME.matcher(decl);
            if (!n.find()) {
                f.unsupported = "a parameter the engine cannot read: '" + decl + "' (line " + f.line + ")";
                continue;
            }
            int elems = n.group(2) == null || n.group(2).isEmpty() ? 1 : Integer.parseInt(n.group(2));
            int size = elemBytes(decl) * elems;
            int align = Math.max(1, alignOf(decl));
            int off = (f.paramBytes + align - 1) / align * align;
            into.add(new PtxFunction.Param(n.group(1), off, size, align));
            f.paramBytes = off + size;
        }
    }

    /** The registers and scopes of one function body while it is decoded. */
    static final class Scope {
        final Deque<Map<String, Integer>> params = new ArrayDeque<>();
        final Map<String, Integer> locals = new HashMap<>();
        final Map<String, Integer> labels = new HashMap<>();
    }

    /** {@return the register names a {@code .reg} declaration declares} */
    static List<String> registerNames(String decl) {
        List<String> names = new ArrayList<>();
        String rest = decl.replaceFirst("^\\.reg\\s+(\\.v\\d\\s+)?\\.\\w+\\s*", "");
        Matcher r = REG_DECL.matcher(rest);
        while (r.find()) {
            if (r.group(2) != null) {
                int n = Integer.parseInt(r.group(2));
                for (int k = 0; k < n; k++) {
                    names.add(r.group(1) + k);
                }
            } else {
                names.add(r.group(1));
            }
        }
        return names;
    }
}
