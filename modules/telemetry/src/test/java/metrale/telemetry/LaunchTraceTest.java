// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class LaunchTraceTest {

    private final LaunchTrace trace = new Telemetry().trace();

    /** Runs {@code prev} then {@code cur} as two traced regions and returns the second diff. */
    private String diff(List<TraceEntry> prev, List<TraceEntry> cur, int maxReport) {
        trace.begin();
        prev.forEach(trace::record);
        assertThat(trace.endAndDiff(maxReport)).isEmpty();
        trace.begin();
        cur.forEach(trace::record);
        return trace.endAndDiff(maxReport).orElseThrow();
    }

    private static TraceEntry k(long func, int gx, int bx, int smem, long... args) {
        return TraceEntry.kernel(func, gx, 1, 1, bx, 1, 1, smem, args);
    }

    @Test
    void offUntilBeginAndFirstDiffIsEmpty() {
        assertThat(trace.on()).isFalse();
        trace.begin();
        assertThat(trace.on()).isTrue();
        trace.record(k(1, 1, 1, 0));
        assertThat(trace.endAndDiff(10)).isEmpty();
        assertThat(trace.on()).isFalse();
    }

    @Test
    void recordOutsideBeginEndIsDropped() {
        TraceEntry a = k(1, 1, 1, 0, 5);
        trace.record(k(2, 9, 9, 9));
        assertThat(trace.current()).isEmpty();
        trace.begin();
        trace.record(a);
        assertThat(trace.current()).containsExactly(a);
        assertThat(trace.size()).isEqualTo(1);
        assertThat(trace.endAndDiff(10)).isEmpty();
        trace.record(k(3, 9, 9, 9));
        assertThat(trace.current()).isEmpty();
        trace.begin();
        trace.record(a);
        assertThat(trace.endAndDiff(10)).hasValue("0 differing op(s) of 1\n");
    }

    @Test
    void beginClearsWhatWasRecorded() {
        trace.begin();
        trace.record(k(1, 1, 1, 0));
        trace.begin();
        assertThat(trace.current()).isEmpty();
        assertThat(trace.size()).isZero();
    }

    @Test
    void eightThreadsLoseNothing() throws InterruptedException {
        int threads = 8;
        int perThread = 20_000;
        trace.begin();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long id = t;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < perThread; i++) {
                    trace.record(TraceEntry.kernel(id, 1, 1, 1, 1, 1, 1, 0, new long[] {i}));
                }
            }));
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        List<TraceEntry> got = trace.current();
        assertThat(got).hasSize(threads * perThread);
        long[] next = new long[threads];
        for (TraceEntry e : got) {
            int id = (int) e.func();
            assertThat(e.arg(0)).as("thread %d's order", id).isEqualTo(next[id]);
            next[id]++;
        }
        assertThat(next).containsOnly(perThread);
    }

    @Test
    void namedKernelGridAndArgChange() {
        trace.nameKernel(0x1000, "mod", "add");
        String report = diff(List.of(k(0x1000, 1, 128, 0, 0x10, 5)), List.of(k(0x1000, 2, 128, 0, 0x20, 5)), 10);
        assertThat(report).isEqualTo("""
                1 differing op(s) of 1
                #0 mod::add [kernel] grid [1, 1, 1] -> [2, 1, 1]; arg0 0x10 -> 0x20 (Δ 16)
                """);
    }

    @Test
    void floatAndDoubleArgumentsPrintAsValuesIntsAndPointersAsHex() {
        trace.nameKernel(0x1000, "mod", "saxpy");
        long two = Float.floatToRawIntBits(2.0f) & 0xffffffffL;
        long three = Float.floatToRawIntBits(3.0f) & 0xffffffffL;
        String report = diff(
                List.of(TraceEntry.kernel(0x1000, 1, 1, 1, 1, 1, 1, 0,
                        new long[] {two, 0x10, 7, Double.doubleToRawLongBits(0.5)}, "fpid")),
                List.of(TraceEntry.kernel(0x1000, 1, 1, 1, 1, 1, 1, 0,
                        new long[] {three, 0x20, 9, Double.doubleToRawLongBits(-1.25)}, "fpid")), 10);
        assertThat(report).isEqualTo("1 differing op(s) of 1\n"
                + "#0 mod::saxpy [kernel] arg0 2.0f -> 3.0f; arg1 0x10 -> 0x20 (Δ 16); arg2 0x7 -> 0x9 (Δ 2);"
                + " arg3 0.5 -> -1.25\n");
    }

    @Test
    void unknownKindsKeepTheSeedsHexForm() {
        long two = Float.floatToRawIntBits(2.0f) & 0xffffffffL;
        long three = Float.floatToRawIntBits(3.0f) & 0xffffffffL;
        String report = diff(List.of(k(0xa, 1, 1, 0, two)), List.of(k(0xa, 1, 1, 0, three)), 10);
        assertThat(report).contains("arg0 0x40000000 -> 0x40400000 (Δ 4194304)");
    }

    @Test
    void argKindsMustMatchTheArgumentCount() {
        assertThatThrownBy(() -> TraceEntry.kernel(1, 1, 1, 1, 1, 1, 1, 0, new long[] {1, 2}, "f"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'f'");
    }

    @Test
    void unnamedKernelNegativeDeltaSmemBlockAndArgc() {
        String report = diff(
                List.of(k(0xdeadbeefL, 1, 32, 0, 0x100, 7)),
                List.of(k(0xdeadbeefL, 1, 64, 1024, 0xf0, 7, 9)), 10);
        assertThat(report).isEqualTo("1 differing op(s) of 1\n"
                + "#0 fn@0xdeadbeef [kernel] block [32, 1, 1] -> [64, 1, 1]; smem 0 -> 1024;"
                + " arg0 0x100 -> 0xf0 (Δ -16); argc 2 -> 3\n");
    }

    @Test
    void opChangeMemsetToKernel() {
        trace.nameKernel(0x1000, "mod", "zero");
        String report = diff(
                List.of(TraceEntry.memset(0x2000, 0, 256)),
                List.of(TraceEntry.kernel(0x1000, 1, 1, 1, 1, 1, 1, 0, new long[] {0x2000, 0, 256})), 10);
        assertThat(report).isEqualTo("1 differing op(s) of 1\n"
                + "#0 mod::zero [kernel] op fn@0x0 -> mod::zero; grid [0, 0, 0] -> [1, 1, 1];"
                + " block [0, 0, 0] -> [1, 1, 1]\n");
    }

    @Test
    void opCountMismatchAndMaxReport() {
        trace.nameKernel(0xa, "m", "a");
        String report = diff(
                List.of(k(0xa, 1, 1, 0, 1), TraceEntry.d2d(0x3000, 0x4000, 64), TraceEntry.memset(0x10, 0x1ff, 8)),
                List.of(k(0xa, 1, 1, 0, 2), TraceEntry.d2d(0x3000, 0x4100, 64)), 1);
        assertThat(report).isEqualTo("""
                2 differing op(s) of 2
                OP COUNT differs: prev 3 vs cur 2
                #0 m::a [kernel] arg0 0x1 -> 0x2 (Δ 1)
                """);
    }

    @Test
    void d2dAndMemsetDetails() {
        String report = diff(
                List.of(TraceEntry.memset(0x10, 0, 8), TraceEntry.d2d(0x3000, 0x4000, 64)),
                List.of(TraceEntry.memset(0x10, 0x1ff, 8), TraceEntry.d2d(0x3000, 0x4100, 64),
                        TraceEntry.memset(0x10, 0, 8)), 10);
        assertThat(report).isEqualTo("""
                2 differing op(s) of 2
                OP COUNT differs: prev 2 vs cur 3
                #0 fn@0x0 [memset] arg1 0x0 -> 0xff (Δ 255)
                #1 fn@0x0 [d2d] arg1 0x4000 -> 0x4100 (Δ 256)
                """);
    }

    @Test
    void argsAreUnsignedHexAndDeltaWraps() {
        String report = diff(
                List.of(k(0x1, 1, 1, 0, 0, Long.MIN_VALUE)),
                List.of(k(0x1, 1, 1, 0, -1, Long.MAX_VALUE)), 10);
        assertThat(report).isEqualTo("1 differing op(s) of 1\n"
                + "#0 fn@0x1 [kernel] arg0 0x0 -> 0xffffffffffffffff (Δ -1);"
                + " arg1 0x8000000000000000 -> 0x7fffffffffffffff (Δ -1)\n");
    }

    @Test
    void dimensionsPrintUnsigned() {
        String report = diff(List.of(k(0x1, -1, 1, 0)), List.of(k(0x1, 1, 1, -2)), 10);
        assertThat(report).isEqualTo("1 differing op(s) of 1\n"
                + "#0 fn@0x1 [kernel] grid [4294967295, 1, 1] -> [1, 1, 1]; smem 0 -> 4294967294\n");
    }

    @Test
    void funcChangeNamesBoth() {
        trace.nameKernel(0x1, "m", "old");
        trace.nameKernel(0x2, "m", "new");
        String report = diff(List.of(k(0x1, 1, 1, 0)), List.of(k(0x2, 1, 1, 0)), 10);
        assertThat(report).isEqualTo("1 differing op(s) of 1\n#0 m::new [kernel] op m::old -> m::new\n");
    }

    @Test
    void emptyTraces() {
        assertThat(diff(List.of(), List.of(), 0)).isEqualTo("0 differing op(s) of 0\n");
    }

    @Test
    void identicalTraces() {
        TraceEntry e = k(1, 2, 3, 4, 5);
        assertThat(diff(List.of(e, e), List.of(e, e), 0)).isEqualTo("0 differing op(s) of 2\n");
    }

    @Test
    void eachDiffComparesWithTheTraceBefore() {
        TraceEntry a = k(1, 1, 1, 0, 1);
        TraceEntry b = k(1, 1, 1, 0, 2);
        diff(List.of(a), List.of(b), 10);
        trace.begin();
        trace.record(b);
        assertThat(trace.endAndDiff(10)).hasValue("0 differing op(s) of 1\n");
    }

    @Test
    void kernelNames() {
        assertThat(trace.kernelName(0xab)).isEmpty();
        assertThat(trace.nameOf(0xab)).isEqualTo("fn@0xab");
        assertThat(trace.nameOf(-1)).isEqualTo("fn@0xffffffffffffffff");
        trace.nameKernel(0xab, "attn", "softmax");
        assertThat(trace.kernelName(0xab)).isEqualTo(Optional.of("attn::softmax"));
        assertThat(trace.nameOf(0xab)).isEqualTo("attn::softmax");
        assertThat(new Telemetry().trace().kernelName(0xab)).as("names are per instance").isEmpty();
    }

    @Test
    void negativeMaxReportIsRejected() {
        assertThatThrownBy(() -> trace.endAndDiff(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
