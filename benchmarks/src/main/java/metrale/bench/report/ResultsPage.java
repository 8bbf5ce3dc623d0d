// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import metrale.bench.report.JmhRuns.Run;
import metrale.bench.report.Targets.Ratio;

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
 * one the page says what JMH's JSON itself records. A {@code NAME-sidebyside.json} beside it
 * ({@code benchmarks/sidebyside/run.sh} with {@code RUN_NAME=NAME}: the driver API from C, PyTorch,
 * CuPy) is read with it, shown under the run and compared with by issue #22's targets, which judge
 * only runs whose name starts with {@code h200-fast}. Each ratio is a benchmark's score over its
 * baseline's with the same parameters, in the direction where above 1 means slower than the
 * baseline. Targets are judged with JMH's 99.9% error bars: a target is met when the whole error
 * range of the ratio (the worst of both scores' bounds) meets it, missed when none of the range
 * does, and "within error" otherwise. Throughput targets compare the score itself the same way.
 * Every number in the page's prose is computed from the result files too.
 */
public final class ResultsPage {

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
        List<Run> runs = JmhRuns.readAll(jsons);
        List<Ratio> ratios = Targets.ratios(runs);
        if (svg != null) {
            Files.writeString(svg, Charts.svg(ratios), StandardCharsets.UTF_8);
        }
        String pool = Charts.poolSvg(runs);
        if (poolSvg != null && pool != null) {
            Files.writeString(poolSvg, pool, StandardCharsets.UTF_8);
        }
        String page = PageMarkdown.page(runs, ratios, svg != null ? svgLink : null);
        if (poolSvg != null && pool != null) {
            page = page.replace("\n### Reading the table\n", "\n![pool pair cost by size](" + poolSvg.getFileName()
                    + ")\n\n### Reading the table\n");
        }
        System.out.print(page);
    }
}
