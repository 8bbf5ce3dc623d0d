// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import metrale.bench.report.JmhRuns.Result;
import metrale.bench.report.JmhRuns.Run;

/**
 * The targets the page judges, and the ratios and checks computed against them from the runs,
 * each with its verdict.
 */
final class Targets {

    /** The D2D bandwidth the page compares with: an H200's device-to-device copy, bytes read plus written, per second. */
    static final double H200_D2D_BYTES_PER_S = 4.3e12;

    /** Bytes a {@code CopyBench.d2d} op moves, read plus written. */
    static final double D2D_BYTES = 2.0 * (1L << 30);

    /** Bytes per op below which "0 B/op" is met: JMH's own per-invocation bookkeeping shows as a fraction of a byte. */
    static final double ZERO_BYTES = 0.5;

    /** A comparison of {@code bench} with {@code baseline}; {@code target} NaN means none. */
    record Rule(String bench, String baseline, double target, String note) {
    }

    /** An absolute throughput target: {@code bench}'s score must be at least {@code atLeast}. */
    record Floor(String bench, double atLeast, String unit, String note) {
    }

    static final List<Rule> RULES = List.of(
            new Rule("LaunchBench.off", "LaunchBench.bare", 1.03, "launch, telemetry off"),
            new Rule("LaunchBench.trace", "LaunchBench.bare", 1.10, "launch, launch trace on"),
            new Rule("LaunchBench.jfr", "LaunchBench.bare", Double.NaN, "launch, JFR recording running"),
            new Rule("GraphBench.launchGraph", "GraphBench.bare", 1.03, "graph replay (100 kernels)"),
            new Rule("AllocBench.ledger", "AllocBench.bare", 1.25, "alloc+free, ledger with call sites, red zones off"),
            new Rule("AllocBench.ledgerNoSites", "AllocBench.bare", Double.NaN, "alloc+free, ledger without call sites"),
            new Rule("AllocBench.redZones", "AllocBench.bare", Double.NaN, "alloc+free, 256 B red zones"),
            new Rule("CopyBench.h2dHeap", "CopyBench.h2dBareNative", Double.NaN, "4 KiB H2D from a byte[] (vs bare from native)"),
            new Rule("CopyBench.h2dNative", "CopyBench.h2dBareNative", Double.NaN, "4 KiB H2D, pageable native"),
            new Rule("CopyBench.h2dPinned", "CopyBench.h2dBarePinned", Double.NaN, "4 KiB H2D, pinned"),
            new Rule("CopyBench.d2hHeap", "CopyBench.d2hBareNative", Double.NaN, "4 KiB D2H into a byte[] (vs bare into native)"),
            new Rule("CopyBench.d2hNative", "CopyBench.d2hBareNative", Double.NaN, "4 KiB D2H, pageable native"),
            new Rule("CopyBench.d2hPinned", "CopyBench.d2hBarePinned", Double.NaN, "4 KiB D2H, pinned"),
            new Rule("CopyBench.d2d", "CopyBench.d2dBare", Double.NaN, "1 GiB D2D + sync"),
            new Rule("SimBench.launchSyncTraced", "SimBench.launchSync", Double.NaN, "simulator launch+sync, trace on"));

    /**
     * A ratio inside one {@code PairedBench} result: secondary counter {@code num} over {@code den}
     * (nanoseconds summed over interleaved batches).
     */
    record Paired(String bench, String num, String den, double target, String note) {
    }

