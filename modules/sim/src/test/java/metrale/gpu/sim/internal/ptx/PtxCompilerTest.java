// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The compiler against the interpreter: every {@code .entry} of the repository's PTX files, run
 * both ways over random arguments, memory and launch shapes, leaves the same bytes in memory, the
 * same fault (error and message) and the same virtual time; a function the compiler refuses runs
 * interpreted with the right result.
 */
class PtxCompilerTest {

    static final long BASE = 0x10000;
    static final int MEM = 1 << 16;

    /** The repository's PTX files, relative to modules/sim. */
    static final List<String> FILES = List.of(
            "../contract/src/main/resources/metrale/gpu/contract/contract.ptx",
            "../cuda/src/test/resources/ptx/kernels.ptx",
            "../../examples/src/main/resources/metrale/examples/heat.ptx",
            "../../examples/src/main/resources/metrale/examples/dataparallel.ptx",
            "../../examples/consumer/src/main/resources/com/example/pipeline/pipeline.ptx",
            "../../benchmarks/src/main/resources/metrale/bench/bench.ptx");

    /** {@code text} without its comments, line breaks kept, as the simulator hands PTX to the engine. */
    static String stripComments(String text) {
        StringBuilder out = new StringBuilder(text.length());
        int i = 0;
        while (i < text.length()) {
            char ch = text.charAt(i);
            if (ch == '"') {
                int j = text.indexOf('"', i + 1);
                j = j < 0 ? text.length() : j + 1;
                out.append(text, i, j);
                i = j;
            } else if (text.startsWith("//", i)) {
                while (i < text.length() && text.charAt(i) != '\n') {
                    i++;
                }
            } else if (text.startsWith("/*", i)) {
                int j = text.indexOf("*/", i + 2);
                j = j < 0 ? text.length() : j + 2;
                for (int k = i; k < j; k++) {
                    if (text.charAt(k) == '\n') {
                        out.append('\n');
                    }
                }
                i = j;
            } else {
                out.append(ch);
                i++;
            }
        }
        return out.toString();
    }

    static PtxModule module(String file) {
        try {
            return PtxModule.parse(stripComments(Files.readString(Path.of(file))));
        } catch (IOException e) {
            throw new AssertionError("cannot read " + file, e);
        }
    }

    static Stream<Arguments> entries() {
        List<Arguments> out = new ArrayList<>();
        for (String f : FILES) {
            for (PtxFunction fn : module(f).functions().values()) {
                if (fn.isEntry()) {
                    out.add(Arguments.of(Path.of(f).getFileName().toString(), fn.name(), f));
                }
            }
        }
        return out.stream();
    }

    /** What a launch left: memory, the fault it raised ({@code null} if none), the time its timers saw. */
    record Outcome(byte[] memory, String fault, long timer, boolean compiled) {
    }

    static Outcome run(PtxModule m, PtxFunction fn, byte[] params, int[] grid, int[] block, int dyn, FlatGlobal g,
                       boolean compiled) {
        PtxLaunch l = new PtxLaunch(m, fn, "test::" + fn.name(), params, grid, block, dyn, g, 1000, 132, compiled);
        String fault = null;
        try {
            for (int z = 0; z < grid[2]; z++) {
                for (int y = 0; y < grid[1]; y++) {
                    for (int x = 0; x < grid[0]; x++) {
                        l.runBlock(x, y, z);
                    }
                }
            }
        } catch (PtxFault f) {
            fault = f.error().name() + ": " + f.getMessage();
        }
        return new Outcome(g.bytes, fault, l.timerNanos(), l.runsCompiled());
    }

