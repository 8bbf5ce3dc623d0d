// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import metrale.bench.cuda.GraphBench;
import metrale.bench.cuda.LaunchBench;

/**
 * Makes the benchmarks' results page (Markdown, on standard output) and an SVG plot of the
 * launch-path ratios from JMH JSON result files, with no library but the JDK.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar metrale.bench.report.ResultsPage \
 *     [--svg benchmarks/launch-ratios.svg] [--svg-link launch-ratios.svg] RUN-jmh.json... &gt; benchmarks/README.md
 * </pre>
 *
 * Beside each {@code NAME-jmh.json} a {@code NAME-meta.properties} (written by
 * {@code run-bench.sh}: machine, cpu, gpu, driver, jvm, date, command) describes the run; without
 * one the page says what JMH's JSON itself records. Each ratio is a benchmark's score over its
 * baseline's with the same parameters, in the direction where above 1 means slower than the
 * baseline. Targets are judged with JMH's 99.9% error bars: a target is met when the whole error
 * range of the ratio (the worst of both scores' bounds) meets it, missed when none of the range
 * does, and "within error" otherwise. Throughput targets compare the score itself the same way.
 * Every number in the page's prose is computed from the result files too.
 */
public final class ResultsPage {

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

    /** The variants of {@code PoolBench.pair} the pool plot draws: counter, label, colour. */
    static final String[][] POOL_SERIES = {
            {"bareNs", "cuMemAlloc+cuMemFree", "#000000"},
            {"asyncNs", "cuMemAllocAsync+cuMemFreeAsync", "#7b1fa2"},
            {"poolCudaNs", "pool over cuMemAllocAsync", "#ef6c00"},
            {"poolOnNs", "pool hit, sites on", "#c62828"},
            {"poolSampledNs", "pool hit, 1 site in 64", "#f9a825"},
            {"poolOffNs", "pool hit, sites off", "#2e7d32"}};

    static final List<Floor> FLOORS = List.of(
            new Floor("SimBench.axpyThreads", 1e8, "thread-invocations/s", "simulator axpy kernel, one core"),
            new Floor("SimBench.launchSync", 2e6, "launch+sync/s", "simulator launch+sync op rate"));

    /** One JMH result. */
    record Result(String run, String bench, String params, String mode, double score, double error, String unit,
                  double bytesPerOp, double bytesPerOpError, Map<String, Double> secondary,
                  Map<String, Double> secondaryError) {

        /**
         * {@return the least and the most seconds per op within the score's error} Both are the
         * point value where JMH gave no error; the most is infinite where a throughput's error
         * reaches zero.
         */
        double[] secondsPerOpBounds() {
            if (Double.isNaN(error)) {
                return new double[] {secondsPerOp(), secondsPerOp()};
            }
            double lo = at(score - error);
            double hi = at(score + error);
            if (unit.startsWith("ops/")) {
                return new double[] {hi, score - error <= 0 ? Double.POSITIVE_INFINITY : lo};
            }
            return new double[] {Math.max(0, lo), hi};
        }

        private double at(double s) {
            return new Result(run, bench, params, mode, s, error, unit, bytesPerOp, bytesPerOpError, secondary,
                    secondaryError).secondsPerOp();
        }

        /** {@return the score in seconds per op, or NaN for a mode without one} */
        double secondsPerOp() {
            double scale = switch (unit.substring(0, unit.indexOf('/'))) {
                case "ns" -> 1e-9;
                case "us" -> 1e-6;
                case "ms" -> 1e-3;
                case "s" -> 1.0;
                default -> Double.NaN;
            };
            if (unit.startsWith("ops/")) {
                String per = unit.substring(4);
                double sec = switch (per) {
                    case "ns" -> 1e-9;
                    case "us" -> 1e-6;
                    case "ms" -> 1e-3;
                    case "s" -> 1.0;
                    default -> Double.NaN;
                };
                return sec / score;
            }
            return score * scale;
        }
    }

    /** A run: its results and what describes it. */
    record Run(String name, Path json, Properties meta, List<Result> results, Map<String, Object> first) {
    }

    private ResultsPage() {
    }

