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

    static Outcome run(PtxModule m, PtxFunction fn, byte[] params, int[] grid, int[] block, int dyn, HeapGlobal g,
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
            Outcome a = run(m, fn, params, grid, block, dyn, new HeapGlobal(BASE, mem.clone()), false);
            Outcome b = run(m, fn, params, grid, block, dyn, new HeapGlobal(BASE, mem.clone()), true);
            String what = entry + " grid " + Arrays.toString(grid) + " block " + Arrays.toString(block);
            assertThat(a.compiled()).isFalse();
            assertThat(b.compiled()).as(what).isTrue();
            assertThat(b.fault()).as(what).isEqualTo(a.fault());
            assertThat(b.timer()).as(what).isEqualTo(a.timer());
            assertThat(b.memory()).as(what).isEqualTo(a.memory());
        }
    }

    /** Every block of the grid through {@link PtxLaunch.Block#run}, every thread a record of its own. */
    static Outcome runWhole(PtxModule m, PtxFunction fn, byte[] params, int[] grid, int[] block, int dyn, HeapGlobal g) {
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
            Outcome whole = runWhole(m, fn, params, grid, block, dyn, new HeapGlobal(BASE, mem.clone()));
            Outcome each = run(m, fn, params, grid, block, dyn, new HeapGlobal(BASE, mem.clone()), true);
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

    @Test
    void axpyComputesFmaCompiled() {
        PtxModule m = module(FILES.get(0));
        PtxFunction fn = m.function("axpy_f32");
        int n = 100;
        HeapGlobal g = new HeapGlobal(BASE, new byte[8 * n]);
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
        HeapGlobal g = new HeapGlobal(BASE, new byte[4 * n]);
        Outcome o = run(m, fn, new byte[0], new int[] {1, 1, 1}, new int[] {n, 1, 1}, 0, g, true);
        assertThat(o.compiled()).isFalse();
        assertThat(o.fault()).isNull();
        for (int i = 0; i < n; i++) {
            assertThat(PtxLaunch.get(o.memory(), 4 * i, 4)).isEqualTo(2L * i + 1);
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
        Outcome a = run(m, fn, p, new int[] {1, 1, 1}, new int[] {32, 1, 1}, 0, new HeapGlobal(BASE, new byte[40]), false);
        Outcome b = run(m, fn, p, new int[] {1, 1, 1}, new int[] {32, 1, 1}, 0, new HeapGlobal(BASE, new byte[40]), true);
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
        Outcome a = run(m, fn, new byte[0], new int[] {1, 1, 1}, new int[] {8, 1, 1}, 0, new HeapGlobal(BASE, new byte[4]), false);
        Outcome b = run(m, fn, new byte[0], new int[] {1, 1, 1}, new int[] {8, 1, 1}, 0, new HeapGlobal(BASE, new byte[4]), true);
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
                new HeapGlobal(BASE, new byte[4]), 0, 132, true);
        assertThat(l.runsCompiled()).isTrue();
        PtxLaunch.Block blk = new PtxLaunch.Block(l, 0, 0, 0);
        // Start near the limit, so the watchdog fires within a few instructions.
        blk.threads[0].steps = PtxLaunch.MAX_STEPS - 7;
        String compiled = faultOf(blk);
        PtxLaunch li = new PtxLaunch(m, fn, "t::forever", p, new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
                new HeapGlobal(BASE, new byte[4]), 0, 132, false);
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
