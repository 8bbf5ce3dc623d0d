// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Float arithmetic of the PTX engine: {@code .rn} add, sub, mul, fma, div, rcp and sqrt bit-exact
 * against Java's IEEE arithmetic, the canonical {@code .f32} NaN, {@code .ftz}, {@code .sat}, and
 * min/max's NaN and signed-zero rules. Directed rounding is {@link PtxFloatRoundingProperties}.
 */
class PtxFloatTest {

    private static final int CANONICAL_NAN = 0x7fffffff;

    /** {@return the bits an .f32 result has on the GPU: Java's, but every NaN the canonical one} */
    private static long gpu(float f) {
        return Float.isNaN(f) ? CANONICAL_NAN : Float.floatToRawIntBits(f) & 0xffffffffL;
    }

    static long[][] floatRows(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<long[]> rows = new ArrayList<>();
        for (float a : PtxCompareTest.FLOATS) {
            for (float b : PtxCompareTest.FLOATS) {
                rows.add(new long[] {PtxRig.fb(a), PtxRig.fb(b), PtxRig.fb(PtxCompareTest.FLOATS[r.nextInt(13)])});
            }
        }
        for (int i = 0; i < n; i++) {
            rows.add(new long[] {r.nextInt() & 0xffffffffL, r.nextInt() & 0xffffffffL, r.nextInt() & 0xffffffffL});
            float x = (float) r.nextDouble(-10, 10);
            rows.add(new long[] {PtxRig.fb(x), PtxRig.fb((float) r.nextDouble(-10, 10)), PtxRig.fb(-x)});
        }
        return rows.toArray(new long[0][]);
    }

    private static float f(long w) {
        return Float.intBitsToFloat((int) w);
    }

    private static double d(long w) {
        return Double.longBitsToDouble(w);
    }

    @Test
    void f32RoundToNearestIsBitExact() {
        long[][] rows = floatRows(400, 31);
        List<String> three = List.of("f32", "f32", "f32");
        long[][] addSub = PtxRig.run(three, List.of("f32", "f32"), "add.rn.f32 %d, %a, %b;\nsub.rn.f32 %q, %a, %b;", rows);
        long[][] mulFma = PtxRig.run(three, List.of("f32", "f32"), "mul.rn.f32 %d, %a, %b;\nfma.rn.f32 %q, %a, %b, %c;", rows);
        long[][] div = PtxRig.run(three, List.of("f32", "f32"), "div.rn.f32 %d, %a, %b;\nrcp.rn.f32 %q, %a;", rows);
        long[][] sqrt = PtxRig.run(three, List.of("f32", "f32"), "sqrt.rn.f32 %d, %a;\nadd.f32 %q, %a, %b;", rows);
        for (int i = 0; i < rows.length; i++) {
            float a = f(rows[i][0]);
            float b = f(rows[i][1]);
            float c = f(rows[i][2]);
            String as = a + ", " + b + ", " + c;
            assertThat(addSub[i]).as("add/sub %s", as).containsExactly(gpu(a + b), gpu(a - b));
            assertThat(mulFma[i]).as("mul/fma %s", as).containsExactly(gpu(a * b), gpu(Math.fma(a, b, c)));
            assertThat(div[i]).as("div/rcp %s", as).containsExactly(gpu(a / b), gpu(1f / a));
            assertThat(sqrt[i]).as("sqrt/add %s", as).containsExactly(gpu((float) Math.sqrt(a)), gpu(a + b));
        }
    }

    @Test
    void f64RoundToNearestIsBitExact() {
        SplittableRandom r = new SplittableRandom(32);
        long[][] rows = floatRows(200, 33);
        for (long[] row : rows) {
            for (int k = 0; k < 3; k++) {
                row[k] = r.nextInt(4) == 0 ? PtxRig.db(f(row[k])) : r.nextLong();
            }
        }
        List<String> three = List.of("f64", "f64", "f64");
        long[][] addSub = PtxRig.run(three, List.of("f64", "f64"), "add.rn.f64 %d, %a, %b;\nsub.rn.f64 %q, %a, %b;", rows);
        long[][] mulFma = PtxRig.run(three, List.of("f64", "f64"), "mul.rn.f64 %d, %a, %b;\nfma.rn.f64 %q, %a, %b, %c;", rows);
        long[][] div = PtxRig.run(three, List.of("f64", "f64"), "div.rn.f64 %d, %a, %b;\nrcp.rn.f64 %q, %a;", rows);
        long[][] sqrt = PtxRig.run(three, List.of("f64"), "sqrt.rn.f64 %d, %a;", rows);
        for (int i = 0; i < rows.length; i++) {
            double a = d(rows[i][0]);
            double b = d(rows[i][1]);
            double c = d(rows[i][2]);
            String as = a + ", " + b + ", " + c;
            assertF64(addSub[i][0], a + b, "add " + as);
            assertF64(addSub[i][1], a - b, "sub " + as);
            assertF64(mulFma[i][0], a * b, "mul " + as);
            assertF64(mulFma[i][1], Math.fma(a, b, c), "fma " + as);
            assertF64(div[i][0], a / b, "div " + as);
            assertF64(div[i][1], 1d / a, "rcp " + as);
            assertF64(sqrt[i][0], Math.sqrt(a), "sqrt " + as);
        }
    }

