// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.math.BigDecimal;

/**
 * Reference rounding for the float tests, written apart from the engine: an exact value (a
 * {@link BigDecimal}) rounded to a float or double in one of IEEE's four directions, found by
 * stepping from a nearby float until the exact value lies between two neighbours.
 */
final class Exact {

    static final String[] MODES = {"rn", "rz", "rm", "rp"};

    private Exact() {
    }

    /**
     * {@return {@code x} rounded to a float in direction {@code mode} ("rn", "rz", "rm", "rp")}
     * {@code negativeZero} gives the sign of a zero result when {@code x} is zero.
     */
    static float toFloat(BigDecimal x, String mode, boolean negativeZero) {
        if (x.signum() == 0) {
            return negativeZero ? -0f : 0f;
        }
        boolean neg = x.signum() < 0;
        BigDecimal ax = x.abs();
        // lo <= |x| < hi, lo and hi adjacent non-negative floats (hi possibly infinity).
        float lo = ax.compareTo(new BigDecimal(Float.MAX_VALUE)) >= 0 ? Float.MAX_VALUE : Math.abs(ax.floatValue());
        while (lo > 0 && new BigDecimal(lo).compareTo(ax) > 0) {
            lo = Math.nextDown(lo);
        }
        while (lo < Float.MAX_VALUE && new BigDecimal(Math.nextUp(lo)).compareTo(ax) <= 0) {
            lo = Math.nextUp(lo);
        }
        float hi = Math.nextUp(lo);
        float mag;
        if (new BigDecimal(lo).compareTo(ax) == 0) {
            mag = lo;
        } else {
            mag = switch (mode) {
                case "rz" -> lo;
                case "rm" -> neg ? hi : lo;
                case "rp" -> neg ? lo : hi;
                default -> {
                    // IEEE's overflow threshold rounds as if the next float after MAX_VALUE were 2^128.
                    BigDecimal hv = Float.isInfinite(hi) ? new BigDecimal(2).pow(128) : new BigDecimal(hi);
                    int c = ax.subtract(new BigDecimal(lo)).compareTo(hv.subtract(ax));
                    yield c < 0 ? lo : c > 0 ? hi : (Float.floatToRawIntBits(lo) & 1) == 0 ? lo : hi;
                }
            };
        }
        return neg ? -mag : mag;
    }

    /** {@return {@code x} rounded to a double in direction {@code mode}; as {@link #toFloat}} */
    static double toDouble(BigDecimal x, String mode, boolean negativeZero) {
        if (x.signum() == 0) {
            return negativeZero ? -0d : 0d;
        }
        boolean neg = x.signum() < 0;
        BigDecimal ax = x.abs();
        double lo = ax.compareTo(new BigDecimal(Double.MAX_VALUE)) >= 0 ? Double.MAX_VALUE : Math.abs(ax.doubleValue());
        while (lo > 0 && new BigDecimal(lo).compareTo(ax) > 0) {
            lo = Math.nextDown(lo);
        }
        while (lo < Double.MAX_VALUE && new BigDecimal(Math.nextUp(lo)).compareTo(ax) <= 0) {
            lo = Math.nextUp(lo);
        }
        double hi = Math.nextUp(lo);
        double mag;
        if (new BigDecimal(lo).compareTo(ax) == 0) {
            mag = lo;
        } else {
            mag = switch (mode) {
                case "rz" -> lo;
                case "rm" -> neg ? hi : lo;
                case "rp" -> neg ? lo : hi;
                default -> {
                    BigDecimal hv = Double.isInfinite(hi) ? new BigDecimal(2).pow(1024) : new BigDecimal(hi);
                    int c = ax.subtract(new BigDecimal(lo)).compareTo(hv.subtract(ax));
                    yield c < 0 ? lo : c > 0 ? hi : (Double.doubleToRawLongBits(lo) & 1) == 0 ? lo : hi;
                }
            };
        }
        return neg ? -mag : mag;
    }

    /** {@return the f16 bits of {@code x} (exact) rounded in direction {@code mode}} */
    static int toHalf(BigDecimal x, String mode) {
        if (x.signum() == 0) {
            return 0;
        }
        boolean neg = x.signum() < 0;
        BigDecimal ax = x.abs();
        int lo = Math.min(0x7bff, Float.floatToFloat16(ax.floatValue()) & 0x7fff);
        while (lo > 0 && new BigDecimal(Float.float16ToFloat((short) lo)).compareTo(ax) > 0) {
            lo--;
        }
        while (lo < 0x7bff && new BigDecimal(Float.float16ToFloat((short) (lo + 1))).compareTo(ax) <= 0) {
            lo++;
        }
        int mag;
        BigDecimal lv = new BigDecimal(Float.float16ToFloat((short) lo));
        if (lv.compareTo(ax) == 0) {
            mag = lo;
        } else {
            int hi = lo + 1;
            mag = switch (mode) {
                case "rz" -> lo;
                case "rm" -> neg ? hi : lo;
                case "rp" -> neg ? lo : hi;
                default -> {
                    BigDecimal hv = hi == 0x7c00 ? new BigDecimal(65536) : new BigDecimal(Float.float16ToFloat((short) hi));
                    int c = ax.subtract(lv).compareTo(hv.subtract(ax));
                    yield c < 0 ? lo : c > 0 ? hi : (lo & 1) == 0 ? lo : hi;
                }
            };
        }
        return (neg ? 0x8000 : 0) | mag;
    }

    /** {@return the sign of an exact-zero sum in direction {@code mode}: IEEE's rules} */
    static boolean zeroSumNegative(boolean aNeg, boolean bNeg, boolean bothZero, String mode) {
        if (bothZero) {
            return mode.equals("rm") ? aNeg || bNeg : aNeg && bNeg;
        }
        return mode.equals("rm");
    }
}
