// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * What IEEE 754 and the PTX ISA say the operations of {@code ops.cu} compute, in Java, for
 * {@link PtxSemanticsContract}. Round-to-nearest float arithmetic is Java's own (IEEE's); every
 * directed rounding and every conversion goes through exact {@link BigDecimal} values and a search
 * for the neighbouring floats, so nothing here leans on the code under test or on the library's
 * own directed conversions.
 */
final class PtxReference {

    /** IEEE 754's rounding directions, as CUDA's {@code _rn _rz _ru _rd} suffixes name them. */
    enum Mode {
        /** To nearest, ties to even. */
        RN,
        /** Toward zero. */
        RZ,
        /** Toward positive infinity. */
        RU,
        /** Toward negative infinity. */
        RD
    }

    /** The modes in the order the kernels apply them. */
    static final Mode[] MODES = Mode.values();

    /** The bits of the GPU's one single-precision NaN, which float arithmetic returns. */
    static final int NAN32 = 0x7fffffff;

    private static final BigDecimal MAX_F = new BigDecimal(Float.MAX_VALUE);
    private static final BigDecimal MAX_D = new BigDecimal(Double.MAX_VALUE);
    /** Where a float rounds to infinity to nearest: halfway from MAX_VALUE to 2^128. */
    private static final BigDecimal TWO_128 = BigDecimal.valueOf(2).pow(128);
    private static final BigDecimal TWO_1024 = BigDecimal.valueOf(2).pow(1024);

    private PtxReference() {
    }

    // ---- exact values and directed rounding ----------------------------------------------------

    static BigDecimal exact(float x) {
        return new BigDecimal(x);
    }

    static BigDecimal exact(double x) {
        return new BigDecimal(x);
    }

    /** {@return the largest float not above {@code e}} Negative results below -MAX are -inf. */
    static float floorF(BigDecimal e) {
        if (e.compareTo(MAX_F) > 0) {
            return Float.MAX_VALUE;
        }
        if (e.compareTo(MAX_F.negate()) < 0) {
            return Float.NEGATIVE_INFINITY;
        }
        float f = Math.max(-Float.MAX_VALUE, Math.min(Float.MAX_VALUE, e.floatValue()));
        while (exact(f).compareTo(e) > 0) {
            f = Math.nextDown(f);
        }
        while (f < Float.MAX_VALUE && exact(Math.nextUp(f)).compareTo(e) <= 0) {
            f = Math.nextUp(f);
        }
        // nextUp(-MIN_VALUE) is -0: a floor at or above zero is +0.
        return f == 0 ? 0f : f;
    }

    /** {@return the smallest float not below {@code e}}, -0 for a negative {@code e} above -MIN_VALUE */
    static float ceilF(BigDecimal e) {
        return -floorF(e.negate());
    }

    /** {@return {@code e}, not zero, rounded to a float in direction {@code m}} */
    static float roundF(BigDecimal e, Mode m) {
        return switch (m) {
            case RD -> floorF(e);
            case RU -> ceilF(e);
            case RZ -> e.signum() > 0 ? floorF(e) : ceilF(e);
            case RN -> nearestF(e);
        };
    }

    private static float nearestF(BigDecimal e) {
        float lo = floorF(e);
        float hi = ceilF(e);
        if (lo == hi) {
            return lo;
        }
        BigDecimal l = Float.isInfinite(lo) ? TWO_128.negate() : exact(lo);
        BigDecimal h = Float.isInfinite(hi) ? TWO_128 : exact(hi);
        int c = e.subtract(l).compareTo(h.subtract(e));
        if (c != 0) {
            return c < 0 ? lo : hi;
        }
        // A tie: the even one. Infinity counts as even (MAX_VALUE's last bit is 1).
        if (Float.isInfinite(lo) || Float.isInfinite(hi)) {
            return Float.isInfinite(lo) ? lo : hi;
        }
        return (Float.floatToRawIntBits(lo) & 1) == 0 ? lo : hi;
    }

    static double floorD(BigDecimal e) {
        if (e.compareTo(MAX_D) > 0) {
            return Double.MAX_VALUE;
        }
        if (e.compareTo(MAX_D.negate()) < 0) {
            return Double.NEGATIVE_INFINITY;
        }
        double d = Math.max(-Double.MAX_VALUE, Math.min(Double.MAX_VALUE, e.doubleValue()));
        while (exact(d).compareTo(e) > 0) {
            d = Math.nextDown(d);
        }
        while (d < Double.MAX_VALUE && exact(Math.nextUp(d)).compareTo(e) <= 0) {
            d = Math.nextUp(d);
        }
        return d == 0 ? 0d : d;
    }

