// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.ArrayList;
import java.util.List;

/**
 * PTX text as tokens, each with its source span and line: words (identifiers, directives,
 * opcodes with their modifiers, registers, labels and numbers, hex floats such as
 * {@code 0f3F800000} included), strings, and single punctuation characters. Comments
 * ({@code //} to the end of the line, {@code /* ... *}{@code /}) are skipped; line breaks inside a
 * block comment still count, so a token's line is the file's.
 */
final class PtxLexer {

    /** What a token is. */
    enum Kind {
        /** A run of letters, digits and {@code _ $ % .}: {@code .reg}, {@code %r1}, {@code ld.global.u32}, {@code 0x10}. */
        WORD,
        /** A double-quoted string, quotes included. */
        STRING,
        /** One punctuation character: {@code ; , { } [ ] ( ) < > : = + - ! @ |} and the like. */
        PUNCT
    }

    /**
     * One token.
     *
     * @param kind  what it is
     * @param text  its text
     * @param start its first character's index in the source
     * @param end   the index after its last character
     * @param line  its line, from 1
     */
    record Token(Kind kind, String text, int start, int end, int line) {
        boolean is(char c) {
            return kind == Kind.PUNCT && text.charAt(0) == c;
        }
    }

    private PtxLexer() {
    }

    /** {@return the tokens of {@code s}, in order} */
    static List<Token> tokens(String s) {
        List<Token> out = new ArrayList<>();
        int line = 1;
        int n = s.length();
        int i = 0;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\n') {
                line++;
                i++;
            } else if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
                while (i < n && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                for (int k = i; k < end; k++) {
                    if (s.charAt(k) == '\n') {
                        line++;
                    }
                }
                i = end;
            } else if (c == '"') {
                int start = i;
                int startLine = line;
                i++;
                while (i < n && s.charAt(i) != '"') {
                    if (s.charAt(i) == '\\' && i + 1 < n) {
                        i++;
                    }
                    if (s.charAt(i) == '\n') {
                        line++;
                    }
                    i++;
                }
                i = Math.min(n, i + 1);
                out.add(new Token(Kind.STRING, s.substring(start, i), start, i, startLine));
            } else if (word(c)) {
                int start = i;
                while (i < n && word(s.charAt(i))) {
                    i++;
                }
                out.add(new Token(Kind.WORD, s.substring(start, i), start, i, line));
            } else {
                out.add(new Token(Kind.PUNCT, String.valueOf(c), i, i + 1, line));
                i++;
            }
        }
        return out;
    }

    private static boolean word(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$' || c == '%' || c == '.';
    }
}