    /** Random arguments: pointers into the memory (mostly), small integers, floats, raw bytes. */
    static byte[] params(PtxFunction fn, Random rnd) {
        byte[] p = new byte[fn.paramBytes()];
        int[] off = fn.paramOffsets();
        int[] size = fn.paramSizes();
        for (int i = 0; i < off.length; i++) {
            long v;
            if (size[i] == 8) {
                v = rnd.nextInt(10) < 8 ? BASE + 4L * rnd.nextInt(MEM / 8) : rnd.nextInt(5000);
            } else if (size[i] == 4) {
                v = rnd.nextBoolean() ? rnd.nextInt(43) - 2 : Float.floatToRawIntBits((rnd.nextFloat() - 0.5f) * 8);
            } else {
                byte[] raw = new byte[size[i]];
                rnd.nextBytes(raw);
                System.arraycopy(raw, 0, p, off[i], raw.length);
                continue;
            }
            for (int j = 0; j < size[i]; j++) {
                p[off[i] + j] = (byte) (v >>> (8 * j));
            }
        }
        return p;
    }

    private static final int[] BLOCK_X = {1, 7, 32, 33, 64, 96, 128};

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("entries")
    void everyEntryGivesTheSameMemoryFaultAndTimeCompiledAsInterpreted(String file, String entry, String path) {
        PtxModule m = module(path);
        PtxFunction fn = m.function(entry);
        assertThat(PtxCompiler.refusal(fn)).as("why %s does not compile", entry).isNull();
        Random rnd = new Random(entry.hashCode() * 31L + file.hashCode());
        for (int trial = 0; trial < 12; trial++) {
            int[] block = {BLOCK_X[rnd.nextInt(BLOCK_X.length)], 1 + rnd.nextInt(2), 1};
            int[] grid = {1 + rnd.nextInt(3), 1 + rnd.nextInt(2), 1 + rnd.nextInt(2)};
            int dyn = 4 * block[0] * block[1] + 16 * rnd.nextInt(3);
            byte[] params = params(fn, rnd);
            byte[] mem = new byte[MEM];
            rnd.nextBytes(mem);
            Outcome a = run(m, fn, params, grid, block, dyn, new FlatGlobal(BASE, mem.clone()), false);
            Outcome b = run(m, fn, params, grid, block, dyn, new FlatGlobal(BASE, mem.clone()), true);
            String what = entry + " grid " + Arrays.toString(grid) + " block " + Arrays.toString(block);
            assertThat(a.compiled()).isFalse();
            assertThat(b.compiled()).as(what).isTrue();
            assertThat(b.fault()).as(what).isEqualTo(a.fault());
            assertThat(b.timer()).as(what).isEqualTo(a.timer());
            assertThat(b.memory()).as(what).isEqualTo(a.memory());
        }
    }

