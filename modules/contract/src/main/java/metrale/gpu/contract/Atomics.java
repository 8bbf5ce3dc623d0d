// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import metrale.gpu.DevicePtr;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;

/**
 * The atomics part of {@link PtxSemanticsContract}: {@code atomics_global}, {@code atomics_shared}
 * and {@code atomic_add_f32} of {@code ops.cu}, and the Java that says where any order of the
 * threads ends. Every thread applies the same operations, so each final value is a fold in
 * thread order, and each list of returned old values, sorted, is the fold's list sorted.
 */
final class Atomics {

    private static final int BLOCKS = 8;
    private static final int BLOCK = 128;
    private static final int W = 15;
    private static final int D = 11;
    private static final int OLDS = 5;
    private static final long M32 = 0xffffffffL;

    /** Where the 32-bit counters start. */
    private static final int[] W0 = {
        12345, 7, 0, 0, 0x80000000, 0x7fffffff, 0xffffffff, 0, 0x5a5a5a5a, 40, 3, 99, 0xdeadbeef,
        Float.floatToRawIntBits(0.5f), 1000,
    };

    /** Where the 64-bit counters start. */
    private static final long[] D0 = {
        1, Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, -1, 0, 0x0123456789abcdefL, 5, 0xfeedL, Double.doubleToRawLongBits(0.25),
    };

    private static final String[] W_NAMES = {
        "atomicAdd(int)", "atomicAdd(unsigned, 1)", "atomicMax(int)", "atomicMin(int)", "atomicMax(unsigned)",
        "atomicMin(unsigned)", "atomicAnd", "atomicOr", "atomicXor", "atomicInc(37)", "atomicDec(29)",
        "atomicCAS loop", "atomicExch", "atomicAdd(float)", "atomicSub(int)",
    };

    private static final String[] D_NAMES = {
        "atomicAdd(ull)", "atomicMax(ll)", "atomicMin(ll)", "atomicMax(ull)", "atomicMin(ull)", "atomicAnd(ull)",
        "atomicOr(ull)", "atomicXor(ull)", "atomicCAS loop (ull)", "atomicExch(ull)", "atomicAdd(double)",
    };

    private Atomics() {
    }

    /** The finals and the sorted returned values of the threads {@code from} to {@code to - 1}, folded in order. */
    private record Fold(int[] w, long[] d, long[][] olds) {
    }

    private static Fold fold(int[] vals, int from, int to) {
        int[] w = W0.clone();
        long[] d = D0.clone();
        int k = to - from;
        long[][] olds = new long[OLDS][k];
        float fsum = Float.intBitsToFloat(w[13]);
        double dsum = Double.longBitsToDouble(d[10]);
        for (int t = from; t < to; t++) {
            int v = vals[t];
            int j = t - from;
            w[0] += v;
            olds[0][j] = w[1] & M32;
            w[1] += 1;
            w[2] = Math.max(w[2], v);
            w[3] = Math.min(w[3], v);
            w[4] = Integer.compareUnsigned(w[4], v) >= 0 ? w[4] : v;
            w[5] = Integer.compareUnsigned(w[5], v) <= 0 ? w[5] : v;
            w[6] &= v;
            w[7] |= v;
            w[8] ^= v;
            olds[1][j] = w[9] & M32;
            w[9] = Integer.compareUnsigned(w[9], 37) >= 0 ? 0 : w[9] + 1;
            olds[2][j] = w[10] & M32;
            w[10] = w[10] == 0 || Integer.compareUnsigned(w[10], 29) > 0 ? 29 : w[10] - 1;
            w[11] += v;
            olds[3][j] = w[12] & M32;
            w[12] = v;
            // Multiples of 0.25 below 2^17: exact in any order.
            fsum += (v & 255) * 0.25f;
            w[14] -= v;

            long wide = (v & M32) * 0x100000001L;
            long keyed = ((long) v << 32) | t;
            d[0] += wide;
            d[1] = Math.max(d[1], keyed);
            d[2] = Math.min(d[2], keyed);
            d[3] = Long.compareUnsigned(d[3], keyed) >= 0 ? d[3] : keyed;
            d[4] = Long.compareUnsigned(d[4], keyed) <= 0 ? d[4] : keyed;
            d[5] &= ~(1L << (t & 63));
            d[6] |= 1L << (t & 63);
            d[7] ^= (long) v * 0x9e3779b97f4a7c15L;
            d[8] += v;
            olds[4][j] = d[9];
            d[9] = wide + t;
            // Integers and a quarter, below 2^42: exact in any order.
            dsum += v;
        }
        w[13] = Float.floatToRawIntBits(fsum);
        d[10] = Double.doubleToRawLongBits(dsum);
        for (long[] o : olds) {
            Arrays.sort(o);
        }
        return new Fold(w, d, olds);
    }

