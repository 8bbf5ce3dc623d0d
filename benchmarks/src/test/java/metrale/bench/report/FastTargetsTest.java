// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import static metrale.bench.report.Synthetic.fill;
import static metrale.bench.report.Synthetic.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import metrale.bench.report.JmhRuns.Run;
import metrale.bench.report.Targets.Bound;
import metrale.bench.report.Targets.CounterRule;
import metrale.bench.report.Targets.Ratio;
import metrale.bench.report.Targets.SideRule;
import metrale.bench.report.Targets.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Issue #22's rules judged on synthetic runs: met, missed, within error, and a missing baseline, for each. */
class FastTargetsTest {

    private static final int ITERATIONS = 5;
    private static final double OPS = 1000;
    private static final double DEN = 1e6;

    @TempDir
    Path dir;

    static Stream<CounterRule> counterRules() {
        return Targets.COUNTER_RULES.stream();
    }

    static Stream<SideRule> targetedSideRules() {
        return Targets.SIDE_RULES.stream().filter(r -> !Double.isNaN(r.target()));
    }

    /** Parameters a result of the rule's benchmark has, the rule's own among them. */
    private static String paramsOf(String bench, String ruleParams) {
        return switch (bench) {
            case "PoolBench.pair" -> "bytes=1048576, quarantineBytes=0";
            case "CapturedStepBench.step" -> ruleParams.isEmpty() ? "kernels=20" : ruleParams;
            case "PairedBench.launch" -> ruleParams.isEmpty() ? "kernel=axpy4" : ruleParams;
            default -> ruleParams;
        };
    }

    /** Counters whose per-iteration ratio, as the rule computes it, is {@code target * factor[i]}. */
    private static Synthetic counterRun(CounterRule rule, double... factor) {
        double[] num = new double[ITERATIONS];
        for (int i = 0; i < ITERATIONS; i++) {
            double base = DEN + rule.plusNsPerOp() * OPS;
            double ratio = rule.target() * factor[i];
            num[i] = rule.throughput() ? base / ratio : ratio * base;
        }
        return Synthetic.jmh().counters(rule.bench(), paramsOf(rule.bench(), rule.params()),
                of(rule.num(), num, rule.den(), fill(ITERATIONS, DEN), rule.ops(), fill(ITERATIONS, OPS)));
    }

    private List<Ratio> judge(Synthetic jmh, String name) throws IOException {
        return Targets.ratios(JmhRuns.readAll(List.of(jmh.write(dir, name))));
    }

    private static Ratio only(List<Ratio> rows, String what) {
        List<Ratio> mine = rows.stream().filter(r -> r.what().equals(what)).toList();
        assertThat(mine).as("rows of \"%s\"", what).hasSize(1);
        return mine.getFirst();
    }

    /** {@return ITERATIONS values around {@code v}, 0.1% apart} */
    private static double[] spread(double v) {
        double[] a = new double[ITERATIONS];
        for (int i = 0; i < ITERATIONS; i++) {
            a[i] = v * (1 + 0.001 * (i - ITERATIONS / 2));
        }
        return a;
    }

    private static final double[] TIGHT_BELOW = {0.799, 0.8, 0.8, 0.8, 0.801};
    private static final double[] TIGHT_ABOVE = {1.249, 1.25, 1.25, 1.25, 1.251};
    private static final double[] WIDE = {0.7, 0.85, 1.0, 1.15, 1.3};

    @ParameterizedTest
    @MethodSource("counterRules")
    void aCounterRuleIsMetWhenEveryIterationMeetsIt(CounterRule rule) throws IOException {
        double[] good = rule.bound() == Bound.AT_MOST ? TIGHT_BELOW : TIGHT_ABOVE;
        Ratio r = only(judge(counterRun(rule, good), "h200-fast"), rule.note());
        assertThat(r.verdict()).isEqualTo(Verdict.MET);
        assertThat(r.ratio()).isCloseTo(rule.target() * good[2], within(1e-3 * rule.target()));
        assertThat(r.lo()).isLessThan(r.ratio());
        assertThat(r.hi()).isGreaterThan(r.ratio());
        assertThat(r.bench()).isEqualTo(rule.bench() + ":" + rule.num());
    }