    /** An .f64 NaN's payload is not pinned (the engine keeps Java's); every other result is bit-exact. */
    private static void assertF64(long got, double want, String what) {
        if (Double.isNaN(want)) {
            assertThat(Double.isNaN(d(got))).as(what).isTrue();
        } else {
            assertThat(got).as(what).isEqualTo(Double.doubleToRawLongBits(want));
        }
    }

    @Test
    void everyF32NaNResultIsTheCanonicalNaN() {
        float inf = Float.POSITIVE_INFINITY;
        long payload = 0x7fc0_1234L;
        long negPayload = 0xffc0_0001L;
        long[][] rows = {{PtxRig.fb(inf), PtxRig.fb(-inf)}, {PtxRig.fb(0f), PtxRig.fb(inf)}, {payload, PtxRig.fb(1f)},
            {PtxRig.fb(1f), negPayload}, {PtxRig.fb(-1f), PtxRig.fb(0f)}, {PtxRig.fb(0f), PtxRig.fb(0f)}};
        long[][] got = PtxRig.run(List.of("f32", "f32"), List.of("f32", "f32"), """
                add.f32 %d, %a, %b;
                mul.f32 %q, %a, %b;
                """, rows);
        long[][] got2 = PtxRig.run(List.of("f32", "f32"), List.of("f32", "f32"), """
                sqrt.rn.f32 %d, %a;
                div.rn.f32 %q, %a, %b;
                """, rows);
        assertThat(got[0][0]).isEqualTo(CANONICAL_NAN);
        assertThat(got[1][1]).isEqualTo(CANONICAL_NAN);
        assertThat(got[2]).containsExactly(CANONICAL_NAN, CANONICAL_NAN);
        assertThat(got[3]).containsExactly(CANONICAL_NAN, CANONICAL_NAN);
        assertThat(got2[4][0]).as("sqrt(-1)").isEqualTo(CANONICAL_NAN);
        assertThat(got2[5][1]).as("0/0").isEqualTo(CANONICAL_NAN);
        assertThat(got2[2][0]).as("sqrt of a NaN with a payload").isEqualTo(CANONICAL_NAN);
    }

    @Test
    void ftzFlushesSubnormalInputsAndResultsKeepingTheSign() {
        float sub = 3e-39f;
        float n = Float.MIN_NORMAL;
        long[][] rows = {{PtxRig.fb(sub), PtxRig.fb(0f)}, {PtxRig.fb(-sub), PtxRig.fb(0f)}, {PtxRig.fb(1.5f * n), PtxRig.fb(-n)},
            {PtxRig.fb(-n), PtxRig.fb(0.5f)}, {PtxRig.fb(2f), PtxRig.fb(3f)}};
        long[][] ftz = PtxRig.run(List.of("f32", "f32"), List.of("f32", "f32"),
                "add.ftz.f32 %d, %a, %b;\nmul.ftz.f32 %q, %a, %b;", rows);
        long[][] plain = PtxRig.run(List.of("f32", "f32"), List.of("f32", "f32"), "add.f32 %d, %a, %b;\nmul.f32 %q, %a, %b;", rows);
        assertThat(ftz[0][0]).as("subnormal + 0").isEqualTo(gpu(0f));
        assertThat(ftz[1][0]).as("-subnormal + 0").isEqualTo(gpu(0f));
        assertThat(ftz[1][1]).as("-subnormal * 0").isEqualTo(gpu(-0f));
        assertThat(ftz[2][0]).as("1.5 MIN_NORMAL - MIN_NORMAL flushes").isEqualTo(gpu(0f));
        assertThat(ftz[3][1]).as("-MIN_NORMAL * 0.5 flushes to -0").isEqualTo(gpu(-0f));
        assertThat(ftz[4]).containsExactly(gpu(5f), gpu(6f));
        assertThat(plain[0][0]).isEqualTo(gpu(sub));
        assertThat(plain[2][0]).isEqualTo(gpu(1.5f * n - n));
        assertThat(plain[3][1]).isEqualTo(gpu(-n * 0.5f));
    }