    static final List<Paired> PAIRED = List.of(
            new Paired("PairedBench.launch", "offNs", "bareNs", 1.03, "launch, telemetry off (interleaved with bare)"),
            new Paired("PairedBench.launch", "traceNs", "bareNs", 1.10, "launch, launch trace on (interleaved with bare)"),
            new Paired("PairedBench.graph", "offNs", "bareNs", 1.03, "graph replay, 100 kernels (interleaved with bare)"),
            new Paired("PairedBench.alloc", "offNs", "bareNs", 1.25, "alloc+free, ledger with call sites (interleaved with bare)"),
            new Paired("PairedBench.alloc", "traceNs", "bareNs", Double.NaN, "alloc+free, ledger without call sites (interleaved)"),
            new Paired("PoolBench.pair", "poolOffNs", "bareNs", 0.15, "pool hit alloc+free, sites off (interleaved with cuMemAlloc+cuMemFree)"),
            new Paired("PoolBench.pair", "poolOnNs", "bareNs", 0.5, "pool hit alloc+free, every site walked (interleaved)"),
            new Paired("PoolBench.pair", "poolSampledNs", "bareNs", Double.NaN, "pool hit alloc+free, one site in 64 walked (interleaved)"),
            new Paired("PoolBench.pair", "poolCudaNs", "bareNs", Double.NaN, "pool over cuMemAllocAsync, sites off (interleaved)"),
            new Paired("PoolBench.pair", "asyncNs", "bareNs", Double.NaN, "bare cuMemAllocAsync+cuMemFreeAsync (interleaved)"));

    /**
     * The run-name prefix of runs judged by issue #22's targets (the rules below, judged by
     * {@link FastTargets}) besides the rules above; runs named otherwise keep the rules they were
     * measured under.
     */
    static final String FAST_PREFIX = "h200-fast";

    /** The GPU host's cores: issue #22's simulator throughput floor is judged at this many. */
    static final int HOST_CORES = 16;

    /** Which side of its target a value must be on. */
    enum Bound {
        /** At most the target. */
        AT_MOST("≤"),
        /** At least the target. */
        AT_LEAST("≥");

        final String sign;

        Bound(String sign) {
            this.sign = sign;
        }

        /** {@return the verdict on {@code point} in {@code [lo, hi]} against {@code target}} */
        Verdict judge(double point, double lo, double hi, double target) {
            return this == AT_MOST ? Verdict.atMost(point, lo, hi, target) : Verdict.atLeast(point, lo, hi, target);
        }

        /** {@return the target as the table shows it, "—" for none} */
        String show(double target) {
            return Double.isNaN(target) ? "—" : String.format(Locale.ROOT, "%s %.2f×", sign, target);
        }
    }

    /**
     * A ratio of two secondary counters of one result: {@code num} over {@code den} plus
     * {@code plusNsPerOp} nanoseconds for each op of the {@code ops} counter; with
     * {@code throughput}, its inverse ({@code num}'s throughput over {@code den}'s). A result is
     * judged when its benchmark is {@code bench}, it has every {@code k=v} of {@code params} (empty:
     * any) and it has {@code num}. The error bar comes from the per-iteration ratios.
     */
    record CounterRule(String bench, String params, String num, String den, String ops, double plusNsPerOp,
                       boolean throughput, Bound bound, double target, String note) {
    }

    /**
     * A secondary counter's nanoseconds per op of a JMH result over a side-by-side row's median
     * ({@link SideBySide}); {@code target} NaN shows the ratio without judging it, and only where
     * the row is there.
     */
    record SideRule(String bench, String params, String counter, String ops, String row, Bound bound, double target,
                    String note) {
    }

    /**
     * A floor on a secondary metric's score (with its own error), judged on runs made with all of
     * the host's cores: named with no {@code -cpuK} suffix, or {@code -cpu}{@value #HOST_CORES}.
     */
    record MetricFloor(String bench, String params, String metric, double atLeast, String unit, String note) {
    }

    /**
     * A secondary metric's score in run {@code NAME-cpu}{@code many} over its score in run
     * {@code NAME-cpu}{@code few}: two runs of the same benchmark whose JVMs were limited to that
     * many cores ({@code taskset}, the collector named).
     */
    record Scaling(String bench, String params, String metric, int few, int many, double atLeast, String note) {
    }

