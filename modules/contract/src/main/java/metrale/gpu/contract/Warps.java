// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.util.SplittableRandom;
import metrale.gpu.DevicePtr;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;

/**
 * The warp part of {@link PtxSemanticsContract}: {@code warp_ops} and {@code warp_partial} of
 * {@code ops.cu}, checked against the CUDA Programming Guide's description of each intrinsic. A
 * shuffle within segments of {@code width} lanes reads lane {@code srcLane % width} of its own
 * segment ({@code __shfl_sync}); {@code lane - delta}, unless that lies before its segment
 * ({@code __shfl_up_sync}); {@code lane + delta}, unless that lies past its segment
 * ({@code __shfl_down_sync}); {@code lane ^ laneMask}, unless that lies in a later segment
 * ({@code __shfl_xor_sync}, which may read an earlier one). Where a shuffle reads no lane, the
 * lane keeps its own value.
 */
final class Warps {

    private static final int THREADS = 256;
    private static final int RESULTS = 27;
    private static final long M32 = 0xffffffffL;

    private Warps() {
    }

    /** Runs {@code warp_ops} over eight whole warps and checks every lane's 27 results. */
    static void check(PtxSemanticsContract c) {
        SplittableRandom r = new SplittableRandom(PtxInputs.SEED + 8);
        int[] in = new int[THREADS];
        int[] sel = new int[THREADS];
        for (int t = 0; t < THREADS; t++) {
            int w = t / 32;
            int v = r.nextInt();
            // Warp 0: every low byte nonzero (__all_sync true); warp 1: every one zero (__any_sync true).
            in[t] = switch (w % 4) {
                case 0 -> v | 0x11;
                case 1 -> v & ~0xff;
                default -> v;
            };
            sel[t] = switch (w) {
                case 2 -> r.nextInt(0, 64);
                case 3 -> t % 32;
                default -> r.nextInt();
            };
        }
        long[] out = new long[RESULTS * THREADS];
        DevicePtr pi = c.gpu.alloc(4L * THREADS);
        DevicePtr ps = c.gpu.alloc(4L * THREADS);
        DevicePtr po = c.gpu.alloc(4L * RESULTS * THREADS);
        try {
            c.gpu.copyH2D(in, pi);
            c.gpu.copyH2D(sel, ps);
            c.gpu.launch(c.gpu.kernel(PtxSemanticsContract.OPS_MODULE, "warp_ops"), LaunchConfig.of(2, THREADS / 2),
                    Stream.DEFAULT, c.args.clear().ptr(pi).ptr(ps).ptr(po).i32(THREADS));
            int[] w = new int[RESULTS * THREADS];
            c.gpu.copyD2H(po, w);
            for (int i = 0; i < w.length; i++) {
                out[i] = w[i] & M32;
            }
        } finally {
            c.gpu.free(pi);
            c.gpu.free(ps);
            c.gpu.free(po);
        }
        PtxSemanticsContract.Diff d = c.new Diff("warp_ops");
        String[] names = {
            "__shfl_sync w32", "__shfl_sync w16", "__shfl_sync w8", "__shfl_up_sync w32", "__shfl_up_sync w16",
            "__shfl_up_sync w8", "__shfl_down_sync w32", "__shfl_down_sync w16", "__shfl_down_sync w8",
            "__shfl_xor_sync w32", "__shfl_xor_sync w16", "__shfl_xor_sync w8", "__ballot_sync", "__all_sync",
            "__any_sync", "__activemask", "__reduce_add_sync", "__reduce_min_sync(unsigned)",
            "__reduce_max_sync(unsigned)", "__reduce_min_sync(int)", "__reduce_max_sync(int)", "__reduce_and_sync",
            "__reduce_or_sync", "__reduce_xor_sync", "__shfl_xor_sync(0xffff) in lanes 0-15",
            "64-bit __shfl_sync, low half", "64-bit __shfl_sync, high half",
        };
        for (int base = 0; base < THREADS; base += 32) {
            int[] v = new int[32];
            int[] s = new int[32];
            System.arraycopy(in, base, v, 0, 32);
            System.arraycopy(sel, base, s, 0, 32);
            int ballot = 0;
            boolean all = true;
            boolean any = false;
            int add = 0;
            int and = -1;
            int or = 0;
            int xor = 0;
            int minU = -1;
            int maxU = 0;
            int minS = Integer.MAX_VALUE;
            int maxS = Integer.MIN_VALUE;
            for (int l = 0; l < 32; l++) {
                ballot |= ((v[l] >>> 8) & 1) << l;
                all &= (v[l] & 255) != 0;
                any |= (v[l] & 255) == 0;
                add += v[l];
                and &= v[l];
                or |= v[l];
                xor ^= v[l];
                minU = Integer.compareUnsigned(v[l], minU) < 0 ? v[l] : minU;
                maxU = Integer.compareUnsigned(v[l], maxU) > 0 ? v[l] : maxU;
                minS = Math.min(minS, v[l]);
                maxS = Math.max(maxS, v[l]);
            }
            for (int l = 0; l < 32; l++) {
                int[] want = new int[RESULTS];
                int[] widths = {32, 16, 8};
                for (int k = 0; k < 3; k++) {
                    int wd = widths[k];
                    int seg = l & ~(wd - 1);
                    int delta = s[l] & 31;
                    want[k] = v[seg + (s[l] & (wd - 1))];
                    want[3 + k] = l - delta >= seg ? v[l - delta] : v[l];
                    want[6 + k] = l + delta <= seg + wd - 1 ? v[l + delta] : v[l];
                    int x = l ^ delta;
                    want[9 + k] = x <= seg + wd - 1 ? v[x] : v[l];
                }
                want[12] = ballot;
                want[13] = all ? 1 : 0;
                want[14] = any ? 1 : 0;
                want[15] = -1;
                want[16] = add;
                want[17] = minU;
                want[18] = maxU;
                want[19] = minS;
                want[20] = maxS;
                want[21] = and;
                want[22] = or;
                want[23] = xor;
                want[24] = l < 16 ? v[l ^ (s[l] & 15)] : v[l];
                int j = (s[l] + 1) & 31;
                want[25] = v[j];
                want[26] = s[j];
                String at = String.format("warp %d lane %d (v=0x%x, sel=0x%x)", base / 32, l, v[l], s[l]);
                for (int k = 0; k < RESULTS; k++) {
                    d.eq(names[k], at, want[k] & M32, out[k * THREADS + base + l]);
                }
            }
        }
        d.done();
    }