    @Test
    void satClampsToZeroOneAndSendsNaNToZero() {
        float inf = Float.POSITIVE_INFINITY;
        long[][] rows = {{PtxRig.fb(1.5f), PtxRig.fb(0.2f)}, {PtxRig.fb(-3f), PtxRig.fb(1f)}, {PtxRig.fb(inf), PtxRig.fb(-inf)},
            {PtxRig.fb(0.25f), PtxRig.fb(0.5f)}, {PtxRig.fb(-0f), PtxRig.fb(-0f)}};
        long[][] got = PtxRig.run(List.of("f32", "f32"), List.of("f32", "f32"),
                "add.sat.f32 %d, %a, %b;\nmul.sat.f32 %q, %a, %b;", rows);
        assertThat(got[0]).containsExactly(gpu(1f), gpu(1.5f * 0.2f));
        assertThat(got[1]).containsExactly(gpu(0f), gpu(0f));
        assertThat(got[2]).as("NaN saturates to 0").containsExactly(gpu(0f), gpu(0f));
        assertThat(got[3]).containsExactly(gpu(0.75f), gpu(0.125f));
        long[][] fma = PtxRig.run(List.of("f32", "f32", "f32"), List.of("f32"), "fma.rn.sat.f32 %d, %a, %b, %c;",
                new long[][] {{PtxRig.fb(2f), PtxRig.fb(2f), PtxRig.fb(-3.5f)}, {PtxRig.fb(2f), PtxRig.fb(2f), PtxRig.fb(1f)}});
        assertThat(fma[0][0]).isEqualTo(gpu(0.5f));
        assertThat(fma[1][0]).isEqualTo(gpu(1f));
    }

    @Test
    void minAndMaxTakeTheNumberOverANaNAndOrderSignedZeros() {
        float nan = Float.NaN;
        long[][] rows = {{PtxRig.fb(nan), PtxRig.fb(1f)}, {PtxRig.fb(-2f), 0x7fc0_0005L}, {PtxRig.fb(nan), 0xffc0_0001L},
            {PtxRig.fb(-0f), PtxRig.fb(0f)}, {PtxRig.fb(0f), PtxRig.fb(-0f)}, {PtxRig.fb(3f), PtxRig.fb(-4f)}};
        long[][] got = PtxRig.run(List.of("f32", "f32"), List.of("f32", "f32"), "min.f32 %d, %a, %b;\nmax.f32 %q, %a, %b;", rows);
        assertThat(got[0]).containsExactly(gpu(1f), gpu(1f));
        assertThat(got[1]).containsExactly(gpu(-2f), gpu(-2f));
        assertThat(got[2]).as("two NaNs: the canonical NaN").containsExactly((long) CANONICAL_NAN, (long) CANONICAL_NAN);
        assertThat(got[3]).containsExactly(gpu(-0f), gpu(0f));
        assertThat(got[4]).containsExactly(gpu(-0f), gpu(0f));
        assertThat(got[5]).containsExactly(gpu(-4f), gpu(3f));
        long[][] rows64 = new long[rows.length][];
        for (int i = 0; i < rows.length; i++) {
            rows64[i] = new long[] {PtxRig.db(f(rows[i][0])), PtxRig.db(f(rows[i][1]))};
        }
        long[][] g64 = PtxRig.run(List.of("f64", "f64"), List.of("f64", "f64"), "min.f64 %d, %a, %b;\nmax.f64 %q, %a, %b;", rows64);
        assertThat(g64[0]).containsExactly(PtxRig.db(1), PtxRig.db(1));
        assertThat(g64[1]).containsExactly(PtxRig.db(-2), PtxRig.db(-2));
        assertThat(Double.isNaN(d(g64[2][0])) && Double.isNaN(d(g64[2][1]))).isTrue();
        assertThat(g64[3]).containsExactly(PtxRig.db(-0d), PtxRig.db(0d));
        assertThat(g64[5]).containsExactly(PtxRig.db(-4), PtxRig.db(3));
    }

    @Test
    void absAndNegFlipOnlyTheSignBitOfNumbers() {
        long[][] rows = {{PtxRig.fb(-0f)}, {PtxRig.fb(2.5f)}, {0xffc0_0001L}, {PtxRig.fb(Float.NEGATIVE_INFINITY)}};
        long[][] got = PtxRig.run(List.of("f32"), List.of("f32", "f32"), "abs.f32 %d, %a;\nneg.f32 %q, %a;", rows);
        assertThat(got[0]).containsExactly(0L, 0L);
        assertThat(got[1]).containsExactly(PtxRig.fb(2.5f), PtxRig.fb(-2.5f));
        // PTX leaves abs and neg of a NaN open; the H200 answers the canonical NaN for both.
        assertThat(got[2]).as("a NaN becomes the canonical NaN").containsExactly(CANONICAL_NAN, CANONICAL_NAN);
        assertThat(got[3]).containsExactly(PtxRig.fb(Float.POSITIVE_INFINITY), PtxRig.fb(Float.POSITIVE_INFINITY));
    }
}
