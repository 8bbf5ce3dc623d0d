// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Atomics from many blocks at once ({@code sim.blocks=parallel}) and in the other block orders,
 * run from hand-written PTX with no twin: every integer total is exact, a compare-and-swap has
 * exactly one winner, shared-memory atomics count each block's threads.
 */
class PtxAtomicsParallelTest {

    private static final String PTX = """
            .version 8.0
            .target sm_90
            .address_size 64

            .shared .align 4 .b8 blockCount[4];

            .visible .entry hammer(
            	.param .u64 hammer_c,
            	.param .u64 hammer_perBlock
            )
            {
            	.reg .pred %p<3>;
            	.reg .b32 %r<20>;
            	.reg .b64 %rd<12>;
            	.reg .f32 %f<2>;
            	ld.param.u64 %rd1, [hammer_c];
            	ld.param.u64 %rd2, [hammer_perBlock];
            	cvta.to.global.u64 %rd1, %rd1;
            	cvta.to.global.u64 %rd2, %rd2;
            	mov.u32 %r1, %tid.x;
            	mov.u32 %r2, %ctaid.x;
            	mov.u32 %r3, %ntid.x;
            	mad.lo.s32 %r4, %r2, %r3, %r1;
            	setp.eq.u32 %p1, %r1, 0;
            	@!%p1 bra $L1;
            	st.shared.u32 [blockCount], 0;
            $L1:
            	bar.sync 0;
            	atom.global.add.u32 %r5, [%rd1], 1;
            	cvt.u64.u32 %rd3, %r4;
            	red.global.add.u64 [%rd1+8], %rd3;
            	neg.s32 %r6, %r4;
            	atom.global.min.s32 %r7, [%rd1+16], %r6;
            	atom.global.max.u32 %r8, [%rd1+20], %r4;
            	and.b32 %r9, %r4, 31;
            	mov.u32 %r10, 1;
            	shl.b32 %r11, %r10, %r9;
            	atom.global.or.b32 %r12, [%rd1+24], %r11;
            	atom.global.xor.b32 %r13, [%rd1+28], %r4;
            	not.b32 %r14, %r11;
            	atom.global.and.b32 %r15, [%rd1+32], %r14;
            	atom.global.inc.u32 %r16, [%rd1+36], 1000;
            	red.global.add.f32 [%rd1+40], 0f3F800000;
            	add.s32 %r17, %r4, 1;
            	atom.global.cas.b32 %r18, [%rd1+44], 0, %r17;
            	setp.eq.u32 %p2, %r18, 0;
            	@!%p2 bra $L2;
            	red.global.add.u32 [%rd1+48], 1;
            $L2:
            	atom.global.dec.u32 %r19, [%rd1+52], 0xffffffff;
            	atom.shared.add.u32 %r19, [blockCount], 1;
            	bar.sync 0;
            	@!%p1 bra $L3;
            	ld.shared.u32 %r19, [blockCount];
            	mul.wide.u32 %rd4, %r2, 4;
            	add.s64 %rd5, %rd2, %rd4;
            	st.global.u32 [%rd5], %r19;
            $L3:
            	ret;
            }
            """;

    @ParameterizedTest
    @ValueSource(strings = {"parallel", "shuffled", "ordered"})
    void integerTotalsAreExactFromManyBlocks(String order) {
        int blocks = 96;
        int threads = 128;
        int total = blocks * threads;
        try (Gpu gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).backendOption(SimOptions.BLOCKS, order).open();
             KernelArgs args = new KernelArgs()) {
            gpu.loadModule("hammer", PTX.getBytes(StandardCharsets.US_ASCII));
            DevicePtr c = gpu.alloc(56);
            DevicePtr perBlock = gpu.alloc(4L * blocks);
            int[] init = new int[14];
            init[4] = Integer.MAX_VALUE;
            init[8] = -1;
            gpu.copyH2D(init, c);
            gpu.launch(gpu.kernel("hammer", "hammer"), LaunchConfig.of(blocks, threads), gpu.defaultStream(),
                    args.clear().ptr(c).ptr(perBlock));
            int[] got = new int[14];
            gpu.copyD2H(c, got);
            long sum = (long) got[2] & 0xffffffffL | (long) got[3] << 32;
            int xor = 0;
            for (int i = 0; i < total; i++) {
                xor ^= i;
            }
            assertThat(got[0]).as("add.u32").isEqualTo(total);
            assertThat(sum).as("red.add.u64").isEqualTo((long) total * (total - 1) / 2);
            assertThat(got[4]).as("min.s32").isEqualTo(-(total - 1));
            assertThat(got[5]).as("max.u32").isEqualTo(total - 1);
            assertThat(got[6]).as("or.b32").isEqualTo(-1);
            assertThat(got[7]).as("xor.b32").isEqualTo(xor);
            assertThat(got[8]).as("and.b32").isZero();
            assertThat(got[9]).as("inc.u32 wraps at 1000").isEqualTo(total % 1001);
            assertThat(Float.intBitsToFloat(got[10])).as("red.add.f32 of ones, exact below 2^24").isEqualTo((float) total);
            assertThat(got[11]).as("the cas winner's value").isBetween(1, total);
            assertThat(got[12]).as("cas winners").isEqualTo(1);
            assertThat(got[13]).as("dec.u32 from 0 with limit 2^32-1").isEqualTo(-total);
            int[] counts = new int[blocks];
            gpu.copyD2H(perBlock, counts);
            assertThat(counts).as("shared atomics per block").containsOnly(threads);
        }
    }
}
