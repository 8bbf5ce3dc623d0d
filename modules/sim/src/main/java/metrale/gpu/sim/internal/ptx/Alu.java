// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static metrale.gpu.sim.internal.ptx.Insn.B;
import static metrale.gpu.sim.internal.ptx.Insn.F;
import static metrale.gpu.sim.internal.ptx.Insn.PRED;
import static metrale.gpu.sim.internal.ptx.Insn.S;
import static metrale.gpu.sim.internal.ptx.Insn.U;

import java.math.BigDecimal;

/**
 * PTX's arithmetic on raw register bits, as the ISA states it. Every function takes the
 * instruction's type code ({@link Insn#type}) and returns the result's bits; sources are
 * normalized to their type first ({@link #norm}), so what lies above a narrow value's width in a
 * register never leaks into a result.
 *
 * <p><b>Floats.</b> {@code .rn} is IEEE round-to-nearest-even, which Java's float and double
 * operations are, and {@code fma} is one rounding ({@link Math#fma}); directed modes
 * ({@code .rz .rm .rp}) are exact for {@code .f32} add, sub, mul and fma and for conversions. An
 * {@code .f32} result that is NaN is the GPU's canonical NaN {@code 0x7fffffff}. {@code .ftz}
 * flushes subnormal inputs and results to a zero of the same sign. {@code .approx} functions
 * ({@code ex2 lg2 sin cos rsqrt tanh}, {@code rcp/sqrt/div .approx}) return the correctly rounded
 * value, which can differ from the GPU's in the last bits within the error PTX allows.
 */
public final class Alu {

    static final long CANONICAL_NAN_F32 = 0x7fffffffL;
    /** The quiet bit of an .f64 NaN. */
    static final long QUIET_F64 = 0x0008000000000000L;

    private Alu() {
    }

    /** {@return the bytes of a value of type code {@code type}} */
    public static int bytes(int type) {
        return Math.max(1, Insn.bits(type) / 8);
    }

    // ---- normalization -------------------------------------------------------------------------

    /** {@return {@code v} read as {@code type}: sign- or zero-extended from its width} */
    static long norm(int type, long v) {
        int bits = Insn.bits(type);
        int cls = Insn.cls(type);
        if (cls == PRED) {
            return v & 1;
        }
        return switch (bits) {
            case 64 -> v;
            case 32 -> cls == S ? (int) v : v & 0xffffffffL;
            case 16 -> cls == S ? (short) v : v & 0xffffL;
            case 8 -> cls == S ? (byte) v : v & 0xffL;
            default -> v;
        };
    }

    static float f(long v) {
        return Float.intBitsToFloat((int) v);
    }

    static double d(long v) {
        return Double.longBitsToDouble(v);
    }

    static long bits(float x) {
        return Float.isNaN(x) ? CANONICAL_NAN_F32 : Float.floatToRawIntBits(x) & 0xffffffffL;
    }

    static long bits(double x) {
        return Double.doubleToRawLongBits(x);
    }

    static float ftz(float x) {
        return Math.abs(x) < Float.MIN_NORMAL && x != 0 ? Math.copySign(0f, x) : x;
    }

    static double ftz(double x) {
        return Math.abs(x) < Double.MIN_NORMAL && x != 0 ? Math.copySign(0d, x) : x;
    }

    private static float sat(float x) {
        return Float.isNaN(x) ? 0f : Math.min(1f, Math.max(0f, x));
    }

    private static double sat(double x) {
        return Double.isNaN(x) ? 0d : Math.min(1d, Math.max(0d, x));
    }

    private static boolean isF32(int t) {
        return t == Insn.type(F, 32);
    }

    private static boolean isF64(int t) {
        return t == Insn.type(F, 64);
    }

    private static boolean signed(int t) {
        return Insn.cls(t) == S;
    }

    /** {@return an .f32 result after .ftz and .sat} */
    private static long outF(float z, boolean ftz, boolean sat) {
        if (ftz) {
            z = ftz(z);
        }
        if (sat) {
            z = sat(z);
        }
        return bits(z);
    }