    /** {@code SimPtxBench}'s case the simulator's #22 targets are judged at. */
    private static final String SIM_CASE = "blocks=parallel, kernel=twin, n=1048576";

    /** Issue #22's ratios of counters measured in one JVM. */
    static final List<CounterRule> COUNTER_RULES = List.of(
            new CounterRule("PoolBench.pair", "bytes=1048576", "defaultsNs", "bareNs", "ops", 0, false, Bound.AT_MOST,
                    0.5, "#22: alloc+free 1 MiB, the defaults, vs the warm cuMemAlloc_v2+cuMemFree_v2 pair (interleaved)"),
            new CounterRule("PoolBench.pair", "bytes=1048576", "cachingAllNs", "bareNs", "ops", 0, false, Bound.AT_MOST,
                    1.5, "#22: alloc+free 1 MiB, leakDetection=all, vs the warm cuMemAlloc_v2+cuMemFree_v2 pair (interleaved)"),
            new CounterRule("CapturedStepBench.step", "", "paramNs", "replayNs", "steps", 1500, false, Bound.AT_MOST,
                    1.0, "#22: captured step, one argument changed, vs replay + 1.5 µs (interleaved)"),
            new CounterRule("CapturedStepBench.step", "", "eagerNs", "replayNs", "steps", 0, false, Bound.AT_LEAST,
                    4.0, "#22: captured step, eager over replay (interleaved)"),
            new CounterRule("PairedBench.launch", "", "traceNs", "offNs", "ops", 0, false, Bound.AT_MOST, 1.03,
                    "#22: launch, launch trace on vs off (interleaved)"),
            new CounterRule("CopyBench.pair", "", "h2dNativeNs", "h2dBareNs", "ops", 0, false, Bound.AT_MOST, 1.05,
                    "#22: 4 KiB H2D from pageable native memory vs the bare call (interleaved)"),
            new CounterRule("CopyBench.pair", "", "h2dHeapNs", "h2dBareHeapNs", "ops", 0, false, Bound.AT_MOST, 1.05,
                    "#22: 4 KiB H2D from a byte[] vs the bare call on a byte[] (interleaved)"),
            new CounterRule("CopyBench.pair", "", "d2hNativeNs", "d2hBareNs", "ops", 0, false, Bound.AT_MOST, 1.05,
                    "#22: 4 KiB D2H into pageable native memory vs the bare call (interleaved)"),
            new CounterRule("CopyBench.pair", "", "d2hHeapNs", "d2hBareHeapNs", "ops", 0, false, Bound.AT_MOST, 1.05,
                    "#22: 4 KiB D2H into a byte[] vs the bare call on a byte[] (interleaved)"),
            new CounterRule("ThreadedLaunchBench.launch", "threads=8", "launchNs", "bareNs", "ops", 0, true,
                    Bound.AT_LEAST, 0.95, "#22: 8-thread launch throughput over the bare downcall's (interleaved)"));

