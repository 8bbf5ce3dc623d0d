// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PtxLaunch#runner}: one runner taken from block to block, as a thread of
 * {@code sim.blocks=parallel} takes it, gives what a fresh block per block gives; memory, fault and
 * time, compiled and interpreted, and each thread still starts with zeroed local memory and its own
 * block's special registers.
 */
class PtxBlockRunnerTest {

    private static PtxCompilerTest.Outcome runWithRunner(PtxModule m, PtxFunction fn, byte[] params, int[] grid,
                                                         int[] block, int dyn, FlatGlobal g, boolean compiled) {
        PtxLaunch l = new PtxLaunch(m, fn, "test::" + fn.name(), params, grid, block, dyn, g, 1000, 132, compiled);
        PtxLaunch.BlockRunner r = l.runner();
        String fault = null;
        try {
            for (int z = 0; z < grid[2]; z++) {
                for (int y = 0; y < grid[1]; y++) {
                    for (int x = 0; x < grid[0]; x++) {
                        r.run(x, y, z);
                    }
                }
            }
        } catch (PtxFault f) {
            fault = f.error().name() + ": " + f.getMessage();
        }
        return new PtxCompilerTest.Outcome(g.bytes, fault, l.timerNanos(), l.runsCompiled());
    }

    private static final int[] BLOCK_X = {1, 7, 32, 33, 64};

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("metrale.gpu.sim.internal.ptx.PtxCompilerTest#entries")
    void oneRunnerForEveryBlockGivesWhatAFreshBlockForEachGives(String file, String entry, String path) {
        PtxModule m = PtxCompilerTest.module(path);
        PtxFunction fn = m.function(entry);
        Random rnd = new Random(entry.hashCode() * 13L + file.hashCode());
        for (int trial = 0; trial < 8; trial++) {
            int[] block = {BLOCK_X[rnd.nextInt(BLOCK_X.length)], 1 + rnd.nextInt(2), 1};
            int[] grid = {1 + rnd.nextInt(4), 1 + rnd.nextInt(2), 1 + rnd.nextInt(2)};
            int dyn = 4 * block[0] * block[1];
            byte[] params = PtxCompilerTest.params(fn, rnd);
            byte[] mem = new byte[PtxCompilerTest.MEM];
            rnd.nextBytes(mem);
            boolean compiled = rnd.nextBoolean();
            PtxCompilerTest.Outcome fresh = PtxCompilerTest.run(m, fn, params, grid, block, dyn,
                    new FlatGlobal(PtxCompilerTest.BASE, mem.clone()), compiled);
            PtxCompilerTest.Outcome reused = runWithRunner(m, fn, params, grid, block, dyn,
                    new FlatGlobal(PtxCompilerTest.BASE, mem.clone()), compiled);
            String what = entry + (compiled ? " compiled" : " interpreted") + " grid " + Arrays.toString(grid)
                    + " block " + Arrays.toString(block);
            assertThat(reused.fault()).as(what).isEqualTo(fresh.fault());
            assertThat(reused.timer()).as(what).isEqualTo(fresh.timer());
            assertThat(reused.memory()).as(what).isEqualTo(fresh.memory());
        }
    }

    /** Each thread reads its local word before writing it, and stores what it read beside its block's indices. */
    private static final String LOCAL = PtxRig.HEAD + """
            .visible .entry fresh(
            	.param .u64 fresh_out
            )
            {
            	.local .align 4 .b8 lbuf[8];
            	.reg .b32 %r<8>;
            	.reg .b64 %rd<6>;
            	ld.param.u64 %rd1, [fresh_out];
            	cvta.to.global.u64 %rd1, %rd1;
            	mov.u32 %r1, %tid.x;
            	mov.u32 %r2, %ctaid.x;
            	mov.u32 %r3, %ntid.x;
            	mad.lo.s32 %r4, %r2, %r3, %r1;
            	ld.local.u32 %r5, [lbuf+4];
            	add.s32 %r6, %r4, 1;
            	st.local.u32 [lbuf+4], %r6;
            	mov.u32 %r7, %smid;
            	mul.wide.u32 %rd2, %r4, 12;
            	add.s64 %rd3, %rd1, %rd2;
            	st.global.u32 [%rd3], %r5;
            	st.global.u32 [%rd3+4], %r2;
            	st.global.u32 [%rd3+8], %r7;
            	ret;
            }
            """;

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aReusedBlockGivesEachThreadZeroedLocalMemoryAndItsOwnBlocksSpecials(boolean compiled) {
        PtxModule m = PtxRig.parse(LOCAL);
        PtxFunction fn = m.function("fresh");
        HeapGlobal mem = new HeapGlobal();
        int blocks = 5;
        int threads = 32;
        long out = mem.alloc(12 * blocks * threads);
        byte[] params = new byte[fn.paramBytes()];
        ByteBuffer.wrap(params).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(fn.paramOffsets()[0], out);
        int sms = 3;
        PtxLaunch l = new PtxLaunch(m, fn, "test::fresh", params, new int[] {blocks, 1, 1}, new int[] {threads, 1, 1},
                0, mem, 0, sms, compiled);
        PtxLaunch.BlockRunner r = l.runner();
        for (int b = blocks - 1; b >= 0; b--) {
            r.run(b, 0, 0);
        }
        assertThat(l.runsCompiled()).isEqualTo(compiled);
        ByteBuffer ob = mem.region(out);
        for (int b = 0; b < blocks; b++) {
            for (int t = 0; t < threads; t++) {
                int at = 12 * (b * threads + t);
                assertThat(ob.getInt(at)).as("local word read first, block %d thread %d", b, t).isZero();
                assertThat(ob.getInt(at + 4)).as("%%ctaid.x, block %d thread %d", b, t).isEqualTo(b);
                assertThat(ob.getInt(at + 8)).as("%%smid, block %d thread %d", b, t).isEqualTo(b % sms);
            }
        }
    }
}
