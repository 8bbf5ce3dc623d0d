// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * cvt in every rounding and with saturation, against Java references computed with
 * {@link BigDecimal}: float to integer (NaN to 0, infinities and out-of-range values clamped),
 * integer to integer (.sat, narrowing, sign and zero extension), integer to float in each
 * direction (u64 extremes), f64 to f32 directed, f16 round trips, and rounding to an integral float.
 */
class PtxCvtTest {

    private static final String[] INT_ROUNDINGS = {"rni", "rzi", "rmi", "rpi"};

    private static RoundingMode integral(String r) {
        return switch (r) {
            case "rni" -> RoundingMode.HALF_EVEN;
            case "rzi" -> RoundingMode.DOWN;
            case "rmi" -> RoundingMode.FLOOR;
            default -> RoundingMode.CEILING;
        };
    }

    private static final double[] SPECIAL = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0d, -0d, 0.5,
        1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1e10, -1e10, 3e9, 0x1p31, -0x1p31, 0x1p32, 0x1p63, -0x1p63, 0x1p64, 1.8e19,
        -1, 255.5, 127.5, 128, -128.5, -129, 65535.7, 32767.5, -32768.5, 4294967295.5, 1e300, -1e-300, 4.9e-324};

    private static List<Double> doubles(long seed) {
        List<Double> v = new ArrayList<>();
        for (double d : SPECIAL) {
            v.add(d);
        }
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < 100; i++) {
            v.add(r.nextDouble(-3e9, 3e9));
            v.add(r.nextDouble(-300, 300));
            v.add(Double.longBitsToDouble(r.nextLong()));
        }
        return v;
    }

    /**
     * {@return the integer {@code x} rounds to, clamped into {@code t}'s range} A NaN gives 0 from
     * an .f32 into 32 bits or fewer and {@code 1 << (width - 1)} otherwise (PTX ISA 9.0; the H200's
     * f64-to-s32 and f32-to-s64 answers agree).
     */
    private static long toInt(double x, String rounding, IntCases t, boolean fromF64) {
        if (Double.isNaN(x)) {
            return !fromF64 && t.bits() < 64 ? 0 : t.signed() ? -(1L << (t.bits() - 1)) : 1L << (t.bits() - 1);
        }
        BigInteger lo = t.signed() ? BigInteger.valueOf(t.min()) : BigInteger.ZERO;
        BigInteger hi = t.signed() ? BigInteger.valueOf(t.max()) : BigInteger.ONE.shiftLeft(t.bits()).subtract(BigInteger.ONE);
        if (Double.isInfinite(x)) {
            return (x > 0 ? hi : lo).longValue();
        }
        BigInteger v = new BigDecimal(x).setScale(0, integral(rounding)).toBigIntegerExact();
        return v.max(lo).min(hi).longValue();
    }

    @Test
    void floatToIntegerRoundsAndSaturates() {
        List<Double> values = doubles(51);
        long[][] f64 = values.stream().map(d -> new long[] {PtxRig.db(d)}).toArray(long[][]::new);
        long[][] f32 = values.stream().map(d -> new long[] {PtxRig.fb(d.floatValue())}).toArray(long[][]::new);
        for (String dst : new String[] {"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"}) {
            IntCases t = IntCases.of(dst);
            // An 8-bit result lives in a 16-bit register, sign- or zero-extended.
            String reg = t.bits() == 8 ? dst.charAt(0) + "16" : dst;
            int regBits = Math.max(16, t.bits());
            for (String r : INT_ROUNDINGS) {
                long[][] g64 = PtxRig.run(List.of("f64"), List.of(reg), "cvt." + r + "." + dst + ".f64 %d, %a;", f64);
                long[][] g32 = PtxRig.run(List.of("f32"), List.of(reg), "cvt." + r + "." + dst + ".f32 %d, %a;", f32);
                for (int i = 0; i < f64.length; i++) {
                    double x = values.get(i);
                    assertThat(g64[i][0]).as("cvt.%s.%s.f64 %s", r, dst, x).isEqualTo(PtxRig.w(regBits, toInt(x, r, t, true)));
                    float xf = (float) x;
                    assertThat(g32[i][0]).as("cvt.%s.%s.f32 %s", r, dst, xf).isEqualTo(PtxRig.w(regBits, toInt(xf, r, t, false)));
                }
            }
        }
    }

    @Test
    void integerToIntegerSaturatesTruncatesAndExtends() {
        String[][] pairs = {{"s8", "s32"}, {"u8", "s32"}, {"s16", "s32"}, {"u16", "u32"}, {"s16", "u64"}, {"s32", "u64"},
            {"u32", "s64"}, {"s32", "s64"}, {"u64", "s64"}, {"s64", "u64"}, {"u32", "s32"}, {"s32", "u32"}, {"u16", "s16"}};
        for (String[] p : pairs) {
            IntCases d = IntCases.of(p[0]);
            IntCases s = IntCases.of(p[1]);
            String reg = d.bits() == 8 ? p[0].charAt(0) + "16" : p[0];
            int regBits = Math.max(16, d.bits());
            long[][] rows = s.pairs(52);
            long[][] sat = PtxRig.run(List.of(p[1]), List.of(reg), "cvt.sat." + p[0] + "." + p[1] + " %d, %a;", rows);
            long[][] plain = PtxRig.run(List.of(p[1]), List.of(reg), "cvt." + p[0] + "." + p[1] + " %d, %a;", rows);
            BigInteger lo = d.signed() ? BigInteger.valueOf(d.min()) : BigInteger.ZERO;
            BigInteger hi = d.signed() ? BigInteger.valueOf(d.max()) : BigInteger.ONE.shiftLeft(d.bits()).subtract(BigInteger.ONE);
            for (int i = 0; i < rows.length; i++) {
                long v = s.v(rows[i][0]);
                BigInteger bv = BigInteger.valueOf(v);
                if (!s.signed() && v < 0) {
                    bv = bv.add(BigInteger.ONE.shiftLeft(64));
                }
                long clamped = bv.max(lo).min(hi).longValue();
                // The result in the destination type, then sign- or zero-extended to the register.
                long want = PtxRig.w(regBits, d.v(clamped));
                long wantPlain = PtxRig.w(regBits, d.v(v));
                assertThat(sat[i][0]).as("cvt.sat.%s.%s %s", p[0], p[1], bv).isEqualTo(want);
                assertThat(plain[i][0]).as("cvt.%s.%s %s", p[0], p[1], bv).isEqualTo(wantPlain);
            }
        }
    }

    @Test
    void integerToFloatInEachDirection() {
        for (String src : new String[] {"s32", "u32", "s64", "u64"}) {
            IntCases s = IntCases.of(src);
            List<Long> values = new ArrayList<>(s.edges(53));
            values.addAll(List.of((1L << 24) + 1, (1L << 53) + 1, -(1L << 53) - 3, (1L << 62) + 12345, 0x8000_0000_0000_0001L,
                    0xffff_ff80_0000_0001L));
            long[][] rows = values.stream().map(v -> new long[] {v}).toArray(long[][]::new);
            for (String mode : Exact.MODES) {
                long[][] g = PtxRig.run(List.of(src), List.of("f32", "f64"),
                        "cvt." + mode + ".f32." + src + " %d, %a;\ncvt." + mode + ".f64." + src + " %q, %a;", rows);
                for (int i = 0; i < rows.length; i++) {
                    long v = s.v(rows[i][0]);
                    BigDecimal exact = !s.signed() && v < 0 ? new BigDecimal(Long.toUnsignedString(v)) : new BigDecimal(v);
                    assertThat(g[i][0]).as("cvt.%s.f32.%s %s", mode, src, exact).isEqualTo(PtxRig.fb(Exact.toFloat(exact, mode, false)));
                    assertThat(g[i][1]).as("cvt.%s.f64.%s %s", mode, src, exact).isEqualTo(PtxRig.db(Exact.toDouble(exact, mode, false)));
                }
            }
        }
        // The u64 extremes spelled out: 2^64 - 1 rounds up to 2^64 to nearest, down to 2^64 - 2^40 toward zero.
        long[][] max = PtxRig.run(List.of("u64"), List.of("f32", "f32"), "cvt.rn.f32.u64 %d, %a;\ncvt.rz.f32.u64 %q, %a;",
                new long[][] {{-1L}});
        assertThat(max[0]).containsExactly(PtxRig.fb(0x1p64f), PtxRig.fb(0x1p64f - 0x1p40f));
    }

    @Test
    void f64ToF32InEachDirection() {
        List<Double> values = doubles(54);
        long[][] rows = values.stream().map(d -> new long[] {PtxRig.db(d)}).toArray(long[][]::new);
        for (String mode : Exact.MODES) {
            long[][] g = PtxRig.run(List.of("f64"), List.of("f32"), "cvt." + mode + ".f32.f64 %d, %a;", rows);
            for (int i = 0; i < rows.length; i++) {
                double x = values.get(i);
                long want;
                if (Double.isNaN(x)) {
                    // The H200 narrows a double NaN as Java's cast does, in every rounding.
                    want = PtxRig.fb((float) x);
                } else if (Double.isInfinite(x)) {
                    want = PtxRig.fb((float) x);
                } else {
                    want = PtxRig.fb(Exact.toFloat(new BigDecimal(x), mode, Math.copySign(1d, x) < 0));
                }
                assertThat(g[i][0]).as("cvt.%s.f32.f64 %s", mode, x).isEqualTo(want);
            }
        }
        long[][] widen = PtxRig.run(List.of("f32"), List.of("f64"), "cvt.f64.f32 %d, %a;",
                values.stream().map(d -> new long[] {PtxRig.fb(d.floatValue())}).toArray(long[][]::new));
        for (int i = 0; i < values.size(); i++) {
            float x = values.get(i).floatValue();
            if (!Float.isNaN(x)) {
                assertThat(widen[i][0]).as("cvt.f64.f32 %s", x).isEqualTo(PtxRig.db(x));
            }
        }
    }

    @Test
    void f16RoundTripsInEachDirection() {
        List<Float> values = new ArrayList<>(List.of(1f, -1f, 65504f, 65519.99f, 65520f, 1e6f, -1e6f, 1e-8f, 3e-8f, 2.98e-8f,
                6.1e-5f, 0.1f, -0.1f, 1f / 3, 2049f, 2051f, 0f, -0f, Float.POSITIVE_INFINITY));
        SplittableRandom r = new SplittableRandom(55);
        for (int i = 0; i < 150; i++) {
            values.add((float) r.nextDouble(-70000, 70000));
            values.add((float) r.nextDouble(-1, 1) * 1e-4f);
        }
        long[][] rows = values.stream().map(f -> new long[] {PtxRig.fb(f), PtxRig.db(f * (1 + 1e-9))}).toArray(long[][]::new);
        for (String mode : Exact.MODES) {
            long[][] g = PtxRig.run(List.of("f32", "f64"), List.of("b16", "f32"),
                    "cvt." + mode + ".f16.f32 %d, %a;\ncvt.f32.f16 %q, %d;", rows);
            long[][] g64 = PtxRig.run(List.of("f32", "f64"), List.of("b16"), "cvt." + mode + ".f16.f64 %d, %b;", rows);
            for (int i = 0; i < rows.length; i++) {
                float x = values.get(i);
                long want = Float.isInfinite(x) ? Float.floatToFloat16(x) & 0xffff
                        : x == 0 ? Float.floatToFloat16(x) & 0xffff : Exact.toHalf(new BigDecimal(x), mode);
                assertThat(g[i][0]).as("cvt.%s.f16.f32 %s", mode, x).isEqualTo(want);
                assertThat(g[i][1]).as("cvt.f32.f16 back from %s", x).isEqualTo(PtxRig.fb(Float.float16ToFloat((short) want)));
                double xd = Double.longBitsToDouble(rows[i][1]);
                long want64 = Double.isInfinite(xd) || xd == 0 ? Float.floatToFloat16((float) xd) & 0xffff
                        : Exact.toHalf(new BigDecimal(xd), mode);
                assertThat(g64[i][0]).as("cvt.%s.f16.f64 %s", mode, xd).isEqualTo(want64);
            }
        }
        long[][] nan = PtxRig.run(List.of("f32"), List.of("b16"), "cvt.rn.f16.f32 %d, %a;", new long[][] {{0x7fc0_0000L}});
        assertThat(Float.isNaN(Float.float16ToFloat((short) nan[0][0]))).isTrue();
    }

    @Test
    void roundingToAnIntegralFloat() {
        List<Double> values = doubles(56);
        long[][] rows = values.stream().map(d -> new long[] {PtxRig.fb(d.floatValue()), PtxRig.db(d)}).toArray(long[][]::new);
        for (String r : INT_ROUNDINGS) {
            long[][] g = PtxRig.run(List.of("f32", "f64"), List.of("f32", "f64"),
                    "cvt." + r + ".f32.f32 %d, %a;\ncvt." + r + ".f64.f64 %q, %b;", rows);
            for (int i = 0; i < rows.length; i++) {
                double x = values.get(i);
                float xf = (float) x;
                if (Float.isNaN(xf)) {
                    assertThat(g[i][0]).isEqualTo(0x7fffffffL);
                } else if (Float.isFinite(xf)) {
                    BigDecimal v = new BigDecimal(xf).setScale(0, integral(r));
                    float want = v.signum() == 0 ? Math.copySign(0f, xf) : v.floatValue();
                    assertThat(g[i][0]).as("cvt.%s.f32.f32 %s", r, xf).isEqualTo(PtxRig.fb(want));
                }
                if (Double.isFinite(x)) {
                    BigDecimal v = new BigDecimal(x).setScale(0, integral(r));
                    double want = v.signum() == 0 ? Math.copySign(0d, x) : v.doubleValue();
                    assertThat(g[i][1]).as("cvt.%s.f64.f64 %s", r, x).isEqualTo(PtxRig.db(want));
                }
            }
        }
    }

    @Test
    void satOfAFloatResultClampsToTheUnitInterval() {
        long[][] rows = {{PtxRig.db(1.5)}, {PtxRig.db(-0.25)}, {PtxRig.db(0.75)}, {PtxRig.db(Double.NaN)}};
        long[][] g = PtxRig.run(List.of("f64"), List.of("f32"), "cvt.rn.sat.f32.f64 %d, %a;", rows);
        assertThat(g).isDeepEqualTo(new long[][] {{PtxRig.fb(1f)}, {PtxRig.fb(0f)}, {PtxRig.fb(0.75f)}, {PtxRig.fb(0f)}});
    }
}
