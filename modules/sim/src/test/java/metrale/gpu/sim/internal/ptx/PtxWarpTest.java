// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Warp and block collectives against CUDA's documented semantics: shfl.sync up, down, bfly and
 * idx over width segments (the {@code c} operand) with the in-range predicate, vote.sync
 * all/any/uni/ballot (a partial member mask too), redux.sync, and bar.red.popc/and/or.
 */
class PtxWarpTest {

    private static final String SHFL = PtxRig.HEAD + """
            .visible .entry shfl(
            	.param .u64 shfl_out,
            	.param .u32 shfl_b,
            	.param .u32 shfl_c
            )
            {
            	.reg .pred %p<2>;
            	.reg .b32 %r<12>;
            	.reg .b64 %rd<4>;
            	ld.param.u64 %rd1, [shfl_out];
            	ld.param.u32 %r1, [shfl_b];
            	ld.param.u32 %r2, [shfl_c];
            	mov.u32 %r3, %tid.x;
            	mad.lo.s32 %r4, %r3, 3, 7;
            	shfl.sync.MODE.b32 %r5|%p1, %r4, %r1, %r2, -1;
            	selp.u32 %r6, 1, 0, %p1;
            	mul.wide.u32 %rd2, %r3, 8;
            	add.s64 %rd3, %rd1, %rd2;
            	st.global.v2.u32 [%rd3], {%r5, %r6};
            	ret;
            }
            """;

    /** {@return what lane {@code lane} of a warp gets from CUDA's __shfl_*_sync(mask, v, b, width), and whether it is in range} */
    private static int[] cuda(String mode, int lane, int b, int width, int[] v) {
        int seg = lane / width * width;
        int src;
        boolean ok;
        switch (mode) {
            case "up" -> {
                src = lane - b;
                ok = lane - seg >= b;
            }
            case "down" -> {
                src = lane + b;
                ok = lane - seg + b < width;
            }
            case "bfly" -> {
                src = lane ^ b;
                // Lanes of earlier segments may be read, later ones not.
                ok = src < seg + width;
            }
            default -> {
                src = seg + (b % width);
                ok = true;
            }
        }
        return new int[] {ok ? v[src] : v[lane], ok ? 1 : 0};
    }

    @Test
    void shflInEveryModeAndWidth() {
        int threads = 64;
        for (String mode : new String[] {"up", "down", "bfly", "idx"}) {
            String ptx = SHFL.replace("MODE", mode);
            for (int width : new int[] {32, 16, 8, 4, 2}) {
                for (int b : new int[] {0, 1, 2, 3, 5, 8, 16, 31}) {
                    // c packs the segment mask (bits 8-12) and the clamp lane (bits 0-4): 0 for up, width-1 otherwise.
                    int c = ((32 - width) << 8) | (mode.equals("up") ? 0 : 0x1f);
                    HeapGlobal mem = new HeapGlobal();
                    long out = mem.alloc(8 * threads);
                    PtxRig.launch(ptx, "shfl", mem, 1, threads, 0, out, b, c);
                    ByteBuffer ob = mem.region(out);
                    for (int t = 0; t < threads; t++) {
                        int[] warp = new int[32];
                        for (int l = 0; l < 32; l++) {
                            warp[l] = (t / 32 * 32 + l) * 3 + 7;
                        }
                        int[] want = cuda(mode, t % 32, b, width, warp);
                        assertThat(new int[] {ob.getInt(8 * t), ob.getInt(8 * t + 4)})
                                .as("shfl.%s b=%d width=%d, thread %d", mode, b, width, t).containsExactly(want);
                    }
                }
            }
        }
    }

    private static final String VOTE = PtxRig.HEAD + """
            .visible .entry vote(
            	.param .u64 vote_in,
            	.param .u64 vote_out
            )
            {
            	.reg .pred %p<8>;
            	.reg .b32 %r<24>;
            	.reg .b64 %rd<8>;
            	ld.param.u64 %rd1, [vote_in];
            	ld.param.u64 %rd2, [vote_out];
            	mov.u32 %r1, %tid.x;
            	mul.wide.u32 %rd3, %r1, 4;
            	add.s64 %rd4, %rd1, %rd3;
            	ld.global.u32 %r2, [%rd4];
            	setp.ne.u32 %p1, %r2, 0;
            	vote.sync.all.pred %p2, %p1, -1;
            	vote.sync.any.pred %p3, %p1, -1;
            	vote.sync.uni.pred %p4, %p1, -1;
            	vote.sync.ballot.b32 %r3, %p1, -1;
            	vote.sync.ballot.b32 %r4, !%p1, -1;
            	selp.u32 %r5, 1, 0, %p2;
            	selp.u32 %r6, 1, 0, %p3;
            	selp.u32 %r7, 1, 0, %p4;
            	redux.sync.add.u32 %r8, %r2, -1;
            	redux.sync.min.s32 %r9, %r2, -1;
            	redux.sync.max.u32 %r10, %r2, -1;
            	redux.sync.and.b32 %r11, %r2, -1;
            	redux.sync.or.b32 %r12, %r2, -1;
            	redux.sync.xor.b32 %r13, %r2, -1;
            	redux.sync.max.s32 %r17, %r2, -1;
            	redux.sync.min.u32 %r18, %r2, -1;
            	bar.red.popc.u32 %r14, 0, %p1;
            	bar.red.and.pred %p5, 0, %p1;
            	bar.red.or.pred %p6, 0, !%p1;
            	selp.u32 %r15, 1, 0, %p5;
            	selp.u32 %r16, 1, 0, %p6;
            	// Lanes 0-15 alone: a partial member mask.
            	and.b32 %r19, %r1, 31;
            	setp.lt.u32 %p7, %r19, 16;
            	mov.u32 %r20, 0;
            	@!%p7 bra $SKIP;
            	vote.sync.ballot.b32 %r20, %p1, 0xffff;
            $SKIP:
            	mul.wide.u32 %rd5, %r1, 96;
            	add.s64 %rd6, %rd2, %rd5;
            	st.global.v4.u32 [%rd6], {%r5, %r6, %r7, %r3};
            	st.global.v4.u32 [%rd6+16], {%r4, %r8, %r9, %r10};
            	st.global.v4.u32 [%rd6+32], {%r11, %r12, %r13, %r14};
            	st.global.v4.u32 [%rd6+48], {%r15, %r16, %r17, %r20};
            	st.global.u32 [%rd6+64], %r18;
            	ret;
            }
            """;

