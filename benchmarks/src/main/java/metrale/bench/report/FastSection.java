// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import metrale.bench.report.JmhRuns.Run;
import metrale.bench.report.Targets.CounterRule;
import metrale.bench.report.Targets.MetricFloor;
import metrale.bench.report.Targets.Ratio;
import metrale.bench.report.Targets.Scaling;
import metrale.bench.report.Targets.SideRule;

/** The page's parts for issue #22: the list of its targets with their verdicts, and a run's side-by-side table. */
final class FastSection {

    /** The bundle's commands that make the runs issue #22's targets judge ({@code DIR} is where results go). */
    static final List<String> COMMANDS = List.of(
            "OUT=DIR RUN_NAME=" + Targets.FAST_PREFIX + " bash .bundle/run-bench.sh "
                    + "'PoolBench.pair|CapturedStepBench|PairedBench.launch|ThreadedLaunchBench' "
                    + "-p bytes=1048576 -p quarantineBytes=0 -f 2 -wi 3 -w 1s -i 5 -r 1s",
            "OUT=DIR RUN_NAME=" + Targets.FAST_PREFIX + " bash .bundle/sidebyside/run.sh",
            // A run of its own: the pool's 1 MiB would otherwise set CopyBench's bytes too.
            "OUT=DIR RUN_NAME=" + Targets.FAST_PREFIX + "-copy bash .bundle/run-bench.sh CopyBench.pair "
                    + "-f 2 -wi 3 -w 1s -i 5 -r 1s && cp DIR/" + Targets.FAST_PREFIX + "-sidebyside.json DIR/"
                    + Targets.FAST_PREFIX + "-copy-sidebyside.json",
            "OUT=DIR RUN_NAME=" + Targets.FAST_PREFIX + "-simptx-cpu" + Targets.HOST_CORES + " taskset -c 0-"
                    + (Targets.HOST_CORES - 1) + " bash .bundle/run-bench.sh "
                    + "SimPtxBench -p kernel=twin -p blocks=parallel -p n=1048576 -f 1 -wi 3 -w 1s -i 10 -r 1s "
                    + "-jvmArgsAppend -XX:+UseG1GC",
            "OUT=DIR RUN_NAME=" + Targets.FAST_PREFIX + "-simptx-cpu1 taskset -c 0 bash .bundle/run-bench.sh "
                    + "SimPtxBench -p kernel=twin -p blocks=parallel -p n=1048576 -f 1 -wi 3 -w 1s -i 10 -r 1s "
                    + "-jvmArgsAppend -XX:+UseG1GC");

    /**
     * One target of the list.
     *
     * @param what   the label its rows carry
     * @param target the target as the table shows it
     */
    record Entry(String what, String target) {
    }

    /** {@return issue #22's targets in the order the rules declare them, each once} */
    static List<Entry> entries() {
        Map<String, Entry> m = new LinkedHashMap<>();
        for (CounterRule r : Targets.COUNTER_RULES) {
            m.putIfAbsent(r.note(), new Entry(r.note(), r.bound().show(r.target())));
        }
        for (SideRule r : Targets.SIDE_RULES) {
            if (!Double.isNaN(r.target())) {
                m.putIfAbsent(r.note(), new Entry(r.note(), r.bound().show(r.target())));
            }
        }
        for (MetricFloor f : Targets.METRIC_FLOORS) {
            m.putIfAbsent(f.note(), new Entry(f.note(), String.format(Locale.ROOT, "≥ %.0e %s", f.atLeast(), f.unit())));
        }
        for (Scaling s : Targets.SCALINGS) {
            m.putIfAbsent(s.note(), new Entry(s.note(), String.format(Locale.ROOT, "≥ %.2f×", s.atLeast())));
        }
        return List.copyOf(m.values());
    }

