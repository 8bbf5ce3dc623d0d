// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import metrale.gpu.sim.internal.ptx.PtxLexer.Token;

/**
 * Reads PTX tokens ({@link PtxLexer}) into the module's statements, in order: instructions and
 * declarations (each up to its {@code ;}, its text as the source spells it), braces that open
 * or close a scope, labels, and the directives that end at the end of their line, as PTX defines
 * them: the module header ({@code .version}, {@code .target}, {@code .address_size}) and the
 * debugging directives {@code .file} and {@code .loc}, which nvcc writes with no {@code ;} under
 * {@code -lineinfo} and {@code -G}. A brace inside a statement (a vector operand, an initializer)
 * stays in it; a brace after a directive header ({@code .entry f(...)}, {@code .section}) ends the
 * header and opens a scope.
 */
final class PtxParser {

    /** Directives that end at the end of their line. */
    private static final Set<String> LINE_DIRECTIVES = Set.of(".version", ".target", ".address_size", ".file", ".loc");

    private PtxParser() {
    }

    /**
     * {@return the statements of {@code text}}
     *
     * @param text PTX source, comments allowed
     */
    static List<PtxModule.Stmt> statements(String text) {
        List<Token> tk = PtxLexer.tokens(text);
        List<PtxModule.Stmt> out = new ArrayList<>();
        int first = -1;
        int inner = 0;
        boolean assigns = false;
        for (int i = 0; i < tk.size(); i++) {
            Token t = tk.get(i);
            if (first < 0) {
                if (t.is('{')) {
                    out.add(new PtxModule.Stmt(PtxModule.Stmt.OPEN, "{", t.line()));
                    continue;
                }
                if (t.is('}')) {
                    out.add(new PtxModule.Stmt(PtxModule.Stmt.CLOSE, "}", t.line()));
                    continue;
                }
                if (t.is(';')) {
                    continue;
                }
                if (t.kind() == PtxLexer.Kind.WORD && !t.text().startsWith(".") && i + 1 < tk.size() && tk.get(i + 1).is(':')
                        && !(i + 2 < tk.size() && tk.get(i + 2).is(':'))) {
                    out.add(new PtxModule.Stmt(PtxModule.Stmt.LABEL, t.text(), t.line()));
                    i++;
                    continue;
                }
                if (t.kind() == PtxLexer.Kind.WORD && LINE_DIRECTIVES.contains(t.text())) {
                    int last = i;
                    while (last + 1 < tk.size() && tk.get(last + 1).line() == t.line()) {
                        last++;
                    }
                    out.add(lineDirective(tk, i, last, text));
                    i = last;
                    continue;
                }
                first = i;
                inner = 0;
                assigns = false;
            }
            if (t.is('=')) {
                assigns = true;
            }
            if (t.is(';') && inner == 0) {
                out.add(text(tk, first, i - 1, text));
                first = -1;
            } else if (t.is('{')) {
                if (inner == 0 && tk.get(first).text().startsWith(".") && !assigns) {
                    out.add(text(tk, first, i - 1, text));
                    out.add(new PtxModule.Stmt(PtxModule.Stmt.OPEN, "{", t.line()));
                    first = -1;
                } else {
                    inner++;
                }
            } else if (t.is('}')) {
                if (inner == 0) {
                    // A statement a scope closes without its ';' (the data of a .section).
                    out.add(text(tk, first, i - 1, text));
                    out.add(new PtxModule.Stmt(PtxModule.Stmt.CLOSE, "}", t.line()));
                    first = -1;
                } else {
                    inner--;
                }
            }
        }
        if (first >= 0) {
            out.add(text(tk, first, tk.size() - 1, text));
        }
        return out;
    }

    private static PtxModule.Stmt text(List<Token> tk, int from, int to, String src) {
        if (to < from) {
            return new PtxModule.Stmt(PtxModule.Stmt.TEXT, "", tk.get(from).line());
        }
        return new PtxModule.Stmt(PtxModule.Stmt.TEXT, src.substring(tk.get(from).start(), tk.get(to).end()).strip(),
                tk.get(from).line());
    }

    /**
     * A line directive: {@code .loc FILE LINE COLUMN[, ...]} becomes a {@link PtxModule.Stmt#LOC},
     * {@code .file INDEX "NAME"[, ...]} a {@link PtxModule.Stmt#FILE} (its text the name, unquoted), the
     * header directives plain text.
     */
    private static PtxModule.Stmt lineDirective(List<Token> tk, int from, int to, String src) {
        Token d = tk.get(from);
        String all = src.substring(d.start(), tk.get(to).end()).strip();
        if (d.text().equals(".loc") && to >= from + 2 && number(tk.get(from + 1)) && number(tk.get(from + 2))) {
            // nvcc's -lineinfo: ".loc 2 397 9, function_name $L__info_string0, inlined_at 1 85 9" for a
            // header's code inlined at the application's line 85 of file 1.
            int inFile = 0;
            int inLine = 0;
            for (int k = from + 3; k + 2 <= to; k++) {
                if (tk.get(k).text().equals("inlined_at") && number(tk.get(k + 1)) && number(tk.get(k + 2))) {
                    inFile = Integer.parseInt(tk.get(k + 1).text());
                    inLine = Integer.parseInt(tk.get(k + 2).text());
                }
            }
            return new PtxModule.Stmt(PtxModule.Stmt.LOC, all, d.line(), Integer.parseInt(tk.get(from + 1).text()),
                    Integer.parseInt(tk.get(from + 2).text()), inFile, inLine);
        }
        if (d.text().equals(".file") && to >= from + 2 && number(tk.get(from + 1))
                && tk.get(from + 2).kind() == PtxLexer.Kind.STRING) {
            String q = tk.get(from + 2).text();
            String name = q.length() >= 2 ? q.substring(1, q.length() - 1) : q;
            return new PtxModule.Stmt(PtxModule.Stmt.FILE, name, d.line(), Integer.parseInt(tk.get(from + 1).text()), 0);
        }
        return new PtxModule.Stmt(PtxModule.Stmt.TEXT, all, d.line());
    }

    private static boolean number(Token t) {
        return t.kind() == PtxLexer.Kind.WORD && !t.text().isEmpty() && t.text().chars().allMatch(Character::isDigit)
                && t.text().length() < 10;
    }
}
