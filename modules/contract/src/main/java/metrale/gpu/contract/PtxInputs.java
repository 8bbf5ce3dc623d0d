// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The inputs {@link PtxSemanticsContract} feeds the kernels of {@code ops.cu}: every pair of a
 * list of edge values (zeros, subnormals, the normal boundary, ones and their neighbours, the
 * largest values, infinities, NaNs with and without payloads, the integer extremes), then seeded
 * random values built to land on what rounding gets wrong: exact halfway points, cancellations,
 * products of short mantissas, results that turn subnormal or overflow.
 */
final class PtxInputs {

    /** The seed of every random input: the same inputs on every backend and every run. */
    static final long SEED = 0x5eed_0f_9a5L;

    private PtxInputs() {
    }

    /** Three operand arrays of equal length. */
    record F32(float[] a, float[] b, float[] c) {
        int n() {
            return a.length;
        }
    }

    /** Three operand arrays of equal length. */
    record F64(double[] a, double[] b, double[] c) {
        int n() {
            return a.length;
        }
    }

    /** Three operand arrays of equal length. */
    record I64(long[] a, long[] b, long[] c) {
        int n() {
            return a.length;
        }
    }

    static final float[] F32_EDGES = {
        0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, 2 * Float.MIN_VALUE, Float.MIN_NORMAL, -Float.MIN_NORMAL,
        Math.nextDown(Float.MIN_NORMAL), -Math.nextDown(Float.MIN_NORMAL), Math.nextUp(Float.MIN_NORMAL),
        1f, -1f, Math.nextUp(1f), Math.nextDown(1f), -Math.nextUp(1f), 1.5f, -1.5f, 2f, 3f, 0.5f, -0.25f,
        0.1f, 1f / 3, -1f / 3, 0x1p-24f, 0x1.8p-24f, 0x1p-25f, 0x1p23f, 0x1p24f, 0x1.000002p24f, 1e-30f, -7e-39f,
        Float.MAX_VALUE, -Float.MAX_VALUE, Math.nextDown(Float.MAX_VALUE), 0x1p127f, 0x1p-126f * 3,
        Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
        Float.intBitsToFloat(0x7fc00000), Float.intBitsToFloat(0xffc00000), Float.intBitsToFloat(0x7f800001),
        Float.intBitsToFloat(0x7fa00123), Float.intBitsToFloat(0xffffffff),
    };

    static final double[] F64_EDGES = {
        0d, -0d, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, -Double.MIN_NORMAL,
        Math.nextDown(Double.MIN_NORMAL), 1d, -1d, Math.nextUp(1d), Math.nextDown(1d), 1.5d, 2d, 3d, 0.5d, 0.1d,
        1d / 3, 0x1p-53, 0x1.8p-53, 0x1p-54, 0x1p52, 0x1p53, 1e-300, -3e-310, Double.MAX_VALUE, -Double.MAX_VALUE,
        0x1p1023, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.longBitsToDouble(0x7ff8000000000000L),
        Double.longBitsToDouble(0xfff8000000000000L), Double.longBitsToDouble(0x7ff0000000000001L),
        Double.longBitsToDouble(0x7ff8dead0000beefL),
    };

    /** Doubles that convert at the edges of the integer types and of float's range. */
    static final double[] CONVERT_EDGES = {
        0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, 2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0,
        -2147483648.5, -2147483649.0, 4294967295.0, 4294967295.5, 4294967296.0, 0x1p63, -0x1p63, 0x1p64,
        Math.nextDown(0x1p64), Math.nextDown(0x1p63), -Math.nextDown(0x1p63), Math.nextUp(-0x1p63), 1e19, -1e19,
        3.4028235677973366e38, 3.4028235677973362e38, 3.402823567797337e38, 0x1.fffffefffffffp127, 0x1.ffffffp127,
        0x1p-149, 0x1p-150, 0x1.0000000000001p-150, 0x1.8p-149, 0x1.fffffcp-127, -0x1p-150, 1e-50, -1e-50,
        1.0000000596046448, 1.0000001788139343, 0.1, -0.1,
    };

    static final long[] INT_EDGES = {
        0, 1, -1, 2, -2, 3, 7, 8, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff,
        0x10000, 0x7fffffffL, 0x80000000L, 0xffffffffL, 0x100000000L, Integer.MIN_VALUE, Integer.MAX_VALUE,
        Integer.MIN_VALUE + 1L, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1, 0xffffffff00000000L,
        0x00ff00ff00ff00ffL, 0x0123456789abcdefL, 0xfedcba9876543210L, 0x1000001L, 0xffffffL, 0x800000L,
        0x0000000080000001L, (1L << 24) + 1, (1L << 53) + 1, -(1L << 53) - 1, 0x7ffffffffffffc00L, 0x7ffffffffffffdffL,
    };

    // ---- floats --------------------------------------------------------------------------------