    static double ceilD(BigDecimal e) {
        return -floorD(e.negate());
    }

    static double roundD(BigDecimal e, Mode m) {
        return switch (m) {
            case RD -> floorD(e);
            case RU -> ceilD(e);
            case RZ -> e.signum() > 0 ? floorD(e) : ceilD(e);
            case RN -> {
                double lo = floorD(e);
                double hi = ceilD(e);
                if (lo == hi) {
                    yield lo;
                }
                BigDecimal l = Double.isInfinite(lo) ? TWO_1024.negate() : exact(lo);
                BigDecimal h = Double.isInfinite(hi) ? TWO_1024 : exact(hi);
                int c = e.subtract(l).compareTo(h.subtract(e));
                if (c != 0) {
                    yield c < 0 ? lo : hi;
                }
                if (Double.isInfinite(lo) || Double.isInfinite(hi)) {
                    yield Double.isInfinite(lo) ? lo : hi;
                }
                yield (Double.doubleToRawLongBits(lo) & 1) == 0 ? lo : hi;
            }
        };
    }

    // ---- float arithmetic ----------------------------------------------------------------------

    /**
     * {@return the sign of an exact zero sum} IEEE 754 (6.3): zeros of one sign keep it; any other
     * exact zero is +0, except -0 when rounding toward negative infinity.
     */
    private static float zeroSum(boolean bothZero, boolean negA, boolean negB, Mode m) {
        if (bothZero && negA == negB) {
            return negA ? -0f : 0f;
        }
        return m == Mode.RD ? -0f : 0f;
    }

    static float add(float x, float y, Mode m) {
        if (m == Mode.RN || !Float.isFinite(x) || !Float.isFinite(y)) {
            // Infinities and NaNs are exact in every direction.
            return x + y;
        }
        BigDecimal e = exact(x).add(exact(y));
        if (e.signum() == 0) {
            return zeroSum(x == 0 && y == 0, neg(x), neg(y), m);
        }
        return roundF(e, m);
    }

    static float mul(float x, float y, Mode m) {
        if (m == Mode.RN || !Float.isFinite(x) || !Float.isFinite(y) || x == 0 || y == 0) {
            return x * y;
        }
        return roundF(exact(x).multiply(exact(y)), m);
    }

    static float fma(float x, float y, float z, Mode m) {
        if (m == Mode.RN || !Float.isFinite(x) || !Float.isFinite(y) || !Float.isFinite(z)) {
            return Math.fma(x, y, z);
        }
        BigDecimal e = exact(x).multiply(exact(y)).add(exact(z));
        if (e.signum() == 0) {
            boolean productZero = x == 0 || y == 0;
            return zeroSum(productZero && z == 0, neg(x) != neg(y), neg(z), m);
        }
        return roundF(e, m);
    }

    private static boolean neg(float x) {
        return Float.floatToRawIntBits(x) < 0;
    }

    /** {@return the bits of {@code x} as a float result on the GPU: one NaN, otherwise exact bits} */
    static int bits(float x) {
        return Float.isNaN(x) ? NAN32 : Float.floatToRawIntBits(x);
    }

    /**
     * {@return PTX's min or max of two floats} A NaN operand gives the other operand; two NaNs give
     * the NaN; -0 is below +0 (IEEE 754-2019's minimumNumber and maximumNumber).
     */
    static int minMax(float x, float y, boolean min) {
        if (Float.isNaN(x) && Float.isNaN(y)) {
            return NAN32;
        }
        if (Float.isNaN(x)) {
            return Float.floatToRawIntBits(y);
        }
        if (Float.isNaN(y)) {
            return Float.floatToRawIntBits(x);
        }
        return Float.floatToRawIntBits(min ? Math.min(x, y) : Math.max(x, y));
    }

    // ---- conversions ---------------------------------------------------------------------------