    /** Runs {@code atomics_global} or {@code atomics_shared} and checks every final and returned value. */
    static void check(PtxSemanticsContract c, boolean shared) {
        int n = BLOCKS * BLOCK;
        SplittableRandom r = new SplittableRandom(PtxInputs.SEED + (shared ? 7 : 6));
        int[] vals = new int[n];
        for (int i = 0; i < n; i++) {
            vals[i] = switch (i % 5) {
                case 0 -> (int) PtxInputs.INT_EDGES[r.nextInt(PtxInputs.INT_EDGES.length)];
                case 1 -> r.nextInt(-1000, 1000);
                default -> r.nextInt();
            };
        }
        int sets = shared ? BLOCKS : 1;
        int[] w = new int[W * sets];
        long[] d = new long[D * sets];
        long[] olds = new long[OLDS * n];
        DevicePtr pw = c.gpu.alloc(4L * W * sets);
        DevicePtr pd = c.gpu.alloc(8L * D * sets);
        DevicePtr pv = c.gpu.alloc(4L * n);
        DevicePtr po = c.gpu.alloc(8L * OLDS * n);
        DevicePtr pw0 = c.gpu.alloc(4L * W);
        DevicePtr pd0 = c.gpu.alloc(8L * D);
        try {
            c.gpu.copyH2D(vals, pv);
            if (shared) {
                c.gpu.copyH2D(W0, pw0);
                c.gpu.copyH2D(D0, pd0);
                c.gpu.launch(c.gpu.kernel(PtxSemanticsContract.OPS_MODULE, "atomics_shared"), LaunchConfig.of(BLOCKS, BLOCK),
                        Stream.DEFAULT, c.args.clear().ptr(pw0).ptr(pd0).ptr(pw).ptr(pd).ptr(pv).ptr(po).i32(n));
            } else {
                c.gpu.copyH2D(W0, pw);
                c.gpu.copyH2D(D0, pd);
                c.gpu.launch(c.gpu.kernel(PtxSemanticsContract.OPS_MODULE, "atomics_global"), LaunchConfig.of(BLOCKS, BLOCK),
                        Stream.DEFAULT, c.args.clear().ptr(pw).ptr(pd).ptr(pv).ptr(po).i32(n));
            }
            c.gpu.copyD2H(pw, w);
            c.gpu.copyD2H(pd, d);
            c.gpu.copyD2H(po, olds);
        } finally {
            for (DevicePtr p : new DevicePtr[] {pw, pd, pv, po, pw0, pd0}) {
                c.gpu.free(p);
            }
        }
        String where = shared ? "shared" : "global";
        for (int s = 0; s < sets; s++) {
            int from = shared ? s * BLOCK : 0;
            int to = shared ? from + BLOCK : n;
            Fold want = fold(vals, from, to);
            String at = where + (shared ? " block " + s : "");
            for (int k = 0; k < W; k++) {
                if (k == 12) {
                    continue;
                }
                assertThat(hex(w[s * W + k] & M32)).as("%s %s: the final value", at, W_NAMES[k]).isEqualTo(hex(want.w[k] & M32));
            }
            for (int k = 0; k < D; k++) {
                if (k == 9) {
                    continue;
                }
                assertThat(hex(d[s * D + k])).as("%s %s: the final value", at, D_NAMES[k]).isEqualTo(hex(want.d[k]));
            }
            int[] oldIdx = {1, 9, 10};
            for (int j = 0; j < 3; j++) {
                assertThat(sorted(olds, j, n, from, to)).as("%s %s: the returned values, sorted", at, W_NAMES[oldIdx[j]])
                        .containsExactly(want.olds[j]);
            }
            // An exchange returns each value but the last one written, and the start: the returned values
            // with the final value are the written values with the start.
            long[] in32 = new long[to - from + 1];
            long[] out32 = Arrays.copyOf(sorted(olds, 3, n, from, to), to - from + 1);
            long[] in64 = new long[to - from + 1];
            long[] out64 = Arrays.copyOf(sorted(olds, 4, n, from, to), to - from + 1);
            for (int t = from; t < to; t++) {
                in32[t - from] = vals[t] & M32;
                in64[t - from] = (vals[t] & M32) * 0x100000001L + t;
            }
            in32[to - from] = W0[12] & M32;
            in64[to - from] = D0[9];
            out32[to - from] = w[s * W + 12] & M32;
            out64[to - from] = d[s * D + 9];
            Arrays.sort(in32);
            Arrays.sort(out32);
            Arrays.sort(in64);
            Arrays.sort(out64);
            assertThat(out32).as("%s atomicExch: returned values and the final one", at).containsExactly(in32);
            assertThat(out64).as("%s atomicExch(ull): returned values and the final one", at).containsExactly(in64);
        }
    }

