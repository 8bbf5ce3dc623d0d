// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import metrale.bench.report.Targets.Ratio;
import metrale.bench.report.Targets.Verdict;
import org.junit.jupiter.api.Test;

/** The committed results page is what the generator makes from the committed result files, and its judgements. */
class ResultsPageTest {

    private static final String REGENERATE = "regenerate it: java -cp benchmarks/target/benchmarks.jar "
            + "metrale.bench.report.ResultsPage --svg benchmarks/launch-ratios.svg benchmarks/results/*-jmh.json "
            + "> benchmarks/README.md";

    /** The result files as the shell's {@code results/*-jmh.json} lists them: sorted by name. */
    private static List<Path> committedResults() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("results"))) {
            return files.filter(p -> p.getFileName().toString().endsWith("-jmh.json")).sorted().toList();
        }
    }

    @Test
    void theCommittedPageAndPlotAreRegeneratedFromTheCommittedResults() throws IOException {
        List<Path> jsons = committedResults();
        assertThat(jsons).as("result files in benchmarks/results").isNotEmpty();
        List<JmhRuns.Run> runs = JmhRuns.readAll(jsons);
        List<Ratio> ratios = Targets.ratios(runs);
        assertThat(PageMarkdown.page(runs, ratios, "launch-ratios.svg"))
                .as("benchmarks/README.md is stale; " + REGENERATE)
                .isEqualTo(Files.readString(Path.of("README.md"), StandardCharsets.UTF_8));
        assertThat(Charts.svg(ratios))
                .as("benchmarks/launch-ratios.svg is stale; " + REGENERATE)
                .isEqualTo(Files.readString(Path.of("launch-ratios.svg"), StandardCharsets.UTF_8));
    }

    @Test
    void theMissedNoteListsExactlyTheRowsTheTableMarksMissed() throws IOException {
        List<JmhRuns.Run> runs = JmhRuns.readAll(committedResults());
        List<Ratio> ratios = Targets.ratios(runs);
        long missed = ratios.stream().filter(r -> r.verdict().missed()).count();
        String page = PageMarkdown.page(runs, ratios, null);
        long marked = page.lines().filter(l -> l.startsWith("| ") && l.contains("| **missed**")).count();
        assertThat(marked).isEqualTo(missed);
        String note = page.lines().filter(l -> l.startsWith("- Missed: ")).findFirst().orElseThrow();
        assertThat(note).startsWith(missed == 0 ? "- Missed: no target" : "- Missed: " + missed + " row");
        long within = ratios.stream().filter(r -> r.verdict() == Verdict.WITHIN_ERROR).count();
        assertThat(note).contains(within + (within == 1 ? " row is" : " rows are") + " within error");
    }

    @Test
    void aCeilingIsMetOnlyWhenTheWholeErrorRangeMeetsIt() {
        assertThat(Verdict.atMost(1.00, 0.98, 1.02, 1.03)).isEqualTo(Verdict.MET);
        assertThat(Verdict.atMost(1.02, 0.99, 1.05, 1.03)).as("the upper bound misses").isEqualTo(Verdict.WITHIN_ERROR);
        assertThat(Verdict.atMost(1.05, 1.02, 1.08, 1.03)).as("the point misses, the lower bound meets")
                .isEqualTo(Verdict.WITHIN_ERROR);
        assertThat(Verdict.atMost(1.10, 1.04, 1.16, 1.03)).isEqualTo(Verdict.MISSED);
        assertThat(Verdict.atMost(1.02, Double.NaN, Double.NaN, 1.03)).isEqualTo(Verdict.MET_NO_ERROR);
        assertThat(Verdict.atMost(1.04, Double.NaN, Double.NaN, 1.03)).isEqualTo(Verdict.MISSED_NO_ERROR);
        assertThat(Verdict.atMost(1.04, 0.9, 1.1, Double.NaN)).isEqualTo(Verdict.NONE);
    }

    @Test
    void aFloorIsMetOnlyWhenTheWholeErrorRangeMeetsIt() {
        assertThat(Verdict.atLeast(3e6, 2.5e6, 3.5e6, 2e6)).isEqualTo(Verdict.MET);
        assertThat(Verdict.atLeast(3e6, 1e6, 5e6, 2e6)).isEqualTo(Verdict.WITHIN_ERROR);
        assertThat(Verdict.atLeast(1e6, 0.5e6, 1.5e6, 2e6)).isEqualTo(Verdict.MISSED);
    }

    @Test
    void aThroughputsTimeBoundsInvertItsScoreBounds() {
        JmhRuns.Result r = new JmhRuns.Result("run", "B.x", "", "thrpt", 4e6, 1e6, "ops/s", Double.NaN, Double.NaN,
                java.util.Map.of(), java.util.Map.of());
        double[] b = r.secondsPerOpBounds();
        assertThat(b[0]).isEqualTo(1 / 5e6);
        assertThat(b[1]).isEqualTo(1 / 3e6);
        JmhRuns.Result wide = new JmhRuns.Result("run", "B.x", "", "thrpt", 4e6, 5e6, "ops/s", Double.NaN,
                Double.NaN, java.util.Map.of(), java.util.Map.of());
        assertThat(wide.secondsPerOpBounds()[1]).as("an error reaching zero throughput").isInfinite();
        JmhRuns.Result time = new JmhRuns.Result("run", "B.y", "", "avgt", 100, 10, "ns/op", Double.NaN,
                Double.NaN, java.util.Map.of(), java.util.Map.of());
        assertThat(time.secondsPerOpBounds()).containsExactly(new double[] {90e-9, 110e-9}, within(1e-18));
    }
}