    /**
     * Writes the page to standard output and the plot to {@code --svg}.
     *
     * @param args {@code [--svg FILE] [--svg-link NAME] JSON...}
     * @throws IOException if a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        Path svg = null;
        Path poolSvg = null;
        String svgLink = "launch-ratios.svg";
        List<Path> jsons = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--svg" -> svg = Path.of(args[++i]);
                case "--svg-link" -> svgLink = args[++i];
                case "--pool-svg" -> poolSvg = Path.of(args[++i]);
                default -> jsons.add(Path.of(args[i]));
            }
        }
        if (jsons.isEmpty()) {
            System.err.println("usage: ResultsPage [--svg FILE] [--svg-link NAME] RUN-jmh.json... > README.md");
            System.exit(2);
        }
        List<Run> runs = readAll(jsons);
        List<Ratio> ratios = ratios(runs);
        if (svg != null) {
            Files.writeString(svg, svg(ratios), StandardCharsets.UTF_8);
        }
        String pool = poolSvg(runs);
        if (poolSvg != null && pool != null) {
            Files.writeString(poolSvg, pool, StandardCharsets.UTF_8);
        }
        String page = page(runs, ratios, svg != null ? svgLink : null);
        if (poolSvg != null && pool != null) {
            page = page.replace("\n### Reading the table\n", "\n![pool pair cost by size](" + poolSvg.getFileName()
                    + ")\n\n### Reading the table\n");
        }
        System.out.print(page);
    }

    /** {@return the runs of the given result files, in that order} */
    static List<Run> readAll(List<Path> jsons) throws IOException {
        List<Run> runs = new ArrayList<>();
        for (Path p : jsons) {
            runs.add(read(p));
        }
        return runs;
    }