    @Test
    void voteReduxAndBarRed() {
        int threads = 96;
        int[][] inputs = new int[4][threads];
        java.util.SplittableRandom r = new java.util.SplittableRandom(61);
        for (int t = 0; t < threads; t++) {
            inputs[0][t] = 1;
            inputs[1][t] = 0;
            inputs[2][t] = t == 40 ? -3 : 0;
            inputs[3][t] = r.nextBoolean() ? r.nextInt() : 0;
        }
        for (int[] v : inputs) {
            HeapGlobal mem = new HeapGlobal();
            long in = mem.alloc(4 * threads);
            long out = mem.alloc(96 * threads);
            for (int t = 0; t < threads; t++) {
                mem.region(in).putInt(4 * t, v[t]);
            }
            PtxRig.launch(VOTE, "vote", mem, 1, threads, 0, in, out);
            ByteBuffer ob = mem.region(out);
            int popc = 0;
            boolean all = true;
            boolean anyZero = false;
            for (int t = 0; t < threads; t++) {
                popc += v[t] != 0 ? 1 : 0;
                all &= v[t] != 0;
                anyZero |= v[t] == 0;
            }
            for (int t = 0; t < threads; t++) {
                int w = t / 32 * 32;
                int ballot = 0;
                long sum = 0;
                int min = Integer.MAX_VALUE;
                int maxU = 0;
                int maxS = Integer.MIN_VALUE;
                int minU = -1;
                int and = -1;
                int or = 0;
                int xor = 0;
                int lowBallot = 0;
                for (int l = 0; l < 32; l++) {
                    int x = v[w + l];
                    ballot |= (x != 0 ? 1 : 0) << l;
                    lowBallot |= l < 16 && x != 0 ? 1 << l : 0;
                    sum += x;
                    min = Math.min(min, x);
                    maxS = Math.max(maxS, x);
                    maxU = Integer.compareUnsigned(x, maxU) > 0 ? x : maxU;
                    minU = Integer.compareUnsigned(x, minU) < 0 ? x : minU;
                    and &= x;
                    or |= x;
                    xor ^= x;
                }
                int[] got = new int[17];
                for (int k = 0; k < 17; k++) {
                    got[k] = ob.getInt(96 * t + 4 * k);
                }
                String as = "thread " + t + " of inputs " + java.util.Arrays.toString(v).substring(0, 40);
                assertThat(got[0]).as("vote.all %s", as).isEqualTo(ballot == -1 ? 1 : 0);
                assertThat(got[1]).as("vote.any %s", as).isEqualTo(ballot != 0 ? 1 : 0);
                assertThat(got[2]).as("vote.uni %s", as).isEqualTo(ballot == 0 || ballot == -1 ? 1 : 0);
                assertThat(got[3]).as("vote.ballot %s", as).isEqualTo(ballot);
                assertThat(got[4]).as("vote.ballot of !p %s", as).isEqualTo(~ballot);
                assertThat(got[5]).as("redux.add %s", as).isEqualTo((int) sum);
                assertThat(got[6]).as("redux.min.s32 %s", as).isEqualTo(min);
                assertThat(got[7]).as("redux.max.u32 %s", as).isEqualTo(maxU);
                assertThat(new int[] {got[8], got[9], got[10]}).as("redux and/or/xor %s", as).containsExactly(and, or, xor);
                assertThat(got[11]).as("bar.red.popc %s", as).isEqualTo(popc);
                assertThat(got[12]).as("bar.red.and %s", as).isEqualTo(all ? 1 : 0);
                assertThat(got[13]).as("bar.red.or of !p %s", as).isEqualTo(anyZero ? 1 : 0);
                assertThat(got[14]).as("redux.max.s32 %s", as).isEqualTo(maxS);
                assertThat(got[15]).as("ballot over lanes 0-15 %s", as).isEqualTo(t % 32 < 16 ? lowBallot : 0);
                assertThat(got[16]).as("redux.min.u32 %s", as).isEqualTo(minU);
            }
        }
    }
}