    /** Every block of the grid through {@link PtxLaunch.Block#run}, every thread a record of its own. */
    static Outcome runWhole(PtxModule m, PtxFunction fn, byte[] params, int[] grid, int[] block, int dyn, FlatGlobal g) {
        PtxLaunch l = new PtxLaunch(m, fn, "test::" + fn.name(), params, grid, block, dyn, g, 1000, 132, false);
        String fault = null;
        try {
            for (int z = 0; z < grid[2]; z++) {
                for (int y = 0; y < grid[1]; y++) {
                    for (int x = 0; x < grid[0]; x++) {
                        new PtxLaunch.Block(l, x, y, z).run();
                    }
                }
            }
        } catch (PtxFault f) {
            fault = f.error().name() + ": " + f.getMessage();
        }
        return new Outcome(g.bytes, fault, l.timerNanos(), false);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("entries")
    void threadsRunOneAtATimeInOneRecordGiveWhatTheWholeBlockGives(String file, String entry, String path) {
        PtxModule m = module(path);
        PtxFunction fn = m.function(entry);
        Random rnd = new Random(entry.hashCode() * 17L + file.hashCode());
        for (int trial = 0; trial < 6; trial++) {
            int[] block = {BLOCK_X[rnd.nextInt(BLOCK_X.length)], 1 + rnd.nextInt(2), 1 + rnd.nextInt(2)};
            int[] grid = {1 + rnd.nextInt(3), 1 + rnd.nextInt(2), 1};
            int dyn = 4 * block[0] * block[1] * block[2];
            byte[] params = params(fn, rnd);
            byte[] mem = new byte[MEM];
            rnd.nextBytes(mem);
            Outcome whole = runWhole(m, fn, params, grid, block, dyn, new FlatGlobal(BASE, mem.clone()));
            Outcome each = run(m, fn, params, grid, block, dyn, new FlatGlobal(BASE, mem.clone()), true);
            String what = entry + " grid " + Arrays.toString(grid) + " block " + Arrays.toString(block);
            assertThat(each.fault()).as(what).isEqualTo(whole.fault());
            assertThat(each.timer()).as(what).isEqualTo(whole.timer());
            assertThat(each.memory()).as(what).isEqualTo(whole.memory());
        }
    }

    @Test
    void barriersSharedMemoryAndGenericAccessesMakeAFunctionRunAsAWholeBlock() {
        PtxModule contract = module(FILES.get(0));
        assertThat(PtxLaunch.independent(contract.function("axpy_f32"))).isTrue();
        assertThat(PtxLaunch.independent(contract.function("spin"))).isTrue();
        assertThat(PtxLaunch.independent(contract.function("block_sum_f32"))).isFalse();
        // st.volatile.u32 [%rd1]: a generic address, which may lie in the shared window.
        assertThat(PtxLaunch.independent(contract.function("store_illegal"))).isFalse();
        assertThat(PtxLaunch.independent(PtxModule.parse(CALLS).function("calls"))).isFalse();
    }

    /**
     * What the repository's kernels do not use: global and shared atomics, shared memory across a
     * barrier, warp operations, activemask, bar.red, local memory, generic addresses through cvta,
     * the timers, and the bit and mixed-width operations.
     */
    static final String MIX = """
            .version 9.0
            .target sm_90
            .address_size 64
            .shared .align 4 .b8 sm[1024];
            .visible .entry mix(.param .u64 mix_out)
            {
                .reg .pred %p<4>;
                .reg .b32 %r<40>;
                .reg .b64 %rd<16>;
                .reg .f32 %f<6>;
                .local .align 8 .b8 depot[32];
                ld.param.u64 %rd1, [mix_out];
                mov.u32 %r2, %tid.x;
                mov.u32 %r1, %ntid.x;
                mul.wide.u32 %rd2, %r2, 128;
                add.s64 %rd3, %rd1, %rd2;
                setp.lt.u32 %p1, %r2, 3;
                atom.global.add.u32 %r3, [%rd1+8192], 1;
                red.global.add.u32 [%rd1+8196], %r2;
                atom.global.cas.b32 %r4, [%rd1+8200], %r2, 7;
                atom.global.max.s32 %r5, [%rd1+8204], %r2;
                atom.global.exch.b64 %rd4, [%rd1+8208], %rd3;
                shl.b32 %r6, %r2, 2;
                mov.u32 %r7, sm;
                add.s32 %r8, %r7, %r6;
                st.shared.u32 [%r8], %r2;
                atom.shared.add.u32 %r9, [sm+512], %r2;
                bar.sync 0;
                add.s32 %r10, %r2, 1;
                rem.u32 %r10, %r10, %r1;
                shl.b32 %r10, %r10, 2;
                add.s32 %r12, %r7, %r10;
                ld.shared.u32 %r11, [%r12];
                shfl.sync.bfly.b32 %r13, %r2, 1, 31, -1;
                shfl.sync.down.b32 %r14|%p2, %r11, 2, 31, -1;
                vote.sync.ballot.b32 %r15, %p1, -1;
                vote.sync.any.pred %p3, !%p1, -1;
                activemask.b32 %r16;
                bar.red.popc.u32 %r17, 0, %p1;
                st.local.u32 [depot], %r13;
                ld.local.u32 %r18, [depot];
                mov.u64 %rd5, depot;
                cvta.local.u64 %rd6, %rd5;
                st.u32 [%rd6+4], %r15;
                ld.u32 %r19, [%rd6+4];
                mov.u64 %rd7, sm;
                cvta.shared.u64 %rd8, %rd7;
                ld.u32 %r20, [%rd8+512];
                bar.sync 0;
                mov.u64 %rd9, %globaltimer;
                nanosleep.u32 100;
                mov.u64 %rd10, %globaltimer;
                sub.s64 %rd10, %rd10, %rd9;
                mov.u32 %r21, %clock;
                prmt.b32 %r22, %r2, %r11, 0x3210;
                bfe.u32 %r23, %r11, 1, 3;
                bfi.b32 %r24, %r2, %r11, 4, 5;
                shf.l.wrap.b32 %r25, %r2, %r11, %r2;
                mov.f32 %f1, 0fBF800000;
                cvt.rn.f32.u32 %f2, %r2;
                copysign.f32 %f3, %f1, %f2;
                testp.finite.f32 %p2, %f3;
                selp.u32 %r26, 1, 0, %p2;
                mul24.lo.s32 %r27, %r2, -3;
                mad24.lo.u32 %r28, %r2, 5, %r11;
                sad.u32 %r29, %r2, 9, %r11;
                brev.b32 %r30, %r2;
                mov.b64 %rd11, {%r2, %r11};
                mov.b64 {%r31, %r32}, %rd11;
                cnot.b32 %r33, %r2;
                abs.s32 %r34, %r27;
                neg.s32 %r35, %r2;
                selp.u32 %r36, 1, 0, %p3;
                @%p1 trap;
                st.global.u32 [%rd3+0], %r3;
                st.global.u32 [%rd3+4], %r4;
                st.global.u32 [%rd3+8], %r5;
                st.global.u32 [%rd3+12], %r9;
                st.global.u32 [%rd3+16], %r11;
                st.global.u32 [%rd3+20], %r13;
                st.global.u32 [%rd3+24], %r14;
                st.global.u32 [%rd3+28], %r15;
                st.global.u32 [%rd3+32], %r16;
                st.global.u32 [%rd3+36], %r17;
                st.global.u32 [%rd3+40], %r18;
                st.global.u32 [%rd3+44], %r19;
                st.global.u32 [%rd3+48], %r20;
                st.global.u32 [%rd3+52], %r21;
                st.global.u32 [%rd3+56], %r22;
                st.global.u32 [%rd3+60], %r23;
                st.global.u32 [%rd3+64], %r24;
                st.global.u32 [%rd3+68], %r25;
                st.global.u32 [%rd3+72], %r26;
                st.global.u32 [%rd3+76], %r27;
                st.global.u32 [%rd3+80], %r28;
                st.global.u32 [%rd3+84], %r29;
                st.global.u32 [%rd3+88], %r30;
                st.global.u32 [%rd3+92], %r31;
                st.global.u32 [%rd3+96], %r32;
                st.global.u32 [%rd3+100], %r33;
                st.global.u32 [%rd3+104], %r34;
                st.global.u32 [%rd3+108], %r35;
                st.global.u32 [%rd3+112], %r36;
                st.global.u64 [%rd3+120], %rd10;
                ret;
            }
            """;

    @Test
    void atomicsSharedMemoryWarpOperationsLocalMemoryAndTimersGiveTheSameBothWays() {
        PtxModule m = PtxModule.parse(MIX);
        PtxFunction fn = m.function("mix");
        assertThat(fn.unsupported()).isNull();
        assertThat(PtxCompiler.refusal(fn)).isNull();
        byte[] p = new byte[8];
        PtxLaunch.put(p, 0, 8, BASE);
        for (int threads : new int[] {1, 2, 5, 32, 40, 64}) {
            Outcome a = run(m, fn, p, new int[] {2, 1, 1}, new int[] {threads, 1, 1}, 0, new FlatGlobal(BASE, new byte[8448]), false);
            Outcome b = run(m, fn, p, new int[] {2, 1, 1}, new int[] {threads, 1, 1}, 0, new FlatGlobal(BASE, new byte[8448]), true);
            assertThat(b.compiled()).isTrue();
            assertThat(a.fault()).as("%d threads", threads).startsWith("LAUNCH_FAILED").contains("trap");
            assertThat(b.fault()).as("%d threads", threads).isEqualTo(a.fault());
            assertThat(b.memory()).as("%d threads", threads).isEqualTo(a.memory());
        }
        // Without the trap every thread stores its results; those must agree too.
        PtxModule quiet = PtxModule.parse(MIX.replace("@%p1 trap;", ""));
        PtxFunction q = quiet.function("mix");
        for (int threads : new int[] {1, 5, 32, 40, 64}) {
            Outcome a = run(quiet, q, p, new int[] {2, 1, 1}, new int[] {threads, 1, 1}, 0, new FlatGlobal(BASE, new byte[8448]), false);
            Outcome b = run(quiet, q, p, new int[] {2, 1, 1}, new int[] {threads, 1, 1}, 0, new FlatGlobal(BASE, new byte[8448]), true);
            assertThat(a.fault()).as("%d threads", threads).isNull();
            assertThat(b.fault()).as("%d threads", threads).isNull();
            assertThat(b.timer()).isEqualTo(a.timer()).isPositive();
            assertThat(b.memory()).as("%d threads", threads).isEqualTo(a.memory());
            // The block's atomic counter saw every thread of both blocks.
            assertThat(PtxLaunch.get(b.memory(), 8192, 4)).isEqualTo(2L * threads);
        }
    }

    @Test
    void axpyComputesFmaCompiled() {
        PtxModule m = module(FILES.get(0));
        PtxFunction fn = m.function("axpy_f32");
        int n = 100;
        FlatGlobal g = new FlatGlobal(BASE, new byte[8 * n]);
        for (int i = 0; i < n; i++) {
            PtxLaunch.put(g.bytes, 4 * i, 4, Float.floatToRawIntBits(i * 0.5f));
            PtxLaunch.put(g.bytes, 4 * (n + i), 4, Float.floatToRawIntBits(1f - i));
        }
        byte[] p = new byte[fn.paramBytes()];
        PtxLaunch.put(p, fn.paramOffsets()[0], 4, Float.floatToRawIntBits(3f));
        PtxLaunch.put(p, fn.paramOffsets()[1], 8, BASE);
        PtxLaunch.put(p, fn.paramOffsets()[2], 8, BASE + 4L * n);
        PtxLaunch.put(p, fn.paramOffsets()[3], 4, n);
        Outcome o = run(m, fn, p, new int[] {4, 1, 1}, new int[] {32, 1, 1}, 0, g, true);
        assertThat(o.compiled()).isTrue();
        assertThat(o.fault()).isNull();
        for (int i = 0; i < n; i++) {
            float y = Float.intBitsToFloat((int) PtxLaunch.get(o.memory(), 4 * (n + i), 4));
            assertThat(y).isEqualTo(Math.fma(i * 0.5f, 3f, 1f - i));
        }
    }

    /**
     * A kernel that calls a {@code .func}: the compiler refuses it; it runs interpreted and right.
     * The callee finds the output at the tests' memory base ({@value #BASE}).
     */
    static final String CALLS = """
            .version 9.0
            .target sm_90
            .address_size 64
            .func mark()
            {
                .reg .b32 %r<3>;
                .reg .b64 %rd<4>;
                mov.u32 %r1, %tid.x;
                mul.lo.s32 %r2, %r1, 2;
                add.s32 %r2, %r2, 1;
                mov.u64 %rd1, 65536;
                mul.wide.u32 %rd2, %r1, 4;
                add.s64 %rd3, %rd1, %rd2;
                st.global.u32 [%rd3], %r2;
                ret;
            }
            .visible .entry calls()
            {
                .reg .b32 %r<2>;
                mov.u32 %r1, %tid.x;
                call mark, ();
                ret;
            }
            """;

    @Test
    void aFunctionTheCompilerRefusesRunsInterpretedWithTheRightResult() {
        PtxModule m = PtxModule.parse(CALLS);
        PtxFunction fn = m.function("calls");
        assertThat(fn.unsupported()).isNull();
        assertThat(PtxCompiler.refusal(fn)).contains("a call");
        assertThat(PtxCompiler.codeFor(fn)).isNull();
        int n = 40;
        FlatGlobal g = new FlatGlobal(BASE, new byte[4 * n]);
        Outcome o = run(m, fn, new byte[0], new int[] {1, 1, 1}, new int[] {n, 1, 1}, 0, g, true);
        assertThat(o.compiled()).isFalse();
        assertThat(o.fault()).isNull();
        for (int i = 0; i < n; i++) {
            assertThat(PtxLaunch.get(o.memory(), 4 * i, 4)).isEqualTo(2L * i + 1);
        }
    }

    @Test
    void aFunctionTooLargeForTheJitRunsInterpretedWithTheRightResult() {
        StringBuilder b = new StringBuilder("""
                .version 9.0
                .target sm_90
                .address_size 64
                .visible .entry big(.param .u64 big_out)
                {
                    .reg .b32 %r<3>;
                    .reg .b64 %rd<3>;
                    ld.param.u64 %rd1, [big_out];
                    mov.u32 %r1, %tid.x;
                """);
        int adds = 2000;
        for (int i = 0; i < adds; i++) {
            b.append("    add.s32 %r1, %r1, 3;\n");
        }
        b.append("""
                    mov.u32 %r2, %tid.x;
                    mul.wide.u32 %rd2, %r2, 4;
                    add.s64 %rd1, %rd1, %rd2;
                    st.global.u32 [%rd1], %r1;
                    ret;
                }
                """);
        PtxModule m = PtxModule.parse(b.toString());
        PtxFunction fn = m.function("big");
        assertThat(PtxCompiler.refusal(fn)).contains("bytes of bytecode");
        byte[] p = new byte[8];
        PtxLaunch.put(p, 0, 8, BASE);
        Outcome o = run(m, fn, p, new int[] {1, 1, 1}, new int[] {8, 1, 1}, 0, new FlatGlobal(BASE, new byte[32]), true);
        assertThat(o.compiled()).isFalse();
        assertThat(o.fault()).isNull();
        for (int i = 0; i < 8; i++) {
            assertThat(PtxLaunch.get(o.memory(), 4 * i, 4)).isEqualTo(i + 3L * adds);
        }
    }

    @Test
    void anOutOfBoundsStoreFaultsWithTheSameErrorAndMessageBothWays() {
        PtxModule m = module(FILES.get(0));
        PtxFunction fn = m.function("write_past");
        byte[] p = new byte[fn.paramBytes()];
        PtxLaunch.put(p, fn.paramOffsets()[0], 8, BASE);
        PtxLaunch.put(p, fn.paramOffsets()[1], 4, 10);
        PtxLaunch.put(p, fn.paramOffsets()[2], 4, 1);
        Outcome a = run(m, fn, p, new int[] {1, 1, 1}, new int[] {32, 1, 1}, 0, new FlatGlobal(BASE, new byte[40]), false);
        Outcome b = run(m, fn, p, new int[] {1, 1, 1}, new int[] {32, 1, 1}, 0, new FlatGlobal(BASE, new byte[40]), true);
        assertThat(b.compiled()).isTrue();
        assertThat(a.fault()).startsWith("ILLEGAL_ADDRESS").contains("thread (10,0,0) of block (0,0,0)")
                .contains("st.global.f32");
        assertThat(b.fault()).isEqualTo(a.fault());
        assertThat(b.memory()).isEqualTo(a.memory());
    }

    @Test
    void aBarrierOnlyPartOfTheBlockReachesFaultsTheSameBothWays() {
        String ptx = """
                .version 9.0
                .target sm_90
                .address_size 64
                .visible .entry half()
                {
                    .reg .pred %p<2>;
                    .reg .b32 %r<2>;
                    mov.u32 %r1, %tid.x;
                    setp.lt.u32 %p1, %r1, 5;
                    @%p1 bra DONE;
                    bar.sync 0;
                DONE:
                    ret;
                }
                """;
        PtxModule m = PtxModule.parse(ptx);
        PtxFunction fn = m.function("half");
        Outcome a = run(m, fn, new byte[0], new int[] {1, 1, 1}, new int[] {8, 1, 1}, 0, new FlatGlobal(BASE, new byte[4]), false);
        Outcome b = run(m, fn, new byte[0], new int[] {1, 1, 1}, new int[] {8, 1, 1}, 0, new FlatGlobal(BASE, new byte[4]), true);
        assertThat(b.compiled()).isTrue();
        assertThat(a.fault()).startsWith("ILLEGAL_INSTRUCTION").contains("bar.sync reached by 3 of 8");
        assertThat(b.fault()).isEqualTo(a.fault());
    }

    @Test
    void theWatchdogStopsASpinAtTheSameInstructionBothWays() {
        String ptx = """
                .version 9.0
                .target sm_90
                .address_size 64
                .visible .entry forever(.param .u64 forever_out)
                {
                    .reg .b32 %r<3>;
                    .reg .b64 %rd<3>;
                    ld.param.u64 %rd1, [forever_out];
                    mov.u32 %r1, 0;
                LOOP:
                    add.s32 %r1, %r1, 1;
                    bra.uni LOOP;
                }
                """;
        PtxModule m = PtxModule.parse(ptx);
        PtxFunction fn = m.function("forever");
        byte[] p = new byte[8];
        PtxLaunch.put(p, 0, 8, BASE);
        PtxLaunch l = new PtxLaunch(m, fn, "t::forever", p, new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
                new FlatGlobal(BASE, new byte[4]), 0, 132, true);
        assertThat(l.runsCompiled()).isTrue();
        PtxLaunch.Block blk = new PtxLaunch.Block(l, 0, 0, 0);
        // Start near the limit, so the watchdog fires within a few instructions.
        blk.threads[0].steps = PtxLaunch.MAX_STEPS - 7;
        String compiled = faultOf(blk);
        PtxLaunch li = new PtxLaunch(m, fn, "t::forever", p, new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
                new FlatGlobal(BASE, new byte[4]), 0, 132, false);
        PtxLaunch.Block bi = new PtxLaunch.Block(li, 0, 0, 0);
        bi.threads[0].steps = PtxLaunch.MAX_STEPS - 7;
        String interpreted = faultOf(bi);
        assertThat(interpreted).startsWith("LAUNCH_TIMEOUT").contains("PTX line 12");
        assertThat(compiled).isEqualTo(interpreted);
        assertThat(blk.threads[0].frame.r).isEqualTo(bi.threads[0].frame.r);
    }

    private static String faultOf(PtxLaunch.Block b) {
        try {
            b.run();
            return null;
        } catch (PtxFault f) {
            return f.error().name() + ": " + f.getMessage();
        }
    }

    @Test
    void blocksOnSeveralThreadsShareOneCompiledClass() throws Exception {
        PtxModule m = module(FILES.get(0));
        PtxFunction fn = m.function("add_i32");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<CompiledCode>> fs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                fs.add(pool.submit(() -> {
                    go.await();
                    return PtxCompiler.codeFor(fn);
                }));
            }
            go.countDown();
            CompiledCode first = fs.get(0).get();
            assertThat(first).isNotNull();
            for (Future<CompiledCode> f : fs) {
                assertThat(f.get()).isSameAs(first);
            }
        } finally {
            pool.shutdown();
        }
    }
}