    /** {@return every ordered pair of edges, then {@code random} random triples} */
    static F32 f32(int random) {
        float[] e = F32_EDGES;
        int pairs = e.length * e.length;
        int n = pairs + random;
        float[] a = new float[n];
        float[] b = new float[n];
        float[] c = new float[n];
        for (int i = 0; i < e.length; i++) {
            for (int j = 0; j < e.length; j++) {
                int k = i * e.length + j;
                a[k] = e[i];
                b[k] = e[j];
                c[k] = e[(i * 7 + j * 3) % e.length];
            }
        }
        SplittableRandom r = new SplittableRandom(SEED);
        for (int k = pairs; k < n; k++) {
            float x = randomFloat(r);
            float y = partner(r, x);
            a[k] = x;
            b[k] = y;
            c[k] = addend(r, x, y);
        }
        return new F32(a, b, c);
    }

    static float randomFloat(SplittableRandom r) {
        float sign = r.nextBoolean() ? 1f : -1f;
        return switch (r.nextInt(8)) {
            case 0, 1 -> Float.intBitsToFloat(r.nextInt());
            case 2, 3 -> sign * Math.scalb(1f + r.nextInt(1 << 23) * 0x1p-23f, r.nextInt(-12, 13));
            case 4 -> Float.intBitsToFloat(r.nextInt() & 0x807fffff);
            case 5 -> sign * Math.scalb(1f + r.nextInt(1 << 23) * 0x1p-23f, r.nextInt(120, 128));
            case 6 -> r.nextInt(-1000, 1001);
            default -> sign * Math.scalb(1f + r.nextInt(1 << 23) * 0x1p-23f, r.nextInt(-127, -118));
        };
    }

    /** {@return a second operand for {@code x} that often puts a sum or product on a halfway point} */
    private static float partner(SplittableRandom r, float x) {
        float sign = r.nextBoolean() ? 1f : -1f;
        int ex = Float.isFinite(x) && x != 0 ? Math.getExponent(x) : 0;
        return switch (r.nextInt(6)) {
            case 0, 1 -> randomFloat(r);
            // A sum on or near a halfway point of x's ulp.
            case 2 -> sign * Math.scalb((float) (1 + 2 * r.nextInt(4)), ex - 24 - r.nextInt(3));
            // A near-cancellation.
            case 3 -> -x + sign * Math.scalb(1f, ex - 20 - r.nextInt(8));
            // Short mantissas: the product's 24th and 25th bits decide.
            case 4 -> sign * Math.scalb(1f + r.nextInt(1 << 13) * 0x1p-13f, r.nextInt(-8, 9));
            // Products that turn subnormal or overflow.
            default -> sign * Math.scalb(1f + r.nextInt(1 << 23) * 0x1p-23f, -ex + (r.nextBoolean() ? -128 : 127));
        };
    }

    /** {@return an addend for an fma of {@code x * y}: random, the product's negation, or near its rounding error} */
    private static float addend(SplittableRandom r, float x, float y) {
        float p = x * y;
        return switch (r.nextInt(4)) {
            case 0 -> randomFloat(r);
            case 1 -> -p;
            case 2 -> Float.isFinite(p) && p != 0 ? Math.scalb(r.nextBoolean() ? 1f : -1f, Math.getExponent(p) - 24 - r.nextInt(4)) : 0f;
            default -> (float) r.nextInt(-8, 9);
        };
    }

    /** {@return every ordered pair of edges, then {@code random} random triples} */
    static F64 f64(int random) {
        double[] e = F64_EDGES;
        int pairs = e.length * e.length;
        int n = pairs + random;
        double[] a = new double[n];
        double[] b = new double[n];
        double[] c = new double[n];
        for (int i = 0; i < e.length; i++) {
            for (int j = 0; j < e.length; j++) {
                int k = i * e.length + j;
                a[k] = e[i];
                b[k] = e[j];
                c[k] = e[(i * 5 + j * 3) % e.length];
            }
        }
        SplittableRandom r = new SplittableRandom(SEED + 1);
        for (int k = pairs; k < n; k++) {
            double x = randomDouble(r);
            double y;
            int ex = Double.isFinite(x) && x != 0 ? Math.getExponent(x) : 0;
            y = switch (r.nextInt(4)) {
                case 0 -> randomDouble(r);
                case 1 -> Math.scalb((double) (1 + 2 * r.nextInt(4)), ex - 53 - r.nextInt(3));
                case 2 -> -x + Math.scalb(1d, ex - 48 - r.nextInt(8));
                default -> Math.scalb(1d + r.nextInt(1 << 27) * 0x1p-27, r.nextInt(-8, 9));
            };
            a[k] = x;
            b[k] = y;
            c[k] = r.nextBoolean() ? -(x * y) : randomDouble(r);
        }
        return new F64(a, b, c);
    }

