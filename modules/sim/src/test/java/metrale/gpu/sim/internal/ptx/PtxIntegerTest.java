// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Integer arithmetic of the PTX engine, instruction by instruction, against Java: add, sub, mul
 * (.lo .hi .wide), mad (.lo .hi .wide), div and rem (division by zero included), min, max, abs,
 * neg and the saturating forms, over each integer type's edge values.
 */
class PtxIntegerTest {

    private static final BigInteger TWO64 = BigInteger.ONE.shiftLeft(64);

    private static BigInteger big(IntCases t, long v) {
        BigInteger b = BigInteger.valueOf(v);
        return !t.signed() && t.bits() == 64 && v < 0 ? b.add(TWO64) : b;
    }

    /** {@return the high half of the double-width product, as the type's width} */
    private static long hi(IntCases t, long a, long b) {
        return big(t, a).multiply(big(t, b)).shiftRight(t.bits()).longValue();
    }

    private static void check(long[][] rows, long[][] got, int k, String what, java.util.function.Function<long[], Long> expect) {
        for (int i = 0; i < rows.length; i++) {
            long want = expect.apply(rows[i]);
            assertThat(got[i][k]).as("%s of 0x%x, 0x%x%s", what, rows[i][0], rows[i][1],
                    rows[i].length > 2 ? ", 0x" + Long.toHexString(rows[i][2]) : "").isEqualTo(want);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32", "s64", "u64"})
    void addAndSubWrap(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.pairs(1);
        long[][] got = PtxRig.run(List.of(name, name), List.of(name, name),
                "add." + name + " %d, %a, %b;\nsub." + name + " %q, %a, %b;", rows);
        check(rows, got, 0, "add", r -> t.out(t.v(r[0]) + t.v(r[1])));
        check(rows, got, 1, "sub", r -> t.out(t.v(r[0]) - t.v(r[1])));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32", "s64", "u64"})
    void mulLoAndHi(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.pairs(2);
        long[][] got = PtxRig.run(List.of(name, name), List.of(name, name),
                "mul.lo." + name + " %d, %a, %b;\nmul.hi." + name + " %q, %a, %b;", rows);
        check(rows, got, 0, "mul.lo", r -> t.out(t.v(r[0]) * t.v(r[1])));
        check(rows, got, 1, "mul.hi", r -> t.out(hi(t, t.v(r[0]), t.v(r[1]))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32"})
    void mulWideGivesTheWholeProduct(String name) {
        IntCases t = IntCases.of(name);
        String wide = name.charAt(0) + Integer.toString(2 * t.bits());
        long[][] rows = t.pairs(3);
        long[][] got = PtxRig.run(List.of(name, name), List.of(wide), "mul.wide." + name + " %d, %a, %b;", rows);
        check(rows, got, 0, "mul.wide", r -> PtxRig.w(2 * t.bits(), t.v(r[0]) * t.v(r[1])));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32", "s64", "u64"})
    void madLoAndHi(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.triples(4);
        long[][] got = PtxRig.run(List.of(name, name, name), List.of(name, name),
                "mad.lo." + name + " %d, %a, %b, %c;\nmad.hi." + name + " %q, %a, %b, %c;", rows);
        check(rows, got, 0, "mad.lo", r -> t.out(t.v(r[0]) * t.v(r[1]) + t.v(r[2])));
        check(rows, got, 1, "mad.hi", r -> t.out(hi(t, t.v(r[0]), t.v(r[1])) + t.v(r[2])));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32"})
    void madWideAddsADoubleWidthAddend(String name) {
        IntCases t = IntCases.of(name);
        String wide = name.charAt(0) + Integer.toString(2 * t.bits());
        IntCases w = IntCases.of(wide);
        long[][] rows = t.triples(5);
        long[][] got = PtxRig.run(List.of(name, name, wide), List.of(wide), "mad.wide." + name + " %d, %a, %b, %c;", rows);
        check(rows, got, 0, "mad.wide", r -> w.out(t.v(r[0]) * t.v(r[1]) + w.v(r[2])));
    }

    @org.junit.jupiter.api.Test
    void saturatingForms() {
        IntCases t = IntCases.of("s32");
        long[][] rows = t.triples(6);
        long[][] got = PtxRig.run(List.of("s32", "s32", "s32"), List.of("s32", "s32"),
                "add.sat.s32 %d, %a, %b;\nsub.sat.s32 %q, %a, %b;", rows);
        check(rows, got, 0, "add.sat", r -> t.out(clamp32(t.v(r[0]) + t.v(r[1]))));
        check(rows, got, 1, "sub.sat", r -> t.out(clamp32(t.v(r[0]) - t.v(r[1]))));
        got = PtxRig.run(List.of("s32", "s32", "s32"), List.of("s32"), "mad.hi.sat.s32 %d, %a, %b, %c;", rows);
        check(rows, got, 0, "mad.hi.sat", r -> t.out(clamp32(hi(t, t.v(r[0]), t.v(r[1])) + t.v(r[2]))));
    }

    private static long clamp32(long v) {
        return Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
    }

    /**
     * Division by zero is unspecified in PTX; the engine returns what the GPU's division sequence
     * gives: a quotient of all ones and a remainder equal to the dividend.
     */
    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32", "s64", "u64"})
    void divAndRemIncludingByZero(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.pairs(7);
        long[][] got = PtxRig.run(List.of(name, name), List.of(name, name),
                "div." + name + " %d, %a, %b;\nrem." + name + " %q, %a, %b;", rows);
        check(rows, got, 0, "div", r -> {
            long a = t.v(r[0]);
            long b = t.v(r[1]);
            if (b == 0) {
                return t.out(-1);
            }
            return t.out(t.signed() || t.bits() < 64 ? a / b : Long.divideUnsigned(a, b));
        });
        check(rows, got, 1, "rem", r -> {
            long a = t.v(r[0]);
            long b = t.v(r[1]);
            if (b == 0) {
                return t.out(a);
            }
            return t.out(t.signed() || t.bits() < 64 ? a % b : Long.remainderUnsigned(a, b));
        });
        // The documented choice, spelled out once.
        long[][] byZero = PtxRig.run(List.of(name, name), List.of(name, name),
                "div." + name + " %d, %a, %b;\nrem." + name + " %q, %a, %b;", new long[][] {{12345, 0}});
        assertThat(byZero[0]).containsExactly(t.out(-1), t.out(12345));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "u16", "s32", "u32", "s64", "u64"})
    void minAndMaxCompareByTheTypesSign(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.pairs(8);
        long[][] got = PtxRig.run(List.of(name, name), List.of(name, name),
                "min." + name + " %d, %a, %b;\nmax." + name + " %q, %a, %b;", rows);
        java.util.Comparator<Long> order = t.signed() ? Long::compare : Long::compareUnsigned;
        check(rows, got, 0, "min", r -> t.out(order.compare(t.v(r[0]), t.v(r[1])) <= 0 ? t.v(r[0]) : t.v(r[1])));
        check(rows, got, 1, "max", r -> t.out(order.compare(t.v(r[0]), t.v(r[1])) >= 0 ? t.v(r[0]) : t.v(r[1])));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s16", "s32", "s64"})
    void absAndNegWrapAtTheMinimum(String name) {
        IntCases t = IntCases.of(name);
        long[][] rows = t.triples(9);
        long[][] got = PtxRig.run(List.of(name), List.of(name, name), "abs." + name + " %d, %a;\nneg." + name + " %q, %a;",
                java.util.Arrays.stream(rows).map(r -> new long[] {r[0]}).toArray(long[][]::new));
        for (int i = 0; i < rows.length; i++) {
            long a = t.v(rows[i][0]);
            assertThat(got[i][0]).as("abs of %d", a).isEqualTo(t.out(Math.abs(a)));
            assertThat(got[i][1]).as("neg of %d", a).isEqualTo(t.out(-a));
        }
        long[][] atMin = PtxRig.run(List.of(name), List.of(name, name), "abs." + name + " %d, %a;\nneg." + name + " %q, %a;",
                new long[][] {{t.min()}});
        assertThat(atMin[0]).containsExactly(t.out(t.min()), t.out(t.min()));
    }
}