    /** Issue #22's comparisons with the side-by-side, and the driver's own costs shown beside the runtime's. */
    static final List<SideRule> SIDE_RULES = List.of(
            new SideRule("PoolBench.pair", "bytes=1048576", "defaultsNs", "ops", "torch.cacheHit1MiB", Bound.AT_MOST, 1.0,
                    "#22: alloc+free 1 MiB, the defaults, below PyTorch's cache hit"),
            new SideRule("PoolBench.pair", "bytes=1048576", "defaultsNs", "ops", "cupy.poolHit1MiB", Bound.AT_MOST, 1.0,
                    "#22: alloc+free 1 MiB, the defaults, below CuPy's pool hit"),
            new SideRule("PoolBench.pair", "bytes=1048576", "bareNs", "ops", "c.allocFree1MiB", Bound.AT_MOST, Double.NaN,
                    "the bare 1 MiB pair from Java vs from C"),
            new SideRule("CopyBench.pair", "", "h2dNativeNs", "ops", "c.h2dPageable4KiB", Bound.AT_MOST, 1.1,
                    "#22: 4 KiB H2D from pageable native memory vs C"),
            new SideRule("CopyBench.pair", "", "h2dHeapNs", "ops", "c.h2dPageable4KiB", Bound.AT_MOST, 1.1,
                    "#22: 4 KiB H2D from a byte[] vs C from pageable memory"),
            new SideRule("CopyBench.pair", "", "d2hNativeNs", "ops", "c.d2hPageable4KiB", Bound.AT_MOST, 1.1,
                    "#22: 4 KiB D2H into pageable native memory vs C"),
            new SideRule("CopyBench.pair", "", "d2hHeapNs", "ops", "c.d2hPageable4KiB", Bound.AT_MOST, 1.1,
                    "#22: 4 KiB D2H into a byte[] vs C into pageable memory"),
            new SideRule("PairedBench.launch", "kernel=empty", "offNs", "ops", "c.launchEmpty", Bound.AT_MOST, Double.NaN,
                    "launch, telemetry off, vs C's cuLaunchKernel"),
            new SideRule("CapturedStepBench.step", "kernels=20", "replayNs", "steps", "c.graphLaunch20", Bound.AT_MOST,
                    Double.NaN, "captured step replay vs C's cuGraphLaunch"),
            new SideRule("CapturedStepBench.step", "kernels=20", "paramNs", "steps", "c.graphSetLaunch20", Bound.AT_MOST,
                    Double.NaN, "captured step, one argument changed, vs C's node set + cuGraphLaunch"),
            new SideRule("CapturedStepBench.step", "kernels=100", "replayNs", "steps", "c.graphLaunch100", Bound.AT_MOST,
                    Double.NaN, "captured step replay vs C's cuGraphLaunch"),
            new SideRule("CapturedStepBench.step", "kernels=100", "paramNs", "steps", "c.graphSetLaunch100", Bound.AT_MOST,
                    Double.NaN, "captured step, one argument changed, vs C's node set + cuGraphLaunch"));

    /** Issue #22's absolute floors. */
    static final List<MetricFloor> METRIC_FLOORS = List.of(
            new MetricFloor("SimPtxBench.axpy", SIM_CASE, "threads", 1e9, "thread-invocations/s",
                    "#22: simulator axpy twin, blocks=parallel, all " + HOST_CORES + " cores"));

    /** Issue #22's scaling targets. */
    static final List<Scaling> SCALINGS = List.of(
            new Scaling("SimPtxBench.axpy", SIM_CASE, "threads", 1, HOST_CORES, 8.0,
                    "#22: simulator axpy twin, blocks=parallel, " + HOST_CORES + " cores over 1"));

    static final List<Floor> FLOORS = List.of(
            new Floor("SimBench.axpyThreads", 1e8, "thread-invocations/s", "simulator axpy kernel, one core"),
            new Floor("SimBench.launchSync", 2e6, "launch+sync/s", "simulator launch+sync op rate"));

    /** How a target fared, judged with the error bars. */
    enum Verdict {
        /** The whole error range meets the target. */
        MET("met"),
        /** The error range reaches both sides of the target. */
        WITHIN_ERROR("within error"),
        /** No part of the error range meets the target. */
        MISSED("**missed**"),
        /** No error estimate (summed counters): judged on the point value, met. */
        MET_NO_ERROR("met (no error bar)"),
        /** No error estimate (summed counters): judged on the point value, missed. */
        MISSED_NO_ERROR("**missed** (no error bar)"),
        /** No target. */
        NONE("—"),
        /** A target whose baseline is not in the run (a counter, a side-by-side row, a companion run). */
        NO_BASELINE("not judged: no baseline");

        final String label;

        Verdict(String label) {
            this.label = label;
        }

        /** {@return whether this counts as missed} */
        boolean missed() {
            return this == MISSED || this == MISSED_NO_ERROR;
        }