    private static long outD(double z, boolean ftz, boolean sat) {
        if (ftz) {
            z = ftz(z);
        }
        if (sat) {
            z = sat(z);
        }
        return bits(z);
    }

    // ---- directed rounding ---------------------------------------------------------------------

    /**
     * {@return the float nearest {@code s + e} in direction {@code mode}}, where {@code s + e} is an
     * exact value, {@code |e|} at most half an ulp of the double {@code s}
     */
    static float roundF(double s, double e, int mode) {
        float f = (float) s;
        if (mode == Insn.RN || Double.isNaN(s)) {
            return f;
        }
        int cmp = Double.compare((double) f, s);
        if (cmp == 0) {
            cmp = e > 0 ? -1 : e < 0 ? 1 : 0;
        }
        // cmp > 0: f is above the exact value; cmp < 0: below.
        return switch (mode) {
            case Insn.RZ -> (cmp > 0 && s + e > 0) || (cmp < 0 && s + e < 0) ? Math.nextAfter(f, 0d) : f;
            case Insn.RM -> cmp > 0 ? Math.nextDown(f) : f;
            case Insn.RP -> cmp < 0 ? Math.nextUp(f) : f;
            default -> f;
        };
    }

    /**
     * {@return {@code x} rounded to a float in direction {@code mode}, exactly} From JDK 21 on,
     * {@link BigDecimal#floatValue} is correctly rounded to nearest.
     */
    static float roundF(BigDecimal x, int mode) {
        float f = x.floatValue();
        if (mode == Insn.RN) {
            return f;
        }
        int cmp = Float.isInfinite(f) ? (f > 0 ? 1 : -1) : new BigDecimal(f).compareTo(x);
        return switch (mode) {
            case Insn.RZ -> cmp != 0 && (x.signum() > 0) == (cmp > 0) ? Math.nextAfter(f, 0d) : f;
            case Insn.RM -> cmp > 0 ? Math.nextDown(f) : f;
            case Insn.RP -> cmp < 0 ? Math.nextUp(f) : f;
            default -> f;
        };
    }

    static double roundD(BigDecimal x, int mode) {
        double d = x.doubleValue();
        if (mode == Insn.RN) {
            return d;
        }
        int cmp = Double.isInfinite(d) ? (d > 0 ? 1 : -1) : new BigDecimal(d).compareTo(x);
        return switch (mode) {
            case Insn.RZ -> cmp != 0 && (x.signum() > 0) == (cmp > 0) ? Math.nextAfter(d, 0d) : d;
            case Insn.RM -> cmp > 0 ? Math.nextDown(d) : d;
            case Insn.RP -> cmp < 0 ? Math.nextUp(d) : d;
            default -> d;
        };
    }

    /**
     * {@return the zero {@code x + y} is when it is exactly zero, signed as IEEE says} Two zeros
     * of one sign keep it; any other exact zero is +0, except under {@code .rm}, which turns every
     * +0 of that rule into -0 (negating both operands and the RN sum gives exactly that).
     */
    private static double exactZeroSum(double x, double y, int rnd) {
        return rnd == Insn.RM ? -((-x) + (-y)) : x + y;
    }

    // ---- binary arithmetic ---------------------------------------------------------------------

