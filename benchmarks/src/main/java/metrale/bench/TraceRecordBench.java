// SPDX-License-Identifier: Apache-2.0
package metrale.bench;

import java.util.concurrent.TimeUnit;
import metrale.gpu.KernelArgs;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.Telemetry;
import metrale.telemetry.TraceArgs;
import metrale.telemetry.TraceEntry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Cost of recording one op in the {@link LaunchTrace}, per op: the launch path's
 * {@link LaunchTrace#recordKernel}, {@link LaunchTrace#recordMemset} and
 * {@link LaunchTrace#recordD2d}, and {@link LaunchTrace#record(TraceEntry)} of an entry.
 *
 * <ul>
 *   <li>{@code offGuarded}: trace off, the launch path's pattern
 *       {@code if (trace.on()) trace.recordKernel(...)}; must be 0 B/op.</li>
 *   <li>{@code offBare}: trace off, {@code record} of a pre-built entry; must be 0 B/op.</li>
 *   <li>{@code onKernel}: trace on, {@code recordKernel} of a filled {@link KernelArgs} of three
 *       arguments (two pointers and a length), as the runtime core records a launch; the
 *       {@value #BATCH} ops of an invocation go into a trace cleared by {@code begin()} before
 *       it (outside the measurement), so after the first invocation the thread's ring holds a
 *       batch without growing: must be 0 B/op.</li>
 *   <li>{@code onKernelArray}: as {@code onKernel}, the arguments read from a Java array, which
 *       separates the ring's cost from reading {@link KernelArgs}' native memory.</li>
 *   <li>{@code onMemset}, {@code onD2d}: as {@code onKernel}, the runtime's memset and copy
 *       records; 0 B/op.</li>
 *   <li>{@code onPrebuilt}: trace on, {@code record} of a pre-built entry; 0 B/op.</li>
 *   <li>{@code onBuildEntry}: trace on, each op building its entry first, as the launch path did
 *       before it had {@code recordKernel}; B/op is the entry and its arrays.</li>
 * </ul>
 *
 * Run: {@code java -jar benchmarks/target/benchmarks.jar TraceRecordBench -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TraceRecordBench {

    /** Ops recorded per invocation of the trace-on benchmarks. */
    public static final int BATCH = 4096;

    private LaunchTrace off;
    private TraceEntry entry;
    private KernelArgs kernelArgs;
    private TraceArgs arrayArgs;

    private long func = 0x7f00_1000L;
    private int grid = 256;
    private int block = 128;
    private int smem = 0;
    private long[] args = {0x7f00_0000_2000L, 0x7f00_0000_4000L, 4096};
    private String kinds = "ppl";

    /** Creates the benchmark state; JMH calls it. */
    public TraceRecordBench() {
    }

    /** Makes the trace that stays off, the pre-built entry and the arguments. */
    @Setup(Level.Trial)
    public void setUp() {
        off = new Telemetry().trace();
        entry = TraceEntry.kernel(func, grid, 1, 1, block, 1, 1, smem, args, kinds);
        kernelArgs = new KernelArgs().ptr(args[0]).ptr(args[1]).i64(args[2]);
        long[] words = args.clone();
        arrayArgs = new TraceArgs() {
            @Override
            public int argc() {
                return words.length;
            }

            @Override
            public long argWord(int i) {
                return words[i];
            }

            @Override
            public char argKind(int i) {
                return 'p';
            }
        };
    }

    /** Frees the arguments' native memory. */
    @TearDown(Level.Trial)
    public void tearDown() {
        kernelArgs.close();
    }

    /**
     * The recording trace, in a state of its own so that its per-invocation
     * setup, which JMH times around every invocation, stays off the trace-off
     * benchmarks.
     */
    @State(Scope.Thread)
    public static class Recording {
        LaunchTrace trace;

        /** Creates the state; JMH calls it. */
        public Recording() {
        }

        /** Makes the trace. */
        @Setup(Level.Trial)
        public void setUp() {
            trace = new Telemetry().trace();
        }

        /** Clears the trace, keeping the ring's chunks, before each batch. */
        @Setup(Level.Invocation)
        public void clear() {
            trace.begin();
        }
    }

    /** Trace off, guarded as the launch path guards: one field read. */
    @Benchmark
    public void offGuarded() {
        if (off.on()) {
            off.recordKernel(func, grid, 1, 1, block, 1, 1, smem, kernelArgs);
        }
    }

    /** Trace off, unguarded call with a pre-built entry. */
    @Benchmark
    public void offBare() {
        off.record(entry);
    }

    /**
     * Trace on, a launch's record from its {@link KernelArgs}.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onKernel(Recording r) {
        LaunchTrace on = r.trace;
        KernelArgs a = kernelArgs;
        for (int i = 0; i < BATCH; i++) {
            on.recordKernel(func, grid, 1, 1, block, 1, 1, smem, a);
        }
    }

    /**
     * Trace on, a launch's record from arguments in a Java array.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onKernelArray(Recording r) {
        LaunchTrace on = r.trace;
        TraceArgs a = arrayArgs;
        for (int i = 0; i < BATCH; i++) {
            on.recordKernel(func, grid, 1, 1, block, 1, 1, smem, a);
        }
    }

    /**
     * Trace on, an asynchronous memset's record.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onMemset(Recording r) {
        LaunchTrace on = r.trace;
        for (int i = 0; i < BATCH; i++) {
            on.recordMemset(args[0], 0, args[2]);
        }
    }

    /**
     * Trace on, a device-to-device copy's record.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onD2d(Recording r) {
        LaunchTrace on = r.trace;
        for (int i = 0; i < BATCH; i++) {
            on.recordD2d(args[0], args[1], args[2]);
        }
    }

    /**
     * Trace on, a pre-built entry.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onPrebuilt(Recording r) {
        LaunchTrace on = r.trace;
        for (int i = 0; i < BATCH; i++) {
            on.record(entry);
        }
    }

    /**
     * Trace on, each op building its entry first.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onBuildEntry(Recording r) {
        LaunchTrace on = r.trace;
        for (int i = 0; i < BATCH; i++) {
            if (on.on()) {
                on.record(TraceEntry.kernel(func, grid, 1, 1, block, 1, 1, smem, args, kinds));
            }
        }
    }
}