    @ParameterizedTest
    @MethodSource("counterRules")
    void aCounterRuleIsMissedWhenNoIterationMeetsIt(CounterRule rule) throws IOException {
        double[] bad = rule.bound() == Bound.AT_MOST ? TIGHT_ABOVE : TIGHT_BELOW;
        assertThat(only(judge(counterRun(rule, bad), "h200-fast"), rule.note()).verdict()).isEqualTo(Verdict.MISSED);
    }

    @ParameterizedTest
    @MethodSource("counterRules")
    void aCounterRuleIsWithinErrorWhenTheIterationsStraddleIt(CounterRule rule) throws IOException {
        Ratio r = only(judge(counterRun(rule, WIDE), "h200-fast"), rule.note());
        assertThat(r.verdict()).isEqualTo(Verdict.WITHIN_ERROR);
        assertThat(r.lo()).isLessThan(rule.target());
        assertThat(r.hi()).isGreaterThan(rule.target());
    }

    @ParameterizedTest
    @MethodSource("counterRules")
    void aCounterRuleWithoutItsBaselineCounterSaysSo(CounterRule rule) throws IOException {
        Synthetic jmh = Synthetic.jmh().counters(rule.bench(), paramsOf(rule.bench(), rule.params()),
                of(rule.num(), fill(ITERATIONS, DEN), rule.ops(), fill(ITERATIONS, OPS)));
        Ratio r = only(judge(jmh, "h200-fast"), rule.note());
        assertThat(r.verdict()).isEqualTo(Verdict.NO_BASELINE);
        assertThat(r.why()).isEqualTo("no `" + rule.den() + "` counter");
        assertThat(r.verdict().missed()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("counterRules")
    void oneIterationGivesNoErrorBarAndAJudgementOnThePoint(CounterRule rule) throws IOException {
        double good = rule.bound() == Bound.AT_MOST ? 0.9 : 1.1;
        double base = DEN + rule.plusNsPerOp() * OPS;
        double num = rule.throughput() ? base / (rule.target() * good) : rule.target() * good * base;
        Synthetic jmh = Synthetic.jmh().counters(rule.bench(), paramsOf(rule.bench(), rule.params()),
                of(rule.num(), new double[] {num}, rule.den(), new double[] {DEN}, rule.ops(), new double[] {OPS}));
        Ratio r = only(judge(jmh, "h200-fast"), rule.note());
        assertThat(r.verdict()).isEqualTo(Verdict.MET_NO_ERROR);
        assertThat(r.lo()).isNaN();
    }

    @Test
    void theStepTargetAddsOnePointFiveMicrosecondsPerStepToReplay() throws IOException {
        CounterRule rule = Targets.COUNTER_RULES.stream().filter(r -> r.num().equals("paramNs")).findFirst().orElseThrow();
        // 4,000 steps: replay 2.31 µs, parameter set 3.33 µs a step (+1.02 µs, met); then 7.57 over 3.82 (+3.75, missed).
        Synthetic jmh = Synthetic.jmh()
                .counters("CapturedStepBench.step", "kernels=20", of("paramNs", fill(ITERATIONS, 3330 * 800.0),
                        "replayNs", fill(ITERATIONS, 2310 * 800.0), "eagerNs", fill(ITERATIONS, 90_000 * 800.0),
                        "steps", fill(ITERATIONS, 800)))
                .counters("CapturedStepBench.step", "kernels=100", of("paramNs", fill(ITERATIONS, 7570 * 800.0),
                        "replayNs", fill(ITERATIONS, 3820 * 800.0), "eagerNs", fill(ITERATIONS, 10_000 * 800.0),
                        "steps", fill(ITERATIONS, 800)));
        List<Ratio> rows = judge(jmh, "h200-fast").stream().filter(r -> r.what().equals(rule.note())).toList();
        assertThat(rows).extracting(Ratio::params).containsExactly("kernels=20", "kernels=100");
        assertThat(rows.get(0).base()).isCloseTo(3810, within(1e-6));
        assertThat(rows.get(0).ratio()).isCloseTo(3330 / 3810.0, within(1e-9));
        assertThat(rows.get(0).verdict()).as("identical iterations: no spread").isEqualTo(Verdict.MET_NO_ERROR);
        assertThat(rows.get(0).lo()).isNaN();
        assertThat(rows.get(1).verdict()).isEqualTo(Verdict.MISSED_NO_ERROR);
        assertThat(rows.get(0).baseline()).isEqualTo("CapturedStepBench.step:replayNs + 1500 ns/op");
        List<Ratio> eager = judge(jmh, "h200-fast").stream().filter(r -> r.bench().endsWith(":eagerNs")).toList();
        assertThat(eager).extracting(Ratio::verdict).containsExactly(Verdict.MET_NO_ERROR, Verdict.MISSED_NO_ERROR);
    }

    @Test
    void theThreadedRatioIsTheRuntimesThroughputOverTheBareDowncalls() throws IOException {
        Synthetic jmh = Synthetic.jmh().counters("ThreadedLaunchBench.launch", "threads=8",
                of("bareNs", fill(ITERATIONS, 900_000), "launchNs", fill(ITERATIONS, 1_000_000), "ops", fill(ITERATIONS, 1024)));
        Ratio r = judge(jmh, "h200-fast").stream().filter(x -> x.bench().startsWith("ThreadedLaunchBench")).findFirst()
                .orElseThrow();
        assertThat(r.ratio()).isCloseTo(0.9, within(1e-12));
        assertThat(r.score()).as("ns per launch of the group").isCloseTo(1e6 / 1024, within(1e-9));
        assertThat(r.verdict()).isEqualTo(Verdict.MISSED_NO_ERROR);
        assertThat(r.target()).isEqualTo("≥ 0.95×");
    }

    @Test
    void resultsOutsideARulesParametersAreNotJudged() throws IOException {
        Synthetic jmh = Synthetic.jmh()
                .counters("ThreadedLaunchBench.launch", "threads=4",
                        of("bareNs", fill(ITERATIONS, DEN), "launchNs", fill(ITERATIONS, DEN), "ops", fill(ITERATIONS, OPS)))
                .counters("PoolBench.pair", "bytes=4096, quarantineBytes=0",
                        of("defaultsNs", fill(ITERATIONS, DEN), "cachingAllNs", fill(ITERATIONS, DEN), "bareNs",
                                fill(ITERATIONS, DEN), "ops", fill(ITERATIONS, OPS)));
        assertThat(judge(jmh, "h200-fast")).noneMatch(r -> r.what().startsWith("#22:"));
    }

    @Test
    void runsNotNamedFastKeepTheRulesTheyWereMeasuredUnder() throws IOException {
        Synthetic jmh = Synthetic.jmh().counters("PairedBench.launch", "kernel=axpy4",
                of("bareNs", fill(ITERATIONS, DEN), "offNs", fill(ITERATIONS, DEN * 1.02), "traceNs",
                        fill(ITERATIONS, DEN * 1.09), "ops", fill(ITERATIONS, OPS)));
        List<Ratio> old = judge(jmh, "h200-paired9");
        assertThat(old).noneMatch(r -> r.what().startsWith("#22:"));
        assertThat(old).extracting(Ratio::verdict).containsExactly(Verdict.MET_NO_ERROR, Verdict.MET_NO_ERROR);
        List<Ratio> fast = judge(jmh, "h200-fast-launch");
        assertThat(fast).as("the older rules, and #22's trace on over off").hasSize(3);
        assertThat(only(fast, "#22: launch, launch trace on vs off (interleaved)").verdict())
                .as("1.09 / 1.02 in every iteration: no spread, so no error bar").isEqualTo(Verdict.MISSED_NO_ERROR);
    }

    // ---- side-by-side --------------------------------------------------------------------------

    private static final double ROW_NS = 1000;

    private Synthetic sideRun(SideRule rule, double... factor) {
        double[] c = new double[ITERATIONS];
        for (int i = 0; i < ITERATIONS; i++) {
            c[i] = rule.target() * factor[i] * ROW_NS * OPS;
        }
        return Synthetic.jmh().counters(rule.bench(), paramsOf(rule.bench(), rule.params()),
                of(rule.counter(), c, rule.ops(), fill(ITERATIONS, OPS)));
    }

    private List<Ratio> judgeWithRow(Synthetic jmh, String... rows) throws IOException {
        Synthetic.sideBySide(dir, "h200-fast", rows);
        return judge(jmh, "h200-fast");
    }

    @ParameterizedTest
    @MethodSource("targetedSideRules")
    void aSideBySideRuleIsMetWhenTheWholeRangeIsBelowIt(SideRule rule) throws IOException {
        Ratio r = only(judgeWithRow(sideRun(rule, TIGHT_BELOW), Synthetic.row(rule.row(), ROW_NS, 990, 1010)),
                rule.note());
        assertThat(r.verdict()).isEqualTo(Verdict.MET);
        assertThat(r.base()).isEqualTo(ROW_NS);
        assertThat(r.baseline()).isEqualTo(rule.row());
        assertThat(r.hi()).as("over the least round").isGreaterThan(r.ratio() * 1000 / 990 * 0.999);
    }

    @ParameterizedTest
    @MethodSource("targetedSideRules")
    void aSideBySideRuleIsMissedWhenTheWholeRangeIsAboveIt(SideRule rule) throws IOException {
        Ratio r = only(judgeWithRow(sideRun(rule, TIGHT_ABOVE), Synthetic.row(rule.row(), ROW_NS, 990, 1010)),
                rule.note());
        assertThat(r.verdict()).isEqualTo(Verdict.MISSED);
    }

    @ParameterizedTest
    @MethodSource("targetedSideRules")
    void aSideBySideRuleIsWithinErrorWhenTheRoundsStraddleIt(SideRule rule) throws IOException {
        // The runtime's iterations are tight; the side-by-side's rounds spread over the target.
        Ratio r = only(judgeWithRow(sideRun(rule, 1.0, 1.0, 1.0, 1.0, 1.0), Synthetic.row(rule.row(), 1030, 900, 1100)),
                rule.note());
        assertThat(r.ratio()).isLessThan(rule.target());
        assertThat(r.verdict()).isEqualTo(Verdict.WITHIN_ERROR);
    }

    @ParameterizedTest
    @MethodSource("targetedSideRules")
    void aSideBySideRuleWithoutItsFileOrRowSaysWhatIsMissing(SideRule rule) throws IOException {
        Synthetic jmh = sideRun(rule, TIGHT_BELOW);
        Ratio none = only(judge(jmh, "h200-fast"), rule.note());
        assertThat(none.verdict()).isEqualTo(Verdict.NO_BASELINE);
        assertThat(none.why()).isEqualTo("no `h200-fast-sidebyside.json`");

        Ratio skipped = only(judgeWithRow(jmh, Synthetic.skipped(rule.row(), "torch not importable: ImportError")),
                rule.note());
        assertThat(skipped.verdict()).isEqualTo(Verdict.NO_BASELINE);
        assertThat(skipped.why()).isEqualTo(rule.row() + " skipped: torch not importable: ImportError");

        String side = rule.row().startsWith("c.") ? "c" : "py";
        Ratio sideSkipped = only(judgeWithRow(jmh, Synthetic.skipped(side, "nvcc not found")), rule.note());
        assertThat(sideSkipped.why()).isEqualTo(rule.row() + " not measured: nvcc not found");

        Ratio absent = only(judgeWithRow(jmh, Synthetic.row("c.other", 1, 1, 1)), rule.note());
        assertThat(absent.why()).isEqualTo("no row " + rule.row() + " in `h200-fast-sidebyside.json`");
    }

    @Test
    void theDriversOwnCostsShowBesideTheRuntimeWithoutATargetAndOnlyWhereMeasured() throws IOException {
        Synthetic jmh = Synthetic.jmh().counters("CapturedStepBench.step", "kernels=20", of("replayNs",
                fill(ITERATIONS, 2300 * 100.0), "paramNs", fill(ITERATIONS, 3300 * 100.0), "eagerNs",
                fill(ITERATIONS, 90_000 * 100.0), "steps", fill(ITERATIONS, 100)));
        assertThat(judge(jmh, "h200-fast")).noneMatch(r -> r.baseline().startsWith("c."));
        List<Ratio> rows = judgeWithRow(jmh, Synthetic.row("c.graphLaunch20", 2000, 1900, 2100),
                Synthetic.row("c.graphSetLaunch20", 2500, 2400, 2600)).stream()
                .filter(r -> r.baseline().startsWith("c.")).toList();
        assertThat(rows).extracting(Ratio::baseline).containsExactly("c.graphLaunch20", "c.graphSetLaunch20");
        assertThat(rows).extracting(Ratio::verdict).containsOnly(Verdict.NONE);
        assertThat(rows.get(0).ratio()).isCloseTo(2300 / 2000.0, within(1e-9));
    }

    // ---- the simulator ---------------------------------------------------------------------------

    private static final String SIM = "blocks=parallel, kernel=twin, n=1048576";

    private List<Ratio> sim(String name, double score, double error) throws IOException {
        return judge(Synthetic.jmh().metric("SimPtxBench.axpy", SIM, "threads", score, error), name);
    }

    private static final String FLOOR = "#22: simulator axpy twin, blocks=parallel, all 16 cores";
    private static final String SCALING = "#22: simulator axpy twin, blocks=parallel, 16 cores over 1";

    @Test
    void theSimulatorFloorIsJudgedOnTheScoreAndItsError() throws IOException {
        assertThat(only(sim("h200-fast-simptx-cpu16", 1.5e9, 1e8), FLOOR).verdict()).isEqualTo(Verdict.MET);
        assertThat(only(sim("h200-fast-simptx", 0.5e9, 1e8), FLOOR).verdict()).isEqualTo(Verdict.MISSED);
        assertThat(only(sim("h200-fast-simptx-cpu16", 1.1e9, 3e8), FLOOR).verdict()).isEqualTo(Verdict.WITHIN_ERROR);
        assertThat(only(sim("h200-fast-simptx-cpu16", 1.1e9, Double.NaN), FLOOR).verdict())
                .isEqualTo(Verdict.MET_NO_ERROR);
    }

    @Test
    void theSimulatorFloorHasNoBaselineAndSkipsRunsLimitedToFewerCores() throws IOException {
        assertThat(sim("h200-fast-simptx-cpu1", 1.5e9, 1e8)).noneMatch(r -> r.what().equals(FLOOR));
        assertThat(sim("h200-fast-simptx-cpu8", 1.5e9, 1e8)).noneMatch(r -> r.what().equals(FLOOR));
        assertThat(sim("h200-simptx", 1.5e9, 1e8)).as("an older run").noneMatch(r -> r.what().startsWith("#22:"));
        assertThat(judge(Synthetic.jmh().metric("SimPtxBench.axpy", "blocks=ordered, kernel=twin, n=1048576", "threads",
                1.5e9, 1e8), "h200-fast-simptx")).as("another case").noneMatch(r -> r.what().equals(FLOOR));
    }

    private List<Ratio> scaling(double many, double manyError, double few, double fewError) throws IOException {
        Path m = Synthetic.jmh().metric("SimPtxBench.axpy", SIM, "threads", many, manyError).write(dir, "h200-fast-x-cpu16");
        Path f = Synthetic.jmh().metric("SimPtxBench.axpy", SIM, "threads", few, fewError).write(dir, "h200-fast-x-cpu1");
        return Targets.ratios(JmhRuns.readAll(List.of(f, m)));
    }

    @Test
    void theScalingIsTheSixteenCoreRunOverTheOneCoreRun() throws IOException {
        Ratio met = only(scaling(1.6e9, 1e8, 1e8, 1e6), SCALING);
        assertThat(met.run()).isEqualTo("h200-fast-x-cpu16");
        assertThat(met.baseline()).isEqualTo("h200-fast-x-cpu1: SimPtxBench.axpy:threads");
        assertThat(met.ratio()).isCloseTo(16, within(1e-9));
        assertThat(met.lo()).isCloseTo(1.5e9 / 1.01e8, within(1e-6));
        assertThat(met.verdict()).isEqualTo(Verdict.MET);
        assertThat(only(scaling(1.6e9, 1e8, 4e8, 1e7), SCALING).verdict()).isEqualTo(Verdict.MISSED);
        assertThat(only(scaling(1.6e9, 4e8, 2e8, 2e7), SCALING).verdict()).isEqualTo(Verdict.WITHIN_ERROR);
        assertThat(only(scaling(1.6e9, 1e8, 1e8, 2e8), SCALING).hi()).as("a one-core error reaching zero").isInfinite();
    }

    @Test
    void theScalingWithoutItsOneCoreRunSaysSo() throws IOException {
        Ratio r = only(sim("h200-fast-y-cpu16", 1.6e9, 1e8), SCALING);
        assertThat(r.verdict()).isEqualTo(Verdict.NO_BASELINE);
        assertThat(r.why()).isEqualTo("no run `h200-fast-y-cpu1` with this case");
    }

    @Test
    void aRunsCoreCountIsItsNamesSuffix() {
        assertThat(FastTargets.cores("h200-fast-simptx-cpu16")).isEqualTo(16);
        assertThat(FastTargets.cores("h200-fast-cpu1")).isEqualTo(1);
        assertThat(FastTargets.cores("h200-fast")).isEqualTo(-1);
        assertThat(FastTargets.cores("h200-fast-cpu16-again")).isEqualTo(-1);
    }

    // ---- the page --------------------------------------------------------------------------------

    @Test
    void thePageShowsTheSideBySideTableAndEachTargetsVerdicts() throws IOException {
        Synthetic jmh = Synthetic.jmh().counters("PoolBench.pair", "bytes=1048576, quarantineBytes=0",
                of("bareNs", fill(ITERATIONS, 80_000 * 16.0), "defaultsNs", spread(900 * 16.0), "cachingAllNs",
                        spread(200_000 * 16.0), "ops", fill(ITERATIONS, 16)));
        Synthetic.sideBySide(dir, "h200-fast", "{\"name\": \"c.device\", \"info\": \"NVIDIA H200, CUDA driver API 13.0\"}",
                Synthetic.row("torch.cacheHit1MiB", 4000, 3900, 4100), Synthetic.skipped("cupy.poolHit1MiB",
                        "cupy not importable: ModuleNotFoundError"), Synthetic.row("c.allocFree1MiB", 70_000, 69_000, 71_000));
        List<Run> runs = JmhRuns.readAll(List.of(jmh.write(dir, "h200-fast")));
        List<Ratio> ratios = Targets.ratios(runs);
        String page = PageMarkdown.page(runs, ratios, null);
        assertThat(page).contains("Side-by-side, `h200-fast-sidebyside.json`")
                .contains("- c.device: NVIDIA H200, CUDA driver API 13.0")
                .contains("| `torch.cacheHit1MiB` | torch.cacheHit1MiB, synthetic | 4000 ns | 3900–4100 | 5 × 1000 |")
                .contains("| `cupy.poolHit1MiB` | skipped: cupy not importable: ModuleNotFoundError | — | — | — |")
                .contains("not judged: no baseline (cupy.poolHit1MiB skipped: cupy not importable: ModuleNotFoundError)")
                .contains("| #22: alloc+free 1 MiB, the defaults, below PyTorch's cache hit | ≤ 1.00× | `h200-fast` "
                        + "bytes=1048576, quarantineBytes=0: met |")
                .contains("| #22: alloc+free 1 MiB, leakDetection=all, vs the warm cuMemAlloc_v2+cuMemFree_v2 pair "
                        + "(interleaved) | ≤ 1.50× | `h200-fast` bytes=1048576, quarantineBytes=0: **missed** |")
                .contains("| #22: 8-thread launch throughput over the bare downcall's (interleaved) | ≥ 0.95× | no "
                        + "`h200-fast…` run measured it |");
        String missed = page.lines().filter(l -> l.startsWith("- Missed: ")).findFirst().orElseThrow();
        assertThat(missed).startsWith("- Missed: 1 row: #22: alloc+free 1 MiB, leakDetection=all")
                .endsWith(". 0 rows are within error; 1 target is not judged for want of a baseline.");
    }

    @Test
    void aFastRatioOverAnotherRuntimeVariantIsNotPlottedAsOneOverBare() throws IOException {
        Synthetic jmh = Synthetic.jmh().counters("PairedBench.launch", "kernel=axpy4",
                of("bareNs", fill(ITERATIONS, DEN), "offNs", fill(ITERATIONS, DEN), "traceNs", fill(ITERATIONS, DEN),
                        "ops", fill(ITERATIONS, OPS)));
        List<Ratio> ratios = judge(jmh, "h200-fast");
        assertThat(ratios).hasSize(3);
        String svg = Charts.svg(ratios);
        assertThat(svg.split("<rect x=\"300\"", -1)).as("two bars: off and trace over bare").hasSize(3);
    }
}