        /**
         * {@return the verdict of "value at most {@code target}" for a value in {@code [lo, hi]}}
         *
         * @param point the point value, used where there is no range
         */
        static Verdict atMost(double point, double lo, double hi, double target) {
            if (Double.isNaN(target) || Double.isNaN(point)) {
                return NONE;
            }
            if (Double.isNaN(lo) || Double.isNaN(hi) || lo == hi) {
                return point <= target ? MET_NO_ERROR : MISSED_NO_ERROR;
            }
            return hi <= target ? MET : lo > target ? MISSED : WITHIN_ERROR;
        }

        /** {@return the verdict of "value at least {@code floor}" for a value in {@code [lo, hi]}} */
        static Verdict atLeast(double point, double lo, double hi, double floor) {
            if (Double.isNaN(point)) {
                return NONE;
            }
            if (Double.isNaN(lo) || Double.isNaN(hi) || lo == hi) {
                return point >= floor ? MET_NO_ERROR : MISSED_NO_ERROR;
            }
            return lo >= floor ? MET : hi < floor ? MISSED : WITHIN_ERROR;
        }
    }

    /**
     * A computed ratio or floor check; {@code lo} and {@code hi} bound the ratio (or, without a
     * baseline, the score) within the error bars, NaN where there is no error estimate;
     * {@code why} says what is missing where the verdict is {@link Verdict#NO_BASELINE}, else
     * {@code ""}.
     */
    record Ratio(String run, String what, String bench, String params, String baseline, double score,
                 double base, String unit, double ratio, double lo, double hi, String target, Verdict verdict,
                 String why) {

        /** A row with nothing to add to its verdict. */
        Ratio(String run, String what, String bench, String params, String baseline, double score, double base,
              String unit, double ratio, double lo, double hi, String target, Verdict verdict) {
            this(run, what, bench, params, baseline, score, base, unit, ratio, lo, hi, target, verdict, "");
        }
    }

    static List<Ratio> ratios(List<Run> runs) {
        List<Ratio> out = new ArrayList<>();
        for (Run run : runs) {
            older(run, out);
            if (fast(run)) {
                FastTargets.judge(run, runs, out);
            }
        }
        return out;
    }