    static Run read(Path json) throws IOException {
        Object doc = Json.parse(Files.readString(json, StandardCharsets.UTF_8));
        if (!(doc instanceof List<?> list)) {
            throw new IllegalArgumentException(json + ": not a JMH result file (expected a JSON array)");
        }
        String name = json.getFileName().toString().replaceFirst("(-jmh)?\\.json$", "");
        Properties meta = new Properties();
        Path mp = json.resolveSibling(name + "-meta.properties");
        if (Files.exists(mp)) {
            try (Reader r = Files.newBufferedReader(mp, StandardCharsets.UTF_8)) {
                meta.load(r);
            }
        }
        List<Result> out = new ArrayList<>();
        Map<String, Object> first = null;
        for (Object o : list) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) o;
            if (first == null) {
                first = m;
            }
            String full = (String) m.get("benchmark");
            String[] parts = full.split("\\.");
            String bench = parts[parts.length - 2] + "." + parts[parts.length - 1];
            String params = "";
            if (m.get("params") instanceof Map<?, ?> pm) {
                StringBuilder b = new StringBuilder();
                for (var e : new TreeMap<>(pm).entrySet()) {
                    b.append(b.isEmpty() ? "" : ", ").append(e.getKey()).append('=').append(e.getValue());
                }
                params = b.toString();
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> pmx = (Map<String, Object>) m.get("primaryMetric");
            double bpo = Double.NaN;
            double bpoError = Double.NaN;
            Map<String, Double> secondary = new LinkedHashMap<>();
            Map<String, Double> secondaryError = new LinkedHashMap<>();
            if (m.get("secondaryMetrics") instanceof Map<?, ?> sm) {
                for (var e : sm.entrySet()) {
                    if (e.getValue() instanceof Map<?, ?> v) {
                        secondary.put(e.getKey().toString(), Json.number(v.get("score")));
                        secondaryError.put(e.getKey().toString(), Json.number(v.get("scoreError")));
                        if (e.getKey().toString().endsWith("gc.alloc.rate.norm")) {
                            bpo = Json.number(v.get("score"));
                            bpoError = Json.number(v.get("scoreError"));
                        }
                    }
                }
            }
            out.add(new Result(name, bench, params, (String) m.get("mode"), Json.number(pmx.get("score")),
                    Json.number(pmx.get("scoreError")), (String) pmx.get("scoreUnit"), bpo, bpoError, secondary,
                    secondaryError));
        }
        return new Run(name, json, meta, out, first == null ? Map.of() : first);
    }

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
        NONE("—");

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
     * baseline, the score) within the error bars, NaN where there is no error estimate.
     */
    record Ratio(String run, String what, String bench, String params, String baseline, double score,
                 double base, String unit, double ratio, double lo, double hi, String target, Verdict verdict) {
    }

    static List<Ratio> ratios(List<Run> runs) {
        List<Ratio> out = new ArrayList<>();
        for (Run run : runs) {
            for (Rule rule : RULES) {
                for (Result r : run.results) {
                    if (!r.bench.equals(rule.bench)) {
                        continue;
                    }
                    Result b = find(run, rule.baseline, r.params);
                    if (b == null) {
                        continue;
                    }
                    double ratio = r.secondsPerOp() / b.secondsPerOp();
                    double[] rb = r.secondsPerOpBounds();
                    double[] bb = b.secondsPerOpBounds();
                    double lo = rb[0] / bb[1];
                    double hi = rb[1] / bb[0];
                    if (Double.isNaN(r.error) || Double.isNaN(b.error)) {
                        lo = Double.NaN;
                        hi = Double.NaN;
                    }
                    boolean has = !Double.isNaN(rule.target);
                    out.add(new Ratio(run.name, rule.note, r.bench, r.params, b.bench, r.score, b.score, r.unit, ratio,
                            lo, hi, has ? String.format(Locale.ROOT, "≤ %.2f×", rule.target) : "—",
                            Verdict.atMost(ratio, lo, hi, rule.target)));
                    if (rule.bench.equals("LaunchBench.off")) {
                        double bl = Math.max(0, r.bytesPerOp - r.bytesPerOpError);
                        double bh = r.bytesPerOp + r.bytesPerOpError;
                        // Below half a byte counts as none: JMH's own bookkeeping shows as a fraction of a byte.
                        Verdict v = Double.isNaN(r.bytesPerOp) ? Verdict.NONE
                                : Double.isNaN(r.bytesPerOpError) ? (r.bytesPerOp < ZERO_BYTES ? Verdict.MET_NO_ERROR : Verdict.MISSED_NO_ERROR)
                                : bh < ZERO_BYTES ? Verdict.MET : bl >= ZERO_BYTES ? Verdict.MISSED : Verdict.WITHIN_ERROR;
                        out.add(new Ratio(run.name, "launch, telemetry off: allocation", r.bench, r.params, "", r.bytesPerOp,
                                Double.NaN, "B/op", Double.NaN, bl, bh, "0 B/op", v));
                    }
                }
            }
            for (Paired p : PAIRED) {
                for (Result r : run.results) {
                    if (!r.bench.equals(p.bench)) {
                        continue;
                    }
                    Double num = r.secondary.get(p.num);
                    Double den = r.secondary.get(p.den);
                    Double ops = r.secondary.get("ops");
                    if (num == null || den == null || ops == null || ops == 0) {
                        continue;
                    }
                    double ratio = num / den;
                    double ne = r.secondaryError.getOrDefault(p.num, Double.NaN);
                    double de = r.secondaryError.getOrDefault(p.den, Double.NaN);
                    double lo = Double.isNaN(ne) || Double.isNaN(de) ? Double.NaN : (num - ne) / (den + de);
                    double hi = Double.isNaN(ne) || Double.isNaN(de) ? Double.NaN
                            : den - de <= 0 ? Double.POSITIVE_INFINITY : (num + ne) / (den - de);
                    boolean has = !Double.isNaN(p.target);
                    // graph and alloc ignore the kernel parameter: their two results are repeats.
                    String params = !p.bench.startsWith("PairedBench.") || p.bench.equals("PairedBench.launch") ? r.params
                            : r.params + " (unused; a repeat)";
                    out.add(new Ratio(run.name, p.note, r.bench + ":" + p.num, params, r.bench + ":" + p.den,
                            num / ops, den / ops, "ns/op", ratio, lo, hi,
                            has ? String.format(Locale.ROOT, "≤ %.2f×", p.target) : "—",
                            Verdict.atMost(ratio, lo, hi, p.target)));
                }
            }
            for (Result r : run.results) {
                Double calls = r.secondary.get("driverAllocs");
                if (r.bench.endsWith("Bench.step") && calls != null) {
                    out.add(new Ratio(run.name, "steady-state pool step: driver allocation calls", r.bench + ":driverAllocs",
                            r.params, "", calls, Double.NaN, "calls", Double.NaN, Double.NaN, Double.NaN, "0",
                            calls == 0 ? Verdict.MET : Verdict.MISSED));
                }
            }
            for (Floor f : FLOORS) {
                for (Result r : run.results) {
                    if (r.bench.equals(f.bench)) {
                        double lo = r.score - r.error;
                        double hi = r.score + r.error;
                        out.add(new Ratio(run.name, f.note, r.bench, r.params, "", r.score, Double.NaN, r.unit,
                                Double.NaN, lo, hi, String.format(Locale.ROOT, "≥ %.0e %s", f.atLeast, f.unit),
                                Verdict.atLeast(r.score, lo, hi, f.atLeast)));
                    }
                }
            }
            for (Result r : run.results) {
                if (r.bench.equals("CopyBench.d2d") || r.bench.equals("CopyBench.d2dBare")) {
                    double bw = D2D_BYTES / r.secondsPerOp();
                    out.add(new Ratio(run.name, "1 GiB D2D bandwidth, TB/s (read+written) and fraction of 4.3 TB/s",
                            r.bench, r.params, "", bw / 1e12, Double.NaN, "TB/s", bw / H200_D2D_BYTES_PER_S, Double.NaN,
                            Double.NaN, "—", Verdict.NONE));
                }
            }
        }
        return out;
    }

    private static Result find(Run run, String bench, String params) {
        for (Result r : run.results) {
            if (r.bench.equals(bench) && r.params.equals(params)) {
                return r;
            }
        }
        return null;
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        double a = Math.abs(v);
        if (a >= 1e6) {
            return String.format(Locale.ROOT, "%.3e", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    static String page(List<Run> runs, List<Ratio> ratios, String svgLink) {
        StringBuilder b = new StringBuilder();
        b.append("# metrale-gpu benchmarks: results\n\n");
        b.append("Generated by `metrale.bench.report.ResultsPage` from the JMH result files listed below; do not edit by hand.\n");
        b.append("Every number here comes from one of those files; \"How to reproduce\" says how each was made.\n\n");

        b.append("## Targets\n\n");
        b.append("A ratio is the runtime's time per op over the baseline's (bare driver calls through `java.lang.foreign` "
                + "handles made in `metrale.bench.cuda.Bare`), same parameters, same run; above 1 is slower.\n\n");
        b.append("The range is the ratio (or, without a baseline, the score) within JMH's 99.9% error bars of both "
                + "scores; a target is met when the whole range meets it, missed when none of it does, and within "
                + "error otherwise. Summed counters (`PairedBench`) have no error estimate and are judged on the value.\n\n");
        b.append("| run | what | benchmark | params | score | baseline score | unit | ratio | range (99.9%) | target | met? |\n");
        b.append("|---|---|---|---|---:|---:|---|---:|---|---|---|\n");
        for (Ratio r : ratios) {
            b.append("| ").append(r.run).append(" | ").append(r.what).append(" | `").append(r.bench).append('`')
                    .append(r.baseline.isEmpty() ? "" : " vs `" + r.baseline + "`").append(" | ").append(r.params)
                    .append(" | ").append(fmt(r.score)).append(" | ").append(fmt(r.base)).append(" | ").append(r.unit)
                    .append(" | ").append(Double.isNaN(r.ratio) ? "—" : String.format(Locale.ROOT, "%.3f", r.ratio))
                    .append(" | ").append(range(r.lo, r.hi))
                    .append(" | ").append(r.target).append(" | ").append(r.verdict.label).append(" |\n");
        }
        if (svgLink != null) {
            b.append("\n![launch-path ratios](").append(svgLink).append(")\n");
        }

        b.append("\n### Reading the table\n\n");
        b.append(reading(runs, ratios));

        for (Run run : runs) {
            b.append("\n## Run `").append(run.name).append("`\n\n");
            Properties m = run.meta;
            Map<String, Object> f = run.first;
            row(b, "machine", m.getProperty("machine"));
            row(b, "CPU", m.getProperty("cpu"));
            row(b, "GPU", m.getProperty("gpu"));
            row(b, "driver", m.getProperty("driver"));
            row(b, "date", m.getProperty("date"));
            row(b, "JVM", f.get("vmName") + " " + f.get("vmVersion") + " (JDK " + f.get("jdkVersion") + ")");
            row(b, "JVM args", String.valueOf(f.get("jvmArgs")));
            row(b, "JMH (settings of the first result)", f.get("jmhVersion") + "; forks " + fmtInt(f.get("forks")) + ", warmup "
                    + fmtInt(f.get("warmupIterations")) + " × " + f.get("warmupTime") + ", measurement "
                    + fmtInt(f.get("measurementIterations")) + " × " + f.get("measurementTime"));
            row(b, "command", m.getProperty("command") == null ? null : "`" + m.getProperty("command") + "`");
            row(b, "results", "`" + run.json.getFileName() + "`");
            row(b, "note", m.getProperty("note"));
            b.append("\n| benchmark | params | mode | score | ± error (99.9%) | unit | B/op (gc) |\n");
            b.append("|---|---|---|---:|---:|---|---:|\n");
            for (Result r : run.results) {
                b.append("| `").append(r.bench).append("` | ").append(r.params).append(" | ").append(r.mode)
                        .append(" | ").append(fmt(r.score)).append(" | ").append(fmt(r.error)).append(" | ")
                        .append(r.unit).append(" | ").append(fmt(r.bytesPerOp)).append(" |\n");
            }
        }

        b.append("\n## How to reproduce\n\n");
        b.append("Build the uber-jar: `./mvnw -q -pl benchmarks -am package -DskipTests` (gives `benchmarks/target/benchmarks.jar`).\n\n");
        b.append("- CUDA runs (a GPU host with a driver, no JDK needed): `scripts/gpu-bundle.sh` makes `.bundle/` with a jlinked "
                + "runtime, `benchmarks.jar` and `run-bench.sh`. On the host, `OUT=DIR RUN_NAME=NAME bash .bundle/run-bench.sh "
                + "[JMH ARGS]` writes `DIR/NAME-jmh.json`, `DIR/NAME-meta.properties` (machine, date, command) and `DIR/NAME.log`. "
                + "The H200 results are three such runs, `h200-launch`, `h200-mem` and `h200-paired`, with the JMH arguments "
                + "shown in the run's `command` above, and `h200-sim` (`'metrale\\.bench\\.sim\\.' -f 1 -wi 2 -w 1s -i 5 -r 1s -prof gc`); "
                + "`h200-jmh.json` is the three CUDA files' arrays concatenated (`python3 -c 'import json,sys; "
                + "print(json.dumps(sum((json.load(open(f)) for f in sys.argv[1:]), []), indent=4))' "
                + "h200-launch-jmh.json h200-mem-jmh.json h200-paired-jmh.json > h200-jmh.json`). "
                + "The logs of the CUDA runs are beside the JSON in `benchmarks/results/`.\n");
        b.append("- Simulator runs (any machine; `sim` was run on the 2-core development VM, shared and loaded, so "
                + "its errors are wide; `h200-sim` on the H200 host's CPU): `JAVA=$JAVA_HOME/bin/java "
                + "BENCH_JAR=benchmarks/target/benchmarks.jar OUT=benchmarks/results RUN_NAME=sim bash scripts/run-bench.sh "
                + "'metrale\\.bench\\.sim\\.' -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc`.\n");
        b.append("- This page: `java -cp benchmarks/target/benchmarks.jar metrale.bench.report.ResultsPage --svg "
                + "benchmarks/launch-ratios.svg benchmarks/results/*-jmh.json > benchmarks/README.md`.\n\n");
        b.append("Method (details in each benchmark's Javadoc): launch and graph benchmarks time a batch of launches "
                + "(" + LaunchBench.BATCH + " kernels, " + GraphBench.BATCH + " graphs) below the launch queue's depth and synchronize the stream in a "
                + "`@Setup(Level.Invocation)` outside the timed region, so the score is the host's enqueue cost; "
                + "allocation and copy benchmarks time one blocking call pair or copy; simulator scores are ops per second "
                + "on one thread. B/op is JMH's `gc.alloc.rate.norm`.\n");
        return b.toString();
    }

    /** {@return "lo–hi" with the precision of the ratio column, or "—" without an error estimate} */
    static String range(double lo, double hi) {
        if (Double.isNaN(lo) || Double.isNaN(hi)) {
            return "—";
        }
        return fmtRange(lo) + "–" + (Double.isInfinite(hi) ? "∞" : fmtRange(hi));
    }

    private static String fmtRange(double v) {
        return Math.abs(v) >= 100 ? fmt(v) : String.format(Locale.ROOT, "%.3f", v);
    }

    /**
     * The notes under the targets table: how to read it, with every number taken from the runs,
     * and which targets were missed, read from the table itself.
     */
    static String reading(List<Run> runs, List<Ratio> ratios) {
        StringBuilder b = new StringBuilder();
        b.append("- `PairedBench` rows decide the launch, trace, graph and alloc targets: each invocation times a batch of "
                + "the bare baseline and of each runtime variant back to back in one JVM (rotating their order), so they "
                + "share the driver's and GPU's state. The separate `LaunchBench`/`GraphBench`/`AllocBench` rows compare "
                + "different JVMs run minutes apart");
        Result widest = null;
        for (Run run : runs) {
            for (Result r : run.results) {
                if (r.bench.equals("LaunchBench.bare") && !Double.isNaN(r.error)
                        && (widest == null || r.error / r.score > widest.error / widest.score)) {
                    widest = r;
                }
            }
        }
        if (widest != null) {
            b.append(String.format(Locale.ROOT, "; in run `%s` the bare `cuLaunchKernel` alone (%s) scored %s ± %s %s, "
                    + "±%.0f%%", widest.run, widest.params, fmt(widest.score), fmt(widest.error), widest.unit,
                    100 * widest.error / widest.score));
            Rule off = RULES.getFirst();
            b.append(String.format(Locale.ROOT, ", more than the %.0f%% being tested", 100 * (off.target - 1)));
        }
        for (Run run : runs) {
            for (Result jfr : run.results) {
                Result o = jfr.bench.equals("LaunchBench.jfr") ? find(run, "LaunchBench.off", jfr.params) : null;
                if (o != null && jfr.score < o.score) {
                    b.append(String.format(Locale.ROOT, "; and `jfr`, which does strictly more work than `off`, scored "
                            + "below it (run `%s`, %s: %s vs %s %s)", run.name, jfr.params, fmt(jfr.score), fmt(o.score), jfr.unit));
                    break;
                }
            }
        }
        b.append(".\n");
        b.append(String.format(Locale.ROOT, "- 0 B/op is met below %.1f B/op: JMH's own per-invocation bookkeeping shows "
                + "as a fraction of a byte per launch in the bare baseline too.\n", ZERO_BYTES));
        b.append("- `PairedBench.graph` and `.alloc` ignore the `kernel` parameter; their two rows are repeat runs. The "
                + "`alloc` repeat with `kernel=axpy4` has two small buffers live (the state's `x` and `y`)");
        for (Run run : runs) {
            Result warm = find(run, "PairedBench.alloc", "kernel=axpy4");
            Result cold = find(run, "PairedBench.alloc", "kernel=empty");
            if (warm != null && cold != null && warm.secondary.containsKey("bareNs") && cold.secondary.containsKey("bareNs")) {
                b.append(String.format(Locale.ROOT, ", and there the driver's bare 1 MiB alloc+free took %s µs against %s µs "
                        + "(run `%s`), so the ledger's fixed cost weighs far more",
                        fmt(warm.secondary.get("bareNs") / warm.secondary.get("ops") / 1e3),
                        fmt(cold.secondary.get("bareNs") / cold.secondary.get("ops") / 1e3), run.name));
                break;
            }
        }
        b.append(".\n");
        List<Ratio> missed = ratios.stream().filter(r -> r.verdict.missed()).toList();
        long within = ratios.stream().filter(r -> r.verdict == Verdict.WITHIN_ERROR).count();
        b.append("- Missed: ");
        if (missed.isEmpty()) {
            b.append("no target");
        } else {
            Map<String, List<String>> byWhat = new LinkedHashMap<>();
            for (Ratio r : missed) {
                byWhat.computeIfAbsent(r.what, k -> new ArrayList<>())
                        .add("`" + r.run + "`" + (r.params.isEmpty() ? "" : " " + r.params));
            }
            b.append(missed.size()).append(missed.size() == 1 ? " row" : " rows").append(": ");
            List<String> parts = new ArrayList<>();
            byWhat.forEach((what, inRuns) -> parts.add(what + ": " + String.join(", ", inRuns)));
            b.append(String.join("; ", parts));
        }
        b.append(String.format(Locale.ROOT, ". %d %s within error.\n", within, within == 1 ? "row is" : "rows are"));
        for (Run run : runs) {
            Result ledger = find(run, "AllocBench.ledger", "bytes=1048576");
            Result noSites = find(run, "AllocBench.ledgerNoSites", "bytes=1048576");
            if (ledger != null && noSites != null) {
                b.append(String.format(Locale.ROOT, "- With call sites on, the ledger records the caller's `file:line` of "
                        + "each alloc and each free with a `StackWalker` walk (`CallSites.caller`): `AllocBench.ledger` vs "
                        + "`ledgerNoSites` in run `%s` is %s vs %s %s and %s vs %s B/op (`-prof gc`).",
                        run.name, fmt(ledger.score), fmt(noSites.score), ledger.unit, fmt(ledger.bytesPerOp), fmt(noSites.bytesPerOp)));
                double worst = Double.NaN;
                for (Ratio r : ratios) {
                    if (r.bench.equals("PairedBench.alloc:traceNs") && (Double.isNaN(worst) || r.ratio > worst)) {
                        worst = r.ratio;
                    }
                }
                if (!Double.isNaN(worst)) {
                    b.append(String.format(Locale.ROOT, " Without call sites (`GpuBuilder.allocSites(false)`, "
                            + "`METRALE_ALLOC_SITES=0`) the same pair is the `alloc:traceNs` rows, at most %.3f×.", worst));
                }
                b.append('\n');
                break;
            }
        }
        return b.toString();
    }

    private static String fmtInt(Object o) {
        double d = Json.number(o);
        return Double.isNaN(d) ? String.valueOf(o) : String.valueOf((long) d);
    }

    private static void row(StringBuilder b, String k, String v) {
        if (v != null && !v.isBlank() && !v.equals("null")) {
            b.append("- ").append(k).append(": ").append(v).append('\n');
        }
    }

    /** A horizontal bar chart of the launch-path ratios (launch and graph replay), with each target. */
    static String svg(List<Ratio> ratios) {
        List<Ratio> rows = new ArrayList<>();
        for (Ratio r : ratios) {
            if (!Double.isNaN(r.ratio) && (r.bench.startsWith("LaunchBench.") || r.bench.startsWith("GraphBench.")
                    || r.bench.startsWith("PairedBench.launch") || r.bench.startsWith("PairedBench.graph"))) {
                rows.add(r);
            }
        }
        double max = 1.2;
        for (Ratio r : rows) {
            max = Math.max(max, r.ratio * 1.05);
        }
        int left = 300;
        int width = 460;
        int rowH = 26;
        int top = 40;
        int h = top + rowH * Math.max(rows.size(), 1) + 50;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n",
                left + width + 90, h));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"20\" font-size=\"14\">Launch path: runtime time / bare driver time (lower is better; | = target)</text>%n",
                10));
        Map<String, String> colors = new LinkedHashMap<>();
        for (int i = 0; i < rows.size(); i++) {
            Ratio r = rows.get(i);
            int y = top + i * rowH;
            double w = width * r.ratio / max;
            String color = switch (r.verdict) {
                case NONE -> "#888888";
                case MET, MET_NO_ERROR -> "#2e7d32";
                case WITHIN_ERROR -> "#ef8f00";
                case MISSED, MISSED_NO_ERROR -> "#c62828";
            };
            colors.put(color, "");
            String label = r.run + ": " + r.bench.replace("Bench.", ".") + (r.params.isEmpty() ? "" : " (" + r.params + ")");
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n", left - 8, y + 16, esc(label)));
            s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>%n",
                    left, y + 4, w, rowH - 8, color));
            s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%.3f×</text>%n", left + w + 4, y + 16, r.ratio));
            if (!r.target.equals("—")) {
                double t = Double.parseDouble(r.target.replaceAll("[^0-9.]", ""));
                double tx = left + width * t / max;
                s.append(String.format(Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>%n",
                        tx, y + 1, tx, y + rowH - 1));
            }
        }
        int axisY = top + rowH * rows.size() + 6;
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>%n", left, axisY, left + width, axisY));
        for (double t = 0; t <= max + 1e-9; t += max > 3 ? 1.0 : 0.25) {
            double x = left + width * t / max;
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\"/>%n", x, axisY, x, axisY + 4));
            s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.2f</text>%n", x, axisY + 17, t));
        }
        double one = left + width / max;
        s.append(String.format(Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#1565c0\" stroke-dasharray=\"4 3\"/>%n",
                one, top, one, axisY));
        s.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" fill=\"#555\">green: target met, orange: within error, red: missed, grey: no target; dashed: 1.0 (bare)</text>%n",
                10, axisY + 36));
        s.append("</svg>\n");
        return s.toString();
    }

    /**
     * {@return an SVG line plot of {@code PoolBench.pair}: nanoseconds per alloc+free pair (log scale)
     * by allocation size (log scale), one line per variant; {@code null} when no run has it}
     */
    static String poolSvg(List<Run> runs) {
        Map<String, java.util.TreeMap<Long, Double>> series = new LinkedHashMap<>();
        for (Run run : runs) {
            for (Result r : run.results) {
                Double ops = r.secondary.get("ops");
                if (!r.bench.equals("PoolBench.pair") || ops == null || ops == 0 || !r.params.startsWith("bytes=")) {
                    continue;
                }
                long bytes = Long.parseLong(r.params.substring("bytes=".length()).split(",")[0].trim());
                for (String[] v : POOL_SERIES) {
                    Double ns = r.secondary.get(v[0]);
                    if (ns != null) {
                        series.computeIfAbsent(run.name + ": " + v[1] + "|" + v[2], k -> new java.util.TreeMap<>())
                                .put(bytes, ns / ops);
                    }
                }
            }
        }
        if (series.isEmpty()) {
            return null;
        }
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        double minY = Double.MAX_VALUE;
        double maxY = -Double.MAX_VALUE;
        for (var m : series.values()) {
            for (var e : m.entrySet()) {
                minX = Math.min(minX, Math.log10(e.getKey()));
                maxX = Math.max(maxX, Math.log10(e.getKey()));
                minY = Math.min(minY, Math.log10(Math.max(e.getValue(), 1)));
                maxY = Math.max(maxY, Math.log10(Math.max(e.getValue(), 1)));
            }
        }
        minY = Math.floor(minY);
        maxY = Math.ceil(maxY);
        if (maxX == minX) {
            maxX = minX + 1;
        }
        if (maxY == minY) {
            maxY = minY + 1;
        }
        int left = 70;
        int top = 40;
        int w = 520;
        int h = 320;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", left + w + 330, top + h + 60));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(String.format(Locale.ROOT, "<text x=\"10\" y=\"20\" font-size=\"14\">Pool: ns per alloc+free pair "
                + "by size (PoolBench.pair, both axes log)</text>%n"));
        s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>%n",
                left, top, w, h));
        for (double y = minY; y <= maxY + 1e-9; y++) {
            double py = top + h - h * (y - minY) / (maxY - minY);
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s ns</text>%n",
                    left - 4, py + 4, fmt(Math.pow(10, y))));
        }
        for (var m : series.values()) {
            for (long x : m.keySet()) {
                double px = left + w * (Math.log10(x) - minX) / (maxX - minX);
                s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                        px, top + h + 16, x >= 1 << 20 ? (x >> 20) + " MiB" : x >= 1024 ? (x >> 10) + " KiB" : x + " B"));
            }
            break;
        }
        int i = 0;
        for (var e : series.entrySet()) {
            String[] nameColor = e.getKey().split("\\|");
            StringBuilder pts = new StringBuilder();
            for (var pt : e.getValue().entrySet()) {
                double px = left + w * (Math.log10(pt.getKey()) - minX) / (maxX - minX);
                double py = top + h - h * (Math.log10(Math.max(pt.getValue(), 1)) - minY) / (maxY - minY);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
            }
            s.append("<polyline fill=\"none\" stroke=\"").append(nameColor[1]).append("\" stroke-width=\"2\" points=\"")
                    .append(pts.toString().trim()).append("\"/>\n");
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>%n", left + w + 12,
                    top + 14 + 16 * i++, nameColor[1], esc(nameColor[0])));
        }
        return s.append("</svg>\n").toString();
    }

    private static String esc(String t) {
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