    /**
     * {@return the section listing issue #22's targets: how they are judged, which runs they judge,
     * the commands that make those runs, and each target's verdicts from the table}
     */
    static String targets(List<Run> runs, List<Ratio> ratios) {
        StringBuilder b = new StringBuilder();
        b.append("\n### Issue #22's targets\n\n");
        b.append("Rows whose *what* starts with `#22:` judge issue #22's targets. They judge only runs whose name "
                + "starts with `").append(Targets.FAST_PREFIX).append("`; every other run keeps the rules it was "
                + "measured under (the rows above without `#22:`), which the new runs are judged by too.\n\n");
        b.append("- Ratios of counters measured in one JVM (`PoolBench.pair`, `CapturedStepBench.step`, "
                + "`PairedBench.launch`, `CopyBench.pair`, `ThreadedLaunchBench.launch`): the ratio of the counters' "
                + "sums, its range ± the 99.9% Student-t half-width of the per-iteration ratios (JMH's `rawData`), "
                + "so a run of one iteration has no error bar. The step's \"replay + 1.5 µs\" adds 1,500 ns per step "
                + "to `replayNs`; `ThreadedLaunchBench`'s ratio is the runtime's launch throughput over the bare "
                + "downcall's, `bareNs / launchNs`.\n");
        b.append("- Side-by-side rows compare a counter's ns per op with a row of `NAME").append(SideBySide.SUFFIX)
                .append("`, read from beside `NAME-jmh.json` (`benchmarks/sidebyside/run.sh` with the same "
                + "`RUN_NAME`): the range is the counter's ± its half-width over the row's most and least round. "
                + "Rows without a target show what the driver itself costs from C. `CopyBench.pair`'s `ops` is "
                + "read as copies per variant and direction.\n");
        b.append("- The simulator's floor is `SimPtxBench`'s `threads` (thread-invocations per second) ± JMH's "
                + "error, judged on runs with all ").append(Targets.HOST_CORES).append(" cores: named without a "
                + "`-cpuK` suffix or with `-cpu").append(Targets.HOST_CORES).append("`. Its scaling is the rate of run "
                + "`NAME-cpu").append(Targets.HOST_CORES).append("` over run `NAME-cpu1`, the same case under "
                + "`taskset -c 0-(K-1)` with `-XX:+UseG1GC` (`-XX:ActiveProcessorCount` alone lets the threads run on "
                + "every core, and one processor makes the JVM pick the Serial collector), both files passed to the page.\n");
        b.append("- A target whose baseline is missing (a counter, the side-by-side file or its row, the `-cpu1` "
                + "run) shows as \"not judged: no baseline\" with what is missing.\n");
        b.append("- The runs, on the GPU host from the bundle (`scripts/gpu-bundle.sh`):\n");
        for (String c : COMMANDS) {
            b.append("  - `").append(c).append("`\n");
        }
        b.append("\n| target | bound | rows (run, params: verdict) |\n|---|---|---|\n");
        for (Entry e : entries()) {
            List<String> rows = new ArrayList<>();
            for (Ratio r : ratios) {
                if (r.what().equals(e.what())) {
                    rows.add("`" + r.run() + "`" + (r.params().isEmpty() ? "" : " " + r.params()) + ": "
                            + r.verdict().label);
                }
            }
            b.append("| ").append(e.what()).append(" | ").append(e.target()).append(" | ")
                    .append(rows.isEmpty() ? "no `" + Targets.FAST_PREFIX + "…` run measured it" : String.join("; ", rows))
                    .append(" |\n");
        }
        return b.toString();
    }

    /** {@return the run's side-by-side rows as a table, or {@code ""} where it has none} */
    static String sideBySide(Run run) {
        SideBySide s = run.sideBySide();
        if (!s.present()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        b.append("\nSide-by-side, `").append(s.file().getFileName()).append("` (`benchmarks/sidebyside/run.sh`: "
                + "nanoseconds per op, the median of interleaved rounds):\n\n");
        for (SideBySide.Row r : s.rows()) {
            if (r.info() != null) {
                b.append("- ").append(r.name()).append(": ").append(r.info()).append('\n');
            }
        }
        b.append("\n| case | what | median | least–most | rounds × ops |\n|---|---|---:|---|---|\n");
        for (SideBySide.Row r : s.rows()) {
            if (r.info() != null) {
                continue;
            }
            if (r.measured()) {
                b.append("| `").append(r.name()).append("` | ").append(r.what()).append(" | ")
                        .append(PageMarkdown.fmt(r.ns())).append(" ns | ").append(PageMarkdown.fmt(r.min())).append("–")
                        .append(PageMarkdown.fmt(r.max())).append(" | ").append(r.rounds()).append(" × ")
                        .append(r.iterations()).append(" |\n");
            } else {
                b.append("| `").append(r.name()).append("` | skipped: ")
                        .append(r.skipped() == null ? "no value" : r.skipped()).append(" | — | — | — |\n");
            }
        }
        return b.toString();
    }

    private FastSection() {
    }
}