    /** The rules every run is judged by, whatever its name. */
    private static void older(Run run, List<Ratio> out) {
        for (Rule rule : RULES) {
            for (Result r : run.results()) {
                if (!r.bench().equals(rule.bench())) {
                    continue;
                }
                Result b = run.find(rule.baseline(), r.params());
                if (b == null) {
                    continue;
                }
                double ratio = r.secondsPerOp() / b.secondsPerOp();
                double[] rb = r.secondsPerOpBounds();
                double[] bb = b.secondsPerOpBounds();
                double lo = rb[0] / bb[1];
                double hi = rb[1] / bb[0];
                if (Double.isNaN(r.error()) || Double.isNaN(b.error())) {
                    lo = Double.NaN;
                    hi = Double.NaN;
                }
                boolean has = !Double.isNaN(rule.target());
                out.add(new Ratio(run.name(), rule.note(), r.bench(), r.params(), b.bench(), r.score(), b.score(), r.unit(), ratio,
                        lo, hi, has ? String.format(Locale.ROOT, "≤ %.2f×", rule.target()) : "—",
                        Verdict.atMost(ratio, lo, hi, rule.target())));
                if (rule.bench().equals("LaunchBench.off")) {
                    double bl = Math.max(0, r.bytesPerOp() - r.bytesPerOpError());
                    double bh = r.bytesPerOp() + r.bytesPerOpError();
                    // Below half a byte counts as none: JMH's own bookkeeping shows as a fraction of a byte.
                    Verdict v = Double.isNaN(r.bytesPerOp()) ? Verdict.NONE
                            : Double.isNaN(r.bytesPerOpError()) ? (r.bytesPerOp() < ZERO_BYTES ? Verdict.MET_NO_ERROR : Verdict.MISSED_NO_ERROR)
                            : bh < ZERO_BYTES ? Verdict.MET : bl >= ZERO_BYTES ? Verdict.MISSED : Verdict.WITHIN_ERROR;
                    out.add(new Ratio(run.name(), "launch, telemetry off: allocation", r.bench(), r.params(), "", r.bytesPerOp(),
                            Double.NaN, "B/op", Double.NaN, bl, bh, "0 B/op", v));
                }
            }
        }
        for (Paired p : PAIRED) {
            for (Result r : run.results()) {
                if (!r.bench().equals(p.bench())) {
                    continue;
                }
                Double num = r.secondary().get(p.num());
                Double den = r.secondary().get(p.den());
                Double ops = r.secondary().get("ops");
                if (num == null || den == null || ops == null || ops == 0) {
                    continue;
                }
                double ratio = num / den;
                double ne = r.secondaryError().getOrDefault(p.num(), Double.NaN);
                double de = r.secondaryError().getOrDefault(p.den(), Double.NaN);
                double lo = Double.isNaN(ne) || Double.isNaN(de) ? Double.NaN : (num - ne) / (den + de);
                double hi = Double.isNaN(ne) || Double.isNaN(de) ? Double.NaN
                        : den - de <= 0 ? Double.POSITIVE_INFINITY : (num + ne) / (den - de);
                boolean has = !Double.isNaN(p.target());
                // graph and alloc ignore the kernel parameter: their two results are repeats.
                String params = !p.bench().startsWith("PairedBench.") || p.bench().equals("PairedBench.launch") ? r.params()
                        : r.params() + " (unused; a repeat)";
                out.add(new Ratio(run.name(), p.note(), r.bench() + ":" + p.num(), params, r.bench() + ":" + p.den(),
                        num / ops, den / ops, "ns/op", ratio, lo, hi,
                        has ? String.format(Locale.ROOT, "≤ %.2f×", p.target()) : "—",
                        Verdict.atMost(ratio, lo, hi, p.target())));
            }
        }
        for (Result r : run.results()) {
            Double calls = r.secondary().get("driverAllocs");
            if (r.bench().endsWith("Bench.step") && calls != null) {
                out.add(new Ratio(run.name(), "steady-state pool step: driver allocation calls", r.bench() + ":driverAllocs",
                        r.params(), "", calls, Double.NaN, "calls", Double.NaN, Double.NaN, Double.NaN, "0",
                        calls == 0 ? Verdict.MET : Verdict.MISSED));
            }
        }
        for (Floor f : FLOORS) {
            for (Result r : run.results()) {
                if (r.bench().equals(f.bench())) {
                    double lo = r.score() - r.error();
                    double hi = r.score() + r.error();
                    out.add(new Ratio(run.name(), f.note(), r.bench(), r.params(), "", r.score(), Double.NaN, r.unit(),
                            Double.NaN, lo, hi, String.format(Locale.ROOT, "≥ %.0e %s", f.atLeast(), f.unit()),
                            Verdict.atLeast(r.score(), lo, hi, f.atLeast())));
                }
            }
        }
        for (Result r : run.results()) {
            if (r.bench().equals("CopyBench.d2d") || r.bench().equals("CopyBench.d2dBare")) {
                double bw = D2D_BYTES / r.secondsPerOp();
                out.add(new Ratio(run.name(), "1 GiB D2D bandwidth, TB/s (read+written) and fraction of 4.3 TB/s",
                        r.bench(), r.params(), "", bw / 1e12, Double.NaN, "TB/s", bw / H200_D2D_BYTES_PER_S, Double.NaN,
                        Double.NaN, "—", Verdict.NONE));
            }
        }
    }

    /** {@return whether {@code run} is judged by issue #22's targets: its name starts with {@link #FAST_PREFIX}} */
    static boolean fast(Run run) {
        return run.name().startsWith(FAST_PREFIX);
    }

    private Targets() {
    }
}