    static long add(int t, int rnd, boolean ftz, boolean sat, long a, long b) {
        if (isF32(t)) {
            float x = f(a);
            float y = f(b);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
            }
            float z;
            if (rnd == Insn.RN) {
                z = x + y;
            } else {
                double s = (double) x + (double) y;
                double bb = s - x;
                double e = (x - (s - bb)) + (y - bb);
                z = s == 0 && e == 0 ? (float) exactZeroSum(x, y, rnd) : roundF(s, e, rnd);
            }
            return outF(z, ftz, sat);
        }
        if (isF64(t)) {
            double x = d(a);
            double y = d(b);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
            }
            return outD(x + y, ftz, sat);
        }
        if (sat && t == Insn.type(S, 32)) {
            long s = (long) (int) a + (int) b;
            return Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, s));
        }
        return a + b;
    }

    static long sub(int t, int rnd, boolean ftz, boolean sat, long a, long b) {
        if (isF32(t)) {
            return add(t, rnd, ftz, sat, a, b ^ 0x80000000L);
        }
        if (isF64(t)) {
            return add(t, rnd, ftz, sat, a, b ^ 0x8000000000000000L);
        }
        if (sat && t == Insn.type(S, 32)) {
            long s = (long) (int) a - (int) b;
            return Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, s));
        }
        return a - b;
    }

    static long mul(int t, int half, int rnd, boolean ftz, boolean sat, long a, long b) {
        if (isF32(t)) {
            float x = f(a);
            float y = f(b);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
            }
            float z = rnd == Insn.RN ? x * y : roundF((double) x * (double) y, 0, rnd);
            return outF(z, ftz, sat);
        }
        if (isF64(t)) {
            double x = d(a);
            double y = d(b);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
            }
            return outD(x * y, ftz, sat);
        }
        long x = norm(t, a);
        long y = norm(t, b);
        int w = Insn.bits(t);
        return switch (half) {
            case Insn.WIDE -> x * y;
            case Insn.HI -> switch (w) {
                case 64 -> signed(t) ? Math.multiplyHigh(x, y) : Math.unsignedMultiplyHigh(x, y);
                case 32 -> (x * y) >> 32;
                default -> (x * y) >> w;
            };
            default -> x * y;
        };
    }

    static long mad(int t, int half, int rnd, boolean ftz, boolean sat, long a, long b, long c) {
        if (Insn.cls(t) == F) {
            return fma(t, rnd, ftz, sat, a, b, c);
        }
        long p = mul(t, half, rnd, false, false, a, b);
        if (sat && t == Insn.type(S, 32) && half == Insn.HI) {
            long s = (long) (int) p + (int) c;
            return Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, s));
        }
        return p + (half == Insn.WIDE ? c : norm(t, c));
    }

    static long fma(int t, int rnd, boolean ftz, boolean sat, long a, long b, long c) {
        if (isF32(t)) {
            float x = f(a);
            float y = f(b);
            float z = f(c);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
                z = ftz(z);
            }
            float r;
            if (rnd == Insn.RN) {
                r = Math.fma(x, y, z);
            } else {
                double p = (double) x * (double) y;
                double s = p + z;
                double bb = s - p;
                double e = (p - (s - bb)) + (z - bb);
                r = s == 0 && e == 0 ? (float) exactZeroSum(p, z, rnd) : roundF(s, e, rnd);
            }
            return outF(r, ftz, sat);
        }
        double x = d(a);
        double y = d(b);
        double z = d(c);
        if (ftz) {
            x = ftz(x);
            y = ftz(y);
            z = ftz(z);
        }
        return outD(Math.fma(x, y, z), ftz, sat);
    }

    /** Integer division by zero gives all ones (the quotient) and the dividend (the remainder), as the GPU's sequence does. */
    static long div(int t, boolean ftz, long a, long b) {
        if (isF32(t)) {
            float x = f(a);
            float y = f(b);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
            }
            return outF(x / y, ftz, false);
        }
        if (isF64(t)) {
            return bits(d(a) / d(b));
        }
        long x = norm(t, a);
        long y = norm(t, b);
        if (y == 0) {
            return -1;
        }
        if (Insn.bits(t) == 64 && !signed(t)) {
            return Long.divideUnsigned(x, y);
        }
        return x / y;
    }

    static long rem(int t, long a, long b) {
        long x = norm(t, a);
        long y = norm(t, b);
        if (y == 0) {
            return x;
        }
        if (Insn.bits(t) == 64 && !signed(t)) {
            return Long.remainderUnsigned(x, y);
        }
        return x % y;
    }

    static long min(int t, boolean ftz, long a, long b) {
        if (Insn.cls(t) == F) {
            return minMaxF(t, ftz, a, b, true);
        }
        long x = norm(t, a);
        long y = norm(t, b);
        boolean lt = Insn.bits(t) == 64 && !signed(t) ? Long.compareUnsigned(x, y) < 0 : x < y;
        return lt ? x : y;
    }

    static long max(int t, boolean ftz, long a, long b) {
        if (Insn.cls(t) == F) {
            return minMaxF(t, ftz, a, b, false);
        }
        long x = norm(t, a);
        long y = norm(t, b);
        boolean gt = Insn.bits(t) == 64 && !signed(t) ? Long.compareUnsigned(x, y) > 0 : x > y;
        return gt ? x : y;
    }

    /** PTX min/max: a NaN operand yields the other; two NaNs yield the canonical NaN; -0 is below +0. */
    private static long minMaxF(int t, boolean ftz, long a, long b, boolean min) {
        if (isF32(t)) {
            float x = f(a);
            float y = f(b);
            if (ftz) {
                x = ftz(x);
                y = ftz(y);
            }
            if (Float.isNaN(x)) {
                return bits(y);
            }
            if (Float.isNaN(y)) {
                return bits(x);
            }
            return bits(min ? Math.min(x, y) : Math.max(x, y));
        }
        double x = d(a);
        double y = d(b);
        if (Double.isNaN(x)) {
            return Double.isNaN(y) ? 0x7fffffffffffffffL : bits(y);
        }
        if (Double.isNaN(y)) {
            return bits(x);
        }
        return bits(min ? Math.min(x, y) : Math.max(x, y));
    }

    static long logic(int op, int t, long a, long b) {
        long r = switch (op) {
            case Insn.AND -> a & b;
            case Insn.OR -> a | b;
            default -> a ^ b;
        };
        return Insn.cls(t) == PRED ? r & 1 : r;
    }

    static long shl(int t, long a, long n) {
        long k = n & 0xffffffffL;
        int w = Insn.bits(t);
        return k >= w ? 0 : a << k;
    }

    static long shr(int t, long a, long n) {
        long k = n & 0xffffffffL;
        int w = Insn.bits(t);
        long x = norm(t, a);
        if (signed(t)) {
            return x >> Math.min(k, 63);
        }
        return k >= w ? 0 : x >>> k;
    }

    static long copysign(int t, long a, long b) {
        if (isF32(t)) {
            return Float.floatToRawIntBits(Math.copySign(f(b), f(a))) & 0xffffffffL;
        }
        return Double.doubleToRawLongBits(Math.copySign(d(b), d(a)));
    }

    // ---- unary ---------------------------------------------------------------------------------

    /**
     * abs: the H200 gives an .f32 NaN its canonical NaN, and an .f64 NaN back quieted with its sign
     * and payload, as it does for neg (measured with the contract's ops kernels).
     */
    static long abs(int t, boolean ftz, long a) {
        if (isF32(t)) {
            float x = ftz ? ftz(f(a)) : f(a);
            return Float.isNaN(x) ? CANONICAL_NAN_F32 : Float.floatToRawIntBits(x) & 0x7fffffffL;
        }
        if (isF64(t)) {
            return Double.isNaN(d(a)) ? a | QUIET_F64 : a & 0x7fffffffffffffffL;
        }
        return Math.abs(norm(t, a));
    }

    static long neg(int t, boolean ftz, long a) {
        if (isF32(t)) {
            float x = ftz ? ftz(f(a)) : f(a);
            return Float.isNaN(x) ? CANONICAL_NAN_F32 : (Float.floatToRawIntBits(x) ^ 0x80000000) & 0xffffffffL;
        }
        if (isF64(t)) {
            return Double.isNaN(d(a)) ? a | QUIET_F64 : a ^ 0x8000000000000000L;
        }
        return -norm(t, a);
    }

    static long not(int t, long a) {
        return Insn.cls(t) == PRED ? (a & 1) ^ 1 : ~a;
    }

    static long popc(int t, long a) {
        return Insn.bits(t) == 64 ? Long.bitCount(a) : Integer.bitCount((int) a);
    }

    static long clz(int t, long a) {
        return Insn.bits(t) == 64 ? Long.numberOfLeadingZeros(a) : Integer.numberOfLeadingZeros((int) a);
    }

    static long brev(int t, long a) {
        return Insn.bits(t) == 64 ? Long.reverse(a) : Integer.reverse((int) a) & 0xffffffffL;
    }

    /** The floating unary functions: rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh. */
    static long fun(int op, int t, boolean ftz, long a) {
        if (isF32(t)) {
            float x = ftz ? ftz(f(a)) : f(a);
            float r = switch (op) {
                case Insn.RCP -> 1f / x;
                case Insn.SQRT -> (float) Math.sqrt(x);
                case Insn.RSQRT -> (float) (1d / Math.sqrt(x));
                case Insn.EX2 -> (float) Math.pow(2d, x);
                case Insn.LG2 -> (float) (Math.log(x) / Math.log(2d));
                case Insn.SIN -> (float) Math.sin(x);
                case Insn.COS -> (float) Math.cos(x);
                default -> (float) Math.tanh(x);
            };
            return outF(r, ftz, false);
        }
        double x = ftz ? ftz(d(a)) : d(a);
        double r = switch (op) {
            case Insn.RCP -> 1d / x;
            case Insn.SQRT -> Math.sqrt(x);
            case Insn.RSQRT -> 1d / Math.sqrt(x);
            case Insn.EX2 -> Math.pow(2d, x);
            case Insn.LG2 -> Math.log(x) / Math.log(2d);
            case Insn.SIN -> Math.sin(x);
            case Insn.COS -> Math.cos(x);
            default -> Math.tanh(x);
        };
        return bits(r);
    }

    static long testp(int mode, int t, long a) {
        double x = isF32(t) ? f(a) : d(a);
        boolean sub = isF32(t) ? Math.abs((float) x) < Float.MIN_NORMAL && x != 0 : Math.abs(x) < Double.MIN_NORMAL && x != 0;
        boolean r = switch (mode) {
            case 1 -> Double.isFinite(x);
            case 2 -> Double.isInfinite(x);
            case 3 -> !Double.isNaN(x);
            case 4 -> Double.isNaN(x);
            case 5 -> Double.isFinite(x) && x != 0 && !sub;
            default -> sub;
        };
        return r ? 1 : 0;
    }

    // ---- bit fields ----------------------------------------------------------------------------

    /**
     * bfe. For 32 bits position and length are the low bytes of {@code b} and {@code c}, as PTX
     * states; for 64 bits the H200 takes them as whole unsigned 32-bit values, clamped (a position of
     * 256 extracts nothing where PTX's text would read position 0), and the engine does as the GPU.
     */
    static long bfe(int t, long a, long b, long c) {
        int msb = Insn.bits(t) - 1;
        long pos = msb == 63 ? b & 0xffffffffL : b & 0xff;
        long len = msb == 63 ? c & 0xffffffffL : c & 0xff;
        long x = norm(t, a);
        boolean sgn = signed(t) && len > 0 && ((x >>> Math.min(pos + len - 1, msb)) & 1) != 0;
        long d = 0;
        for (int i = 0; i <= msb; i++) {
            long bit = i < len && pos + i <= msb ? (x >>> (pos + i)) & 1 : (sgn ? 1 : 0);
            d |= bit << i;
        }
        return d;
    }

    /** bfi; position and length as {@link #bfe} reads them (whole values for 64 bits, as the H200 does). */
    static long bfi(int t, long a, long b, long c, long dd) {
        int msb = Insn.bits(t) - 1;
        long pos = msb == 63 ? c & 0xffffffffL : c & 0xff;
        long len = msb == 63 ? dd & 0xffffffffL : dd & 0xff;
        long f = b;
        for (int i = 0; i < len && pos + i <= msb; i++) {
            long bit = (a >>> i) & 1;
            f = (f & ~(1L << (pos + i))) | (bit << (pos + i));
        }
        return f;
    }

    static long prmt(long a, long b, long c) {
        long bytes = (a & 0xffffffffL) | (b << 32);
        long d = 0;
        for (int i = 0; i < 4; i++) {
            int sel = (int) (c >>> (4 * i)) & 0xf;
            long v = (bytes >>> (8 * (sel & 7))) & 0xff;
            if ((sel & 8) != 0) {
                v = (v & 0x80) != 0 ? 0xff : 0;
            }
            d |= v << (8 * i);
        }
        return d;
    }

    static long shf(boolean right, boolean clamp, long a, long b, long c) {
        long n = c & 0xffffffffL;
        n = clamp ? Math.min(n, 32) : n & 31;
        long v = (b << 32) | (a & 0xffffffffL);
        return right ? (v >>> n) & 0xffffffffL : ((v << n) >>> 32) & 0xffffffffL;
    }

    // ---- comparison ----------------------------------------------------------------------------

    static boolean compare(int cmp, int t, boolean ftz, long a, long b) {
        if (Insn.cls(t) == F) {
            double x = isF32(t) ? (ftz ? ftz(f(a)) : f(a)) : d(a);
            double y = isF32(t) ? (ftz ? ftz(f(b)) : f(b)) : d(b);
            boolean nan = Double.isNaN(x) || Double.isNaN(y);
            return switch (cmp) {
                case Insn.EQ -> !nan && x == y;
                case Insn.NE -> !nan && x != y;
                case Insn.LT -> !nan && x < y;
                case Insn.LE -> !nan && x <= y;
                case Insn.GT -> !nan && x > y;
                case Insn.GE -> !nan && x >= y;
                case Insn.EQU -> nan || x == y;
                case Insn.NEU -> nan || x != y;
                case Insn.LTU -> nan || x < y;
                case Insn.LEU -> nan || x <= y;
                case Insn.GTU -> nan || x > y;
                case Insn.GEU -> nan || x >= y;
                case Insn.NUM -> !nan;
                case Insn.NAN -> nan;
                default -> false;
            };
        }
        long x = norm(t, a);
        long y = norm(t, b);
        boolean unsigned = !signed(t);
        int c = unsigned ? Long.compareUnsigned(x, y) : Long.compare(x, y);
        return switch (cmp) {
            case Insn.EQ -> c == 0;
            case Insn.NE -> c != 0;
            case Insn.LT -> c < 0;
            case Insn.LE -> c <= 0;
            case Insn.GT -> c > 0;
            case Insn.GE -> c >= 0;
            case Insn.LO_ -> Long.compareUnsigned(x, y) < 0;
            case Insn.LS -> Long.compareUnsigned(x, y) <= 0;
            case Insn.HI_ -> Long.compareUnsigned(x, y) > 0;
            case Insn.HS -> Long.compareUnsigned(x, y) >= 0;
            default -> false;
        };
    }

    // ---- conversion ----------------------------------------------------------------------------

    /**
     * {@code cvt.rnd.ftz.sat.dtype.atype}. A float NaN converts to an integer as PTX ISA 9.0 says: to 0
     * from {@code .f16} or {@code .f32} into 32 bits or fewer, otherwise to {@code 1 << (width - 1)}.
     *
     * @param mode the rounding ({@link Insn#RN} ... {@link Insn#RPI}) or -1 when none is given
     */
    static long cvt(int dt, int st, int mode, boolean ftz, boolean sat, long a) {
        boolean dF = Insn.cls(dt) == F;
        boolean sF = Insn.cls(st) == F;
        if (!dF && !sF) {
            long v = norm(st, a);
            if (sat) {
                v = clampInt(dt, st, v);
            }
            return norm(dt, v);
        }
        if (sF && !dF) {
            double x = floatValue(st, a, ftz);
            if (Double.isNaN(x)) {
                // PTX ISA 9.0: 0 from .f16/.f32 to 32 bits or fewer, else 1 << (width - 1).
                return Insn.bits(st) < 64 && Insn.bits(dt) < 64 ? 0 : norm(dt, 1L << (Insn.bits(dt) - 1));
            }
            double r = switch (mode) {
                case Insn.RNI -> Math.rint(x);
                case Insn.RMI -> Math.floor(x);
                case Insn.RPI -> Math.ceil(x);
                default -> x < 0 ? Math.ceil(x) : Math.floor(x);
            };
            return toInt(dt, r);
        }
        if (!sF) {
            long v = norm(st, a);
            boolean u64 = st == Insn.type(U, 64) || st == Insn.type(B, 64);
            int rnd = mode < 0 ? Insn.RN : mode;
            if (Insn.bits(dt) == 16) {
                return toHalf(u64 ? unsignedToDouble(v) : (double) v, rnd);
            }
            if (Insn.bits(dt) == 32) {
                float g;
                if (rnd == Insn.RN) {
                    g = u64 ? unsignedToFloat(v) : (float) v;
                } else {
                    g = roundF(u64 ? new BigDecimal(Long.toUnsignedString(v)) : new BigDecimal(v), rnd);
                }
                return outF(g, false, sat);
            }
            double g;
            if (rnd == Insn.RN) {
                g = u64 ? unsignedToDouble(v) : (double) v;
            } else {
                g = roundD(u64 ? new BigDecimal(Long.toUnsignedString(v)) : new BigDecimal(v), rnd);
            }
            return outD(g, false, sat);
        }
        // float to float
        double x = floatValue(st, a, ftz);
        int rnd = mode < 0 ? Insn.RN : mode;
        if (rnd >= Insn.RNI) {
            x = switch (rnd) {
                case Insn.RNI -> Math.rint(x);
                case Insn.RMI -> Math.floor(x);
                case Insn.RPI -> Math.ceil(x);
                default -> x < 0 ? Math.ceil(x) : Math.floor(x);
            };
            rnd = Insn.RN;
        }
        return switch (Insn.bits(dt)) {
            case 16 -> toHalf(x, rnd);
            case 32 -> {
                if (Double.isNaN(x) && Insn.bits(st) == 64 && !sat) {
                    // The H200 narrows an .f64 NaN as Java does: quiet, its sign and the payload's top bits.
                    yield Float.floatToRawIntBits((float) x) & 0xffffffffL;
                }
                float g = Double.isNaN(x) || Double.isInfinite(x) ? (float) x : roundF(x, 0, rnd);
                yield outF(g, ftz, sat);
            }
            default -> outD(x, false, sat);
        };
    }

    /**
     * {@return the f16 bits of {@code x} rounded in direction {@code rnd}} Rounded from the double
     * itself, not through a float (which would round twice); NaN gives the canonical f16 NaN
     * {@code 0x7fff}.
     */
    static long toHalf(double x, int rnd) {
        if (Double.isNaN(x)) {
            return 0x7fff;
        }
        if (x == 0 || Double.isInfinite(x)) {
            return Float.floatToFloat16((float) x) & 0xffffL;
        }
        double ax = Math.abs(x);
        // lo: the largest finite f16 magnitude at or below |x|; lo + 1 is the next one up (0x7c00: infinity).
        int lo = Math.min(0x7bff, Float.floatToFloat16((float) ax) & 0x7fff);
        while (lo > 0 && Float.float16ToFloat((short) lo) > ax) {
            lo--;
        }
        while (lo < 0x7bff && Float.float16ToFloat((short) (lo + 1)) <= ax) {
            lo++;
        }
        double lv = Float.float16ToFloat((short) lo);
        boolean neg = x < 0;
        int mag;
        if (lv == ax) {
            mag = lo;
        } else {
            int hi = lo + 1;
            mag = switch (rnd) {
                case Insn.RZ -> lo;
                case Insn.RM -> neg ? hi : lo;
                case Insn.RP -> neg ? lo : hi;
                default -> {
                    // Both differences are exact (the operands are within a factor of two); past the
                    // largest f16 IEEE rounds as if 65536 came next.
                    double hv = hi == 0x7c00 ? 65536d : Float.float16ToFloat((short) hi);
                    double dl = ax - lv;
                    double dh = hv - ax;
                    yield dl < dh ? lo : dl > dh ? hi : (lo & 1) == 0 ? lo : hi;
                }
            };
        }
        return (neg ? 0x8000L : 0) | mag;
    }

    private static double floatValue(int st, long a, boolean ftz) {
        return switch (Insn.bits(st)) {
            case 16 -> Float.float16ToFloat((short) a);
            case 32 -> ftz ? ftz(f(a)) : f(a);
            default -> d(a);
        };
    }

    private static float unsignedToFloat(long v) {
        return v >= 0 ? (float) v : (float) ((v >>> 1) | (v & 1)) * 2f;
    }

    private static double unsignedToDouble(long v) {
        return v >= 0 ? (double) v : (double) ((v >>> 1) | (v & 1)) * 2d;
    }

    /** {@return an integral double saturated into integer type {@code dt}} */
    private static long toInt(int dt, double r) {
        int w = Insn.bits(dt);
        if (signed(dt)) {
            if (w == 64) {
                return (long) r;
            }
            long lo = -(1L << (w - 1));
            long hi = (1L << (w - 1)) - 1;
            return (long) Math.max(lo, Math.min(hi, r));
        }
        if (r <= 0) {
            return 0;
        }
        if (w == 64) {
            if (r >= 0x1p64) {
                return -1L;
            }
            return r >= 0x1p63 ? (long) (r - 0x1p63) + Long.MIN_VALUE : (long) r;
        }
        long hi = (1L << w) - 1;
        return (long) Math.min(hi, r);
    }

    private static long clampInt(int dt, int st, long v) {
        int w = Insn.bits(dt);
        boolean srcUnsigned64 = Insn.bits(st) == 64 && !signed(st);
        if (signed(dt)) {
            long lo = w == 64 ? Long.MIN_VALUE : -(1L << (w - 1));
            long hi = w == 64 ? Long.MAX_VALUE : (1L << (w - 1)) - 1;
            if (srcUnsigned64 && v < 0) {
                return hi;
            }
            return Math.max(lo, Math.min(hi, v));
        }
        if (!srcUnsigned64 && v < 0) {
            return 0;
        }
        if (w == 64) {
            return v;
        }
        long hi = (1L << w) - 1;
        return srcUnsigned64 ? (Long.compareUnsigned(v, hi) > 0 ? hi : v) : Math.min(hi, v);
    }

    // ---- atomics -------------------------------------------------------------------------------

    /**
     * {@return the value an atomic {@code op} on global memory writes over {@code old}}
     * {@code atom.add.f32} rounds to nearest and flushes subnormals there, as PTX states; {@code .f64}
     * keeps them.
     */
    public static long atom(int op, int t, long old, long b, long c) {
        boolean f32 = isF32(t);
        boolean f64 = isF64(t);
        return switch (op) {
            case Insn.A_ADD -> f32 ? add(t, Insn.RN, true, false, old, b) : f64 ? add(t, Insn.RN, false, false, old, b) : old + b;
            case Insn.A_MIN -> min(t, false, old, b);
            case Insn.A_MAX -> max(t, false, old, b);
            case Insn.A_AND -> old & b;
            case Insn.A_OR -> old | b;
            case Insn.A_XOR -> old ^ b;
            case Insn.A_EXCH -> b;
            case Insn.A_CAS -> norm(t, old) == norm(t, b) ? c : old;
            case Insn.A_INC -> Long.compareUnsigned(norm(t, old), norm(t, b)) >= 0 ? 0 : old + 1;
            case Insn.A_DEC -> norm(t, old) == 0 || Long.compareUnsigned(norm(t, old), norm(t, b)) > 0 ? b : old - 1;
            default -> old;
        };
    }

    /**
     * {@return the value an atomic {@code op} on shared memory writes over {@code old}} As on global
     * memory, except that {@code atom.add.f32} keeps subnormal inputs and results, as PTX states.
     */
    static long atomShared(int op, int t, long old, long b, long c) {
        return op == Insn.A_ADD && isF32(t) ? add(t, Insn.RN, false, false, old, b) : atom(op, t, old, b, c);
    }
}
