// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * setp with every comparison (integer, unsigned-only and unordered float ones, NaN inputs
 * included), its .and/.or/.xor forms with a negated predicate and two destinations, and selp.
 */
class PtxCompareTest {

    private static final String[] INT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge"};
    private static final String[] UNSIGNED_CMPS = {"lo", "ls", "hi", "hs"};
    private static final String[] FLOAT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
        "num", "nan"};

    private static BiPredicate<Long, Long> intCmp(String c, boolean signed) {
        java.util.Comparator<Long> o = signed ? Long::compare : Long::compareUnsigned;
        return switch (c) {
            case "eq" -> (a, b) -> o.compare(a, b) == 0;
            case "ne" -> (a, b) -> o.compare(a, b) != 0;
            case "lt" -> (a, b) -> o.compare(a, b) < 0;
            case "le" -> (a, b) -> o.compare(a, b) <= 0;
            case "gt" -> (a, b) -> o.compare(a, b) > 0;
            case "ge" -> (a, b) -> o.compare(a, b) >= 0;
            case "lo" -> (a, b) -> Long.compareUnsigned(a, b) < 0;
            case "ls" -> (a, b) -> Long.compareUnsigned(a, b) <= 0;
            case "hi" -> (a, b) -> Long.compareUnsigned(a, b) > 0;
            default -> (a, b) -> Long.compareUnsigned(a, b) >= 0;
        };
    }

    /** IEEE comparisons: ordered ones false on a NaN, the {@code u} ones true on a NaN. */
    private static boolean floatCmp(String c, double a, double b) {
        boolean nan = Double.isNaN(a) || Double.isNaN(b);
        return switch (c) {
            case "eq" -> a == b;
            case "ne" -> !nan && a != b;
            case "lt" -> a < b;
            case "le" -> a <= b;
            case "gt" -> a > b;
            case "ge" -> a >= b;
            case "equ" -> nan || a == b;
            case "neu" -> a != b;
            case "ltu" -> !(a >= b);
            case "leu" -> !(a > b);
            case "gtu" -> !(a <= b);
            case "geu" -> !(a < b);
            case "num" -> !nan;
            default -> nan;
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32", "s64", "u64"})
    void integerComparisons(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.pairs(21);
        List<String> cmps = new ArrayList<>(List.of(INT_CMPS));
        if (!t.signed()) {
            cmps.addAll(List.of(UNSIGNED_CMPS));
        }
        for (String c : cmps) {
            long[][] got = PtxRig.run(List.of(name, name), List.of("pred", "pred"),
                    "setp." + c + "." + name + " %d|%q, %a, %b;", rows);
            BiPredicate<Long, Long> ref = intCmp(c, t.signed());
            for (int i = 0; i < rows.length; i++) {
                boolean want = ref.test(t.v(rows[i][0]), t.v(rows[i][1]));
                assertThat(got[i]).as("setp.%s.%s %d, %d", c, name, t.v(rows[i][0]), t.v(rows[i][1]))
                        .containsExactly(want ? 1L : 0L, want ? 0L : 1L);
            }
        }
    }

    static final float[] FLOATS = {Float.NaN, Float.intBitsToFloat(0xffc00001), Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY, 0f, -0f, 1f, -1f, 1.5f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MAX_VALUE, 3e-39f};

    @Test
    void floatComparisonsWithNaNs() {
        List<long[]> f32 = new ArrayList<>();
        List<long[]> f64 = new ArrayList<>();
        for (float a : FLOATS) {
            for (float b : FLOATS) {
                f32.add(new long[] {PtxRig.fb(a), PtxRig.fb(b)});
                f64.add(new long[] {PtxRig.db(a), PtxRig.db(b)});
            }
        }
        long[][] r32 = f32.toArray(new long[0][]);
        long[][] r64 = f64.toArray(new long[0][]);
        for (String c : FLOAT_CMPS) {
            long[][] g32 = PtxRig.run(List.of("f32", "f32"), List.of("pred", "pred"), "setp." + c + ".f32 %d|%q, %a, %b;", r32);
            long[][] g64 = PtxRig.run(List.of("f64", "f64"), List.of("pred"), "setp." + c + ".f64 %d, %a, %b;", r64);
            for (int i = 0; i < r32.length; i++) {
                float a = Float.intBitsToFloat((int) r32[i][0]);
                float b = Float.intBitsToFloat((int) r32[i][1]);
                boolean want = floatCmp(c, a, b);
                assertThat(g32[i]).as("setp.%s.f32 %s, %s", c, a, b).containsExactly(want ? 1L : 0L, want ? 0L : 1L);
                assertThat(g64[i][0]).as("setp.%s.f64 %s, %s", c, a, b).isEqualTo(want ? 1L : 0L);
            }
        }
    }

    @Test
    void ftzComparesSubnormalsAsZero() {
        long[][] rows = {{PtxRig.fb(Float.MIN_VALUE), PtxRig.fb(0f)}, {PtxRig.fb(-3e-39f), PtxRig.fb(0f)}};
        long[][] got = PtxRig.run(List.of("f32", "f32"), List.of("pred", "pred"),
                "setp.eq.ftz.f32 %d, %a, %b;\nsetp.eq.f32 %q, %a, %b;", rows);
        assertThat(got[0]).containsExactly(1L, 0L);
        assertThat(got[1]).containsExactly(1L, 0L);
    }

    @Test
    void boolCombinationsWithANegatedPredicateAndTwoDestinations() {
        List<long[]> rows = new ArrayList<>();
        for (long a : new long[] {-3, 0, 5}) {
            for (long b : new long[] {-3, 0, 5}) {
                for (long c : new long[] {0, 1}) {
                    rows.add(new long[] {a, b, c});
                }
            }
        }
        long[][] in = rows.toArray(new long[0][]);
        for (String op : new String[] {"and", "or", "xor"}) {
            for (boolean negate : new boolean[] {false, true}) {
                String body = "setp.lt." + op + ".s32 %d|%q, %a, %b, " + (negate ? "!" : "") + "%c;";
                long[][] got = PtxRig.run(List.of("s32", "s32", "pred"), List.of("pred", "pred"), body, in);
                for (int i = 0; i < in.length; i++) {
                    boolean t = (int) in[i][0] < (int) in[i][1];
                    boolean c = (in[i][2] != 0) != negate;
                    boolean p = switch (op) {
                        case "and" -> t && c;
                        case "or" -> t || c;
                        default -> t ^ c;
                    };
                    boolean q = switch (op) {
                        case "and" -> !t && c;
                        case "or" -> !t || c;
                        default -> !t ^ c;
                    };
                    assertThat(got[i]).as("%s with %s", body, java.util.Arrays.toString(in[i]))
                            .containsExactly(p ? 1L : 0L, q ? 1L : 0L);
                }
            }
        }
        // One destination: only p is written.
        long[][] one = PtxRig.run(List.of("f32", "f32", "pred"), List.of("pred"), "setp.gtu.or.f32 %d, %a, %b, !%c;",
                new long[][] {{PtxRig.fb(Float.NaN), PtxRig.fb(1f), 1}, {PtxRig.fb(0f), PtxRig.fb(1f), 1},
                    {PtxRig.fb(0f), PtxRig.fb(1f), 0}});
        assertThat(one).isDeepEqualTo(new long[][] {{1}, {0}, {1}});
    }

    @ParameterizedTest
    @ValueSource(strings = {"b16", "s32", "u64", "f32", "f64"})
    void selpPicksByThePredicate(String name) {
        long[][] in = {{0x1234_5678_9abc_def0L, 0x0fed_cba9_8765_4321L, 1}, {0x1234_5678_9abc_def0L, 0x0fed_cba9_8765_4321L, 0},
            {-1, 7, 3}, {-1, 7, 0x1_0000_0000L}};
        long[][] got = PtxRig.run(List.of(name, name, "pred"), List.of(name), "selp." + name + " %d, %a, %b, %c;", in);
        int bits = Integer.parseInt(name.substring(1));
        for (int i = 0; i < in.length; i++) {
            long want = (in[i][2] & 0xffffffffL) != 0 ? in[i][0] : in[i][1];
            assertThat(got[i][0]).as("selp %s", java.util.Arrays.toString(in[i])).isEqualTo(PtxRig.w(bits, want));
        }
    }
}
