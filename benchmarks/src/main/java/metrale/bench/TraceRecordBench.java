// SPDX-License-Identifier: Apache-2.0
package metrale.bench;

import java.util.concurrent.TimeUnit;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.Telemetry;
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

/**
 * Cost of {@link LaunchTrace#record(TraceEntry)} on the launch path, per op.
 *
 * <ul>
 *   <li>{@code offGuarded}: trace off, the launch path's pattern
 *       {@code if (trace.on()) trace.record(TraceEntry.kernel(...))}; must be 0 B/op.</li>
 *   <li>{@code offBare}: trace off, {@code record} of a pre-built entry; must be 0 B/op.</li>
 *   <li>{@code onPrebuilt}: trace on, a pre-built entry recorded {@value #BATCH} times
 *       per invocation, the trace cleared by {@code begin()} before each invocation
 *       (outside the measurement). {@code begin()} keeps the list's capacity, so
 *       after the first invocation the trace neither grows without bound nor allocates.</li>
 *   <li>{@code onBuildEntry}: as {@code onPrebuilt}, but each op builds its entry
 *       as the launch path does, so B/op is the size of one entry and its args.</li>
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

    private long func = 0x7f00_1000L;
    private int grid = 256;
    private int block = 128;
    private int smem = 0;
    private long[] args = {0x7f00_0000_2000L, 0x7f00_0000_4000L, 4096};

    /** Creates the benchmark state; JMH calls it. */
    public TraceRecordBench() {
    }

    /** Makes the trace that stays off and the pre-built entry. */
    @Setup(Level.Trial)
    public void setUp() {
        off = new Telemetry().trace();
        entry = TraceEntry.kernel(func, grid, 1, 1, block, 1, 1, smem, args);
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

        /** Clears the trace, keeping its capacity, before each batch. */
        @Setup(Level.Invocation)
        public void clear() {
            trace.begin();
        }
    }

    /** Trace off, guarded: one field read, no entry built. */
    @Benchmark
    public void offGuarded() {
        if (off.on()) {
            off.record(TraceEntry.kernel(func, grid, 1, 1, block, 1, 1, smem, args));
        }
    }

    /** Trace off, unguarded call with a pre-built entry. */
    @Benchmark
    public void offBare() {
        off.record(entry);
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
     * Trace on, each op building its entry as the launch path does.
     *
     * @param r the recording trace
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void onBuildEntry(Recording r) {
        LaunchTrace on = r.trace;
        for (int i = 0; i < BATCH; i++) {
            if (on.on()) {
                on.record(TraceEntry.kernel(func, grid, 1, 1, block, 1, 1, smem, args));
            }
        }
    }
}