    static double randomDouble(SplittableRandom r) {
        double sign = r.nextBoolean() ? 1d : -1d;
        return switch (r.nextInt(6)) {
            case 0, 1 -> Double.longBitsToDouble(r.nextLong());
            case 2, 3 -> sign * Math.scalb(1d + (r.nextLong() >>> 12) * 0x1p-52, r.nextInt(-20, 21));
            case 4 -> Double.longBitsToDouble(r.nextLong() & 0x800fffffffffffffL);
            default -> sign * Math.scalb(1d + (r.nextLong() >>> 12) * 0x1p-52, r.nextInt(-1030, -1010));
        };
    }

    /** {@return floats for the conversions: the float edges, the conversion edges that are floats, and random ones} */
    static float[] f32Converts(int random) {
        SplittableRandom r = new SplittableRandom(SEED + 2);
        float[] out = Arrays.copyOf(F32_EDGES, F32_EDGES.length + 2 * CONVERT_EDGES.length + random);
        int k = F32_EDGES.length;
        for (double d : CONVERT_EDGES) {
            float f = (float) d;
            out[k++] = f;
            out[k++] = Math.nextUp(f);
        }
        while (k < out.length) {
            out[k++] = switch (r.nextInt(4)) {
                case 0 -> randomFloat(r);
                // Halves of integers and values around the integer types' limits.
                case 1 -> (r.nextInt(-20000, 20000) + 0.5f) * (r.nextBoolean() ? 1f : 0.25f);
                case 2 -> Math.scalb(r.nextBoolean() ? 1f : -1f, r.nextInt(20, 66)) * (1f + r.nextInt(8) * 0x1p-23f);
                // Around the halves' subnormal and overflow boundaries, and their halfway points.
                default -> Math.scalb(1f + r.nextInt(1 << 23) * 0x1p-23f, r.nextInt(-26, 17)) * (r.nextBoolean() ? 1f : -1f);
            };
        }
        return out;
    }

    /** {@return doubles for the conversions: the edges of both lists and random ones} */
    static double[] f64Converts(int random) {
        SplittableRandom r = new SplittableRandom(SEED + 3);
        double[] out = Arrays.copyOf(F64_EDGES, F64_EDGES.length + 2 * CONVERT_EDGES.length + random);
        int k = F64_EDGES.length;
        for (double d : CONVERT_EDGES) {
            out[k++] = d;
            out[k++] = -d;
        }
        while (k < out.length) {
            out[k++] = switch (r.nextInt(4)) {
                case 0 -> randomDouble(r);
                case 1 -> r.nextInt(-2000000, 2000000) + 0.5 * r.nextInt(3);
                case 2 -> Math.scalb(r.nextBoolean() ? 1d : -1d, r.nextInt(28, 66)) * (1d + r.nextInt(64) * 0x1p-52);
                // Doubles a float cannot hold, around its halfway points and its subnormals.
                default -> Math.scalb(1d + (r.nextLong() >>> 12) * 0x1p-52, r.nextInt(-152, 129)) * (r.nextBoolean() ? 1 : -1);
            };
        }
        return out;
    }

    // ---- integers ------------------------------------------------------------------------------

    /** {@return every ordered pair of integer edges (c from the edges too), then random triples} */
    static I64 ints(int random) {
        long[] e = INT_EDGES;
        int pairs = e.length * e.length;
        int n = pairs + random;
        long[] a = new long[n];
        long[] b = new long[n];
        long[] c = new long[n];
        for (int i = 0; i < e.length; i++) {
            for (int j = 0; j < e.length; j++) {
                int k = i * e.length + j;
                a[k] = e[i];
                b[k] = e[j];
                c[k] = e[(i * 11 + j * 5) % e.length];
            }
        }
        SplittableRandom r = new SplittableRandom(SEED + 4);
        for (int k = pairs; k < n; k++) {
            a[k] = randomLong(r);
            b[k] = r.nextInt(3) == 0 ? r.nextInt(0, 80) : randomLong(r);
            c[k] = r.nextInt(3) == 0 ? r.nextInt(0, 1 << 16) : randomLong(r);
        }
        return new I64(a, b, c);
    }

    static long randomLong(SplittableRandom r) {
        return switch (r.nextInt(5)) {
            case 0, 1 -> r.nextLong();
            case 2 -> r.nextInt();
            case 3 -> r.nextLong() >>> r.nextInt(64);
            default -> r.nextInt(-300, 300);
        };
    }

    /** {@return integers for the integer-to-float conversions: edges, their neighbours, random ones} */
    static long[] intConverts(int random) {
        SplittableRandom r = new SplittableRandom(SEED + 5);
        long[] out = new long[3 * INT_EDGES.length + random];
        int k = 0;
        for (long v : INT_EDGES) {
            out[k++] = v;
            out[k++] = v + 1;
            out[k++] = v - 1;
        }
        while (k < out.length) {
            long v = randomLong(r);
            // Some integers that are odd multiples of a power of two: ties between floats.
            out[k++] = r.nextBoolean() ? v : (v | 1) << r.nextInt(40) >> r.nextInt(8);
        }
        return out;
    }
}
