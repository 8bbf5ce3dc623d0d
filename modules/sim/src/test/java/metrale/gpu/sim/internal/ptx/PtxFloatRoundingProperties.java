// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@code .f32} add, sub, mul and fma in each rounding mode ({@code .rn .rz .rm .rp}) against the
 * exact result rounded by {@link Exact}, over random float bits: normals, subnormals, values whose
 * sum or product cancels exactly, and ones that overflow.
 */
class PtxFloatRoundingProperties {

    private static float f(long w) {
        return Float.intBitsToFloat((int) w);
    }

    private static BigDecimal big(float x) {
        return new BigDecimal(x);
    }

    @Property(tries = 40)
    void directedRoundingMatchesTheExactResult(@ForAll("triples") List<long[]> triples) {
        long[][] rows = triples.toArray(new long[0][]);
        List<String> three = List.of("f32", "f32", "f32");
        for (String mode : Exact.MODES) {
            long[][] addSub = PtxRig.run(three, List.of("f32", "f32"),
                    "add." + mode + ".f32 %d, %a, %b;\nsub." + mode + ".f32 %q, %a, %b;", rows);
            long[][] mulFma = PtxRig.run(three, List.of("f32", "f32"),
                    "mul." + mode + ".f32 %d, %a, %b;\nfma." + mode + ".f32 %q, %a, %b, %c;", rows);
            for (int i = 0; i < rows.length; i++) {
                float a = f(rows[i][0]);
                float b = f(rows[i][1]);
                float c = f(rows[i][2]);
                String as = mode + " of " + a + " (0x" + Integer.toHexString((int) rows[i][0]) + "), " + b + " (0x"
                        + Integer.toHexString((int) rows[i][1]) + "), " + c;
                boolean an = Math.copySign(1f, a) < 0;
                boolean bn = Math.copySign(1f, b) < 0;
                boolean cn = Math.copySign(1f, c) < 0;
                float add = Exact.toFloat(big(a).add(big(b)), mode, Exact.zeroSumNegative(an, bn, a == 0 && b == 0, mode));
                float sub = Exact.toFloat(big(a).subtract(big(b)), mode, Exact.zeroSumNegative(an, !bn, a == 0 && b == 0, mode));
                float mul = Exact.toFloat(big(a).multiply(big(b)), mode, an != bn);
                boolean productZero = a == 0 || b == 0;
                float fma = Exact.toFloat(big(a).multiply(big(b)).add(big(c)), mode,
                        Exact.zeroSumNegative(an != bn, cn, productZero && c == 0, mode));
                assertThat(addSub[i][0]).as("add %s: want %s", as, add).isEqualTo(PtxRig.fb(add));
                assertThat(addSub[i][1]).as("sub %s: want %s", as, sub).isEqualTo(PtxRig.fb(sub));
                assertThat(mulFma[i][0]).as("mul %s: want %s", as, mul).isEqualTo(PtxRig.fb(mul));
                assertThat(mulFma[i][1]).as("fma %s: want %s", as, fma).isEqualTo(PtxRig.fb(fma));
            }
        }
    }

    /** Finite floats: any bits, small values, subnormals, and the largest ones. */
    private static Arbitrary<Float> floats() {
        Arbitrary<Float> bits = Arbitraries.integers().map(Float::intBitsToFloat).filter(Float::isFinite);
        Arbitrary<Float> small = Arbitraries.floats().between(-100f, 100f).ofScale(3);
        Arbitrary<Float> subnormal = Arbitraries.integers().between(-0x7fffff, 0x7fffff)
                .map(k -> k < 0 ? -Float.intBitsToFloat(-k) : Float.intBitsToFloat(k));
        Arbitrary<Float> huge = Arbitraries.integers().between(0x7f000000, 0x7f7fffff)
                .map(Float::intBitsToFloat).flatMap(x -> Arbitraries.of(x, -x));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, bits), net.jqwik.api.Tuple.of(3, small), net.jqwik.api.Tuple.of(2, subnormal),
                net.jqwik.api.Tuple.of(1, huge), net.jqwik.api.Tuple.of(1, Arbitraries.of(0f, -0f, 1f, -1f)));
    }

    @Provide
    Arbitrary<List<long[]>> triples() {
        Arbitrary<long[]> any = Combinators.combine(floats(), floats(), floats())
                .as((a, b, c) -> new long[] {PtxRig.fb(a), PtxRig.fb(b), PtxRig.fb(c)});
        // b = -a makes a + b cancel exactly; c = -(a * b) rounded makes the fma's result its rounding error (or zero).
        Arbitrary<long[]> cancelling = Combinators.combine(floats(), floats(), Arbitraries.integers().between(0, 2))
                .as((a, b, k) -> new long[] {PtxRig.fb(a), PtxRig.fb(k == 0 ? -a : b), PtxRig.fb(k == 2 || !Float.isFinite(a * b) ? 0f : -(a * b))});
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, any), net.jqwik.api.Tuple.of(1, cancelling))
                .list().ofSize(48);
    }
}