    private static long[] sorted(long[] olds, int k, int n, int from, int to) {
        long[] r = Arrays.copyOfRange(olds, k * n + from, k * n + to);
        Arrays.sort(r);
        return r;
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /** Runs {@code atomic_add_f32}: one counter per thread, on global and on shared memory. */
    static void checkFloatAdd(PtxSemanticsContract c) {
        PtxInputs.F32 in = PtxInputs.f32(2000);
        int total = in.n();
        float[] a = new float[total];
        float[] b = new float[total];
        int n = 0;
        for (int i = 0; i < total; i++) {
            // NaN sums are left out: which NaN an atomic returns is not what this checks.
            if (!Float.isNaN(in.a()[i]) && !Float.isNaN(in.b()[i]) && !Float.isNaN(in.a()[i] + in.b()[i])) {
                a[n] = in.a()[i];
                b[n] = in.b()[i];
                n++;
            }
        }
        a = Arrays.copyOf(a, n);
        b = Arrays.copyOf(b, n);
        int[] g = new int[n];
        int[] s = new int[n];
        int[] olds = new int[2 * n];
        DevicePtr pg = c.gpu.alloc(4L * n);
        DevicePtr pa = c.gpu.alloc(4L * n);
        DevicePtr pb = c.gpu.alloc(4L * n);
        DevicePtr ps = c.gpu.alloc(4L * n);
        DevicePtr po = c.gpu.alloc(8L * n);
        try {
            c.gpu.copyH2D(a, pg);
            c.gpu.copyH2D(a, pa);
            c.gpu.copyH2D(b, pb);
            c.gpu.launch(c.gpu.kernel(PtxSemanticsContract.OPS_MODULE, "atomic_add_f32"), LaunchConfig.forElements(n, BLOCK),
                    Stream.DEFAULT, c.args.clear().ptr(pg).ptr(pa).ptr(pb).ptr(ps).ptr(po).i32(n));
            c.gpu.copyD2H(pg, g);
            c.gpu.copyD2H(ps, s);
            c.gpu.copyD2H(po, olds);
        } finally {
            for (DevicePtr p : new DevicePtr[] {pg, pa, pb, ps, po}) {
                c.gpu.free(p);
            }
        }
        PtxSemanticsContract.Diff d = c.new Diff("atomic_add_f32");
        for (int i = 0; i < n; i++) {
            String at = PtxSemanticsContract.f(a[i]) + " += " + PtxSemanticsContract.f(b[i]);
            long old = Float.floatToRawIntBits(a[i]) & M32;
            d.eq("atomicAdd(float) on global memory", at, Float.floatToRawIntBits(ftz(ftz(a[i]) + ftz(b[i]))) & M32, g[i] & M32);
            d.eq("atomicAdd(float) on shared memory", at, Float.floatToRawIntBits(a[i] + b[i]) & M32, s[i] & M32);
            d.eq("atomicAdd(float) on global memory, returned", at, old, olds[i] & M32);
            d.eq("atomicAdd(float) on shared memory, returned", at, old, olds[n + i] & M32);
        }
        d.done();
    }

    /** {@return {@code x}, or a zero of its sign where it is subnormal} */
    private static float ftz(float x) {
        return x != 0 && Math.abs(x) < Float.MIN_NORMAL ? Math.copySign(0f, x) : x;
    }
}
