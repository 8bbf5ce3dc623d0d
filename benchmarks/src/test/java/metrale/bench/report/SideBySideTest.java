// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import metrale.bench.report.JmhRuns.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code NAME-sidebyside.json}, as {@code benchmarks/sidebyside/run.sh} writes it, read beside {@code NAME-jmh.json}. */
class SideBySideTest {

    @TempDir
    Path dir;

    /** The rows of a run where the C side ran, torch did and CuPy was not installed. */
    private static final String[] ROWS = {
        "{\"name\": \"c.device\", \"info\": \"NVIDIA H200, CUDA driver API 13.0\"}",
        "{\"name\": \"c.allocFree1MiB\", \"ns\": 70123.4, \"min\": 69000.0, \"max\": 71000.5, \"rounds\": 5, "
                + "\"iterations\": 2000, \"what\": \"cuMemAlloc_v2+cuMemFree_v2 of 1 MiB, warm\"}",
        "{\"name\": \"c.graphSetLaunch100\", \"ns\": 5000.0, \"min\": 4900.0, \"max\": 5100.0, \"rounds\": 5, "
                + "\"iterations\": 4000, \"what\": \"set + launch\"}",
        "{\"name\": \"torch.cacheHit1MiB\", \"ns\": 4000.0, \"min\": 3900.0, \"max\": 4100.0, \"rounds\": 5, "
                + "\"iterations\": 100000, \"what\": \"torch.empty + del\"}",
        "{\"name\": \"cupy.poolHit1MiB\", \"ns\": null, \"skipped\": \"cupy not importable: ModuleNotFoundError: "
                + "No module named 'cupy'\"}",
    };

    @Test
    void theFileBesideARunsJmhJsonIsReadWithIt() throws IOException {
        Synthetic.sideBySide(dir, "h200-fast", ROWS);
        Run run = JmhRuns.read(Synthetic.jmh().write(dir, "h200-fast"));
        SideBySide s = run.sideBySide();
        assertThat(s.present()).isTrue();
        assertThat(s.file()).isEqualTo(dir.resolve("h200-fast-sidebyside.json"));
        assertThat(s.rows()).extracting(SideBySide.Row::name).containsExactly("c.device", "c.allocFree1MiB",
                "c.graphSetLaunch100", "torch.cacheHit1MiB", "cupy.poolHit1MiB");
        SideBySide.Row alloc = s.measured("c.allocFree1MiB");
        assertThat(alloc.ns()).isEqualTo(70123.4);
        assertThat(alloc.min()).isEqualTo(69000.0);
        assertThat(alloc.max()).isEqualTo(71000.5);
        assertThat(alloc.rounds()).isEqualTo(5);
        assertThat(alloc.iterations()).isEqualTo(2000);
        assertThat(alloc.what()).isEqualTo("cuMemAlloc_v2+cuMemFree_v2 of 1 MiB, warm");
        assertThat(s.rows().getFirst().info()).isEqualTo("NVIDIA H200, CUDA driver API 13.0");
        assertThat(s.rows().getFirst().measured()).isFalse();
        assertThat(s.measured("cupy.poolHit1MiB")).isNull();
        assertThat(s.missing("torch.cacheHit1MiB", "h200-fast")).isNull();
        assertThat(s.missing("cupy.poolHit1MiB", "h200-fast"))
                .isEqualTo("cupy.poolHit1MiB skipped: cupy not importable: ModuleNotFoundError: No module named 'cupy'");
    }

    @Test
    void aRunWithoutOneHasNone() throws IOException {
        Run run = JmhRuns.read(Synthetic.jmh().write(dir, "h200-fast"));
        assertThat(run.sideBySide()).isSameAs(SideBySide.NONE);
        assertThat(run.sideBySide().present()).isFalse();
        assertThat(run.sideBySide().missing("c.launchEmpty", "h200-fast")).isEqualTo("no `h200-fast-sidebyside.json`");
        Synthetic.sideBySide(dir, "other", ROWS);
        assertThat(JmhRuns.read(dir.resolve("h200-fast-jmh.json")).sideBySide().present())
                .as("another run's file").isFalse();
    }

    @Test
    void aMalformedFileNamesItself() throws IOException {
        Path f = Files.writeString(dir.resolve("bad-sidebyside.json"), "[{\"name\": \"c.x\", \"ns\": 1,]");
        assertThatThrownBy(() -> SideBySide.read(f)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(f.toString());
        Path g = Files.writeString(dir.resolve("obj-sidebyside.json"), "{\"name\": \"c.x\"}");
        assertThatThrownBy(() -> SideBySide.read(g)).hasMessageContaining("expected a JSON array");
        Path h = Files.writeString(dir.resolve("anon-sidebyside.json"), "[{\"ns\": 1}]");
        assertThatThrownBy(() -> SideBySide.read(h)).hasMessageContaining("a row without a name");
    }

    @Test
    void jmhsPerIterationDataIsReadForkAfterFork() throws IOException {
        String json = "[{\"benchmark\": \"metrale.bench.cuda.PoolBench.pair\", \"mode\": \"avgt\", \"params\": {}, "
                + "\"primaryMetric\": {\"score\": 1.0, \"scoreError\": \"NaN\", \"scoreUnit\": \"us/op\"}, "
                + "\"secondaryMetrics\": {\"bareNs\": {\"score\": 10.0, \"scoreError\": \"NaN\", \"scoreUnit\": \"#\", "
                + "\"rawData\": [[1.0, 2.0], [3.0, 4.0]]}, \"ops\": {\"score\": 4.0, \"scoreError\": \"NaN\", "
                + "\"scoreUnit\": \"#\"}}}]";
        Path f = Files.writeString(dir.resolve("raw-jmh.json"), json);
        List<JmhRuns.Result> results = JmhRuns.read(f).results();
        assertThat(results.getFirst().secondaryRaw().get("bareNs")).containsExactly(1.0, 2.0, 3.0, 4.0);
        assertThat(results.getFirst().secondaryRaw().get("ops")).isEmpty();
    }
}