    /**
     * {@return {@code x} rounded to an integer of {@code bits} bits in direction {@code m}, as a
     * 64-bit register holds it} Out-of-range values saturate, as PTX's float-to-integer cvt always
     * does. A NaN gives 0 where the source is .f32 and the destination is 32 bits or narrower, and
     * {@code 1 << (bits - 1)} otherwise (PTX ISA 9.0, cvt).
     *
     * @param srcDouble whether the source is .f64
     */
    static long toInt(double x, Mode m, int bits, boolean signed, boolean srcDouble) {
        if (Double.isNaN(x)) {
            long v = srcDouble || bits == 64 ? 1L << (bits - 1) : 0;
            return signed ? (bits == 64 ? v : (long) (int) v) : v;
        }
        BigInteger lo = signed ? BigInteger.ONE.shiftLeft(bits - 1).negate() : BigInteger.ZERO;
        BigInteger hi = (signed ? BigInteger.ONE.shiftLeft(bits - 1) : BigInteger.ONE.shiftLeft(bits)).subtract(BigInteger.ONE);
        if (Double.isInfinite(x)) {
            return (x > 0 ? hi : lo).longValue();
        }
        double r = switch (m) {
            case RN -> Math.rint(x);
            case RZ -> x < 0 ? Math.ceil(x) : Math.floor(x);
            case RU -> Math.ceil(x);
            case RD -> Math.floor(x);
        };
        BigInteger v = new BigDecimal(r).toBigIntegerExact();
        return v.max(lo).min(hi).longValue();
    }

    /** {@return a float's result of {@code cvt.rni/rzi/rmi/rpi.f32.f32}: an integral float} */
    static int roundToIntegral(float x, Mode m) {
        if (Float.isNaN(x)) {
            return NAN32;
        }
        double r = switch (m) {
            case RN -> Math.rint(x);
            case RZ -> x < 0 ? Math.ceil(x) : Math.floor(x);
            case RU -> Math.ceil(x);
            case RD -> Math.floor(x);
        };
        return Float.floatToRawIntBits((float) r);
    }

    /** {@return a double rounded to a float's bits in direction {@code m}} */
    static int toFloat(double x, Mode m) {
        if (Double.isNaN(x)) {
            // Not the canonical NaN: the H200 narrows a double NaN as Java's cast does (quiet, sign
            // and the payload's top bits kept), in every rounding.
            return Float.floatToRawIntBits((float) x);
        }
        if (Double.isInfinite(x) || x == 0) {
            return Float.floatToRawIntBits((float) x);
        }
        return Float.floatToRawIntBits(roundF(exact(x), m));
    }

    /** {@return an integer's exact value rounded to a float in direction {@code m}} */
    static int intToFloat(BigInteger v, Mode m) {
        return v.signum() == 0 ? 0 : Float.floatToRawIntBits(roundF(new BigDecimal(v), m));
    }

    /** {@return an integer's exact value rounded to a double's bits in direction {@code m}} */
    static long intToDouble(BigInteger v, Mode m) {
        return v.signum() == 0 ? 0 : Double.doubleToRawLongBits(roundD(new BigDecimal(v), m));
    }

    /** {@return the unsigned value of {@code v}} */
    static BigInteger unsigned(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }

    // ---- halves --------------------------------------------------------------------------------

    /** {@return the value of half bits {@code h}, decoded from IEEE 754's binary16 layout} */
    static float halfValue(int h) {
        int sign = (h >>> 15) & 1;
        int exp = (h >>> 10) & 0x1f;
        int man = h & 0x3ff;
        float mag;
        if (exp == 0x1f) {
            mag = man == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        } else if (exp == 0) {
            mag = Math.scalb((float) man, -24);
        } else {
            mag = Math.scalb((float) (man | 0x400), exp - 25);
        }
        return sign == 1 ? -mag : mag;
    }

    /** {@return a float rounded to nearest-even half bits}, for a float that is not NaN */
    static int toHalf(float x) {
        int sign = Float.floatToRawIntBits(x) < 0 ? 0x8000 : 0;
        float a = Math.abs(x);
        if (Float.isInfinite(a) || a >= 65520f) {
            // 65520 lies halfway from the largest half, 65504, to 65536, and ties go to infinity.
            return sign | 0x7c00;
        }
        // The largest half bit pattern not above a, by binary search over the ordered magnitudes.
        int lo = 0;
        int hi = 0x7bff;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (halfValue(mid) <= a) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        float below = halfValue(lo);
        if (below == a) {
            return sign | lo;
        }
        float above = halfValue(lo + 1);
        // Both distances are exact in double: the values are floats a few bits apart.
        double dl = (double) a - below;
        double du = (double) above - a;
        int pick = dl < du ? lo : dl > du ? lo + 1 : ((lo & 1) == 0 ? lo : lo + 1);
        return sign | pick;
    }
}