    /** Runs {@code warp_partial} with one block of {@code threads}, whose last warp is partial. */
    static void checkPartial(PtxSemanticsContract c, int threads) {
        SplittableRandom r = new SplittableRandom(PtxInputs.SEED + threads);
        int[] in = new int[threads];
        for (int t = 0; t < threads; t++) {
            in[t] = r.nextInt();
        }
        int[] out = new int[6 * threads];
        DevicePtr pi = c.gpu.alloc(4L * threads);
        DevicePtr po = c.gpu.alloc(4L * 6 * threads);
        try {
            c.gpu.copyH2D(in, pi);
            c.gpu.launch(c.gpu.kernel(PtxSemanticsContract.OPS_MODULE, "warp_partial"), LaunchConfig.of(1, threads),
                    Stream.DEFAULT, c.args.clear().ptr(pi).ptr(po));
            c.gpu.copyD2H(po, out);
        } finally {
            c.gpu.free(pi);
            c.gpu.free(po);
        }
        PtxSemanticsContract.Diff d = c.new Diff("warp_partial with " + threads + " threads");
        String[] names = {"__ballot_sync", "__all_sync", "__any_sync", "__activemask", "__reduce_add_sync",
            "__shfl_xor_sync(1, 16)"};
        for (int base = 0; base < threads; base += 32) {
            int lanes = Math.min(32, threads - base);
            int ballot = 0;
            boolean all = true;
            boolean any = false;
            int add = 0;
            for (int l = 0; l < lanes; l++) {
                int v = in[base + l];
                ballot |= (v & 1) << l;
                all &= (v & 2) != 0;
                any |= (v & 4) != 0;
                add += v;
            }
            int mask = lanes == 32 ? -1 : (1 << lanes) - 1;
            for (int l = 0; l < lanes; l++) {
                int[] want = {ballot, all ? 1 : 0, any ? 1 : 0, mask, add, lanes >= 16 ? in[base + (l ^ 1)] : in[base + l]};
                String at = String.format("warp %d of %d lanes, lane %d", base / 32, lanes, l);
                for (int k = 0; k < want.length; k++) {
                    d.eq(names[k], at, want[k] & M32, out[k * threads + base + l] & M32);
                }
            }
        }
        d.done();
    }
}
