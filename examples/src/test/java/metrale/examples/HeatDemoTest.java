// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo end to end on the simulator, at a small size. */
class HeatDemoTest {

    private static String runDemo(HeatDemo.Options o, int expectedStatus) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int status;
        try (PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            status = HeatDemo.run(o, out);
        }
        String text = buf.toString(StandardCharsets.UTF_8);
        assertThat(status).as(text).isEqualTo(expectedStatus);
        return text;
    }

    @Test
    void smallRunMatchesTheReferenceExactly() {
        String text = runDemo(new HeatDemo.Options(20, 30, 10, "sim", false, null), 0);
        assertThat(text)
                .contains("reference: 42 steps on 20 x 20")
                .contains("max |device - reference| = 0.000e+00")
                .contains("0 buffer(s) with a corrupted red zone")
                .endsWith("PASS" + System.lineSeparator());
    }

    @Test
    void withoutTwinsThePtxRunsAndGivesTheSameResult() {
        String twin = runDemo(new HeatDemo.Options(20, 30, 10, "sim", false, null), 0);
        String ptx = runDemo(new HeatDemo.Options(20, 30, 10, "sim", false, null, true), 0);
        assertThat(ptx)
                .contains("no twins: the simulator runs the kernels' own PTX")
                .doesNotContain("registered Java twins")
                .contains("max |device - reference| = 0.000e+00")
                .endsWith("PASS" + System.lineSeparator());
        assertThat(twin).contains("registered Java twins");
        assertThat(residuals(ptx)).isEqualTo(residuals(twin)).isNotEmpty();
    }

    @Test
    void withoutTwinsThePlantedOverflowIsCaughtAtTheStore() {
        String text = runDemo(new HeatDemo.Options(16, 4, 2, "sim", true, null, true), 0);
        assertThat(text)
                .containsPattern("kernel heat::fill, thread \\(0,0,0\\) of block \\(1,0,0\\) at PTX line \\d+ \\(heat\\.cu:\\d+\\)"
                        + " `st\\.global\\.f32[^`]*`: a store to 0x[0-9a-f]+ \\(\\+4 bytes\\) runs 4 bytes past the end of the"
                        + " 256-byte buffer at 0x[0-9a-f]+, into the red zone after it")
                .contains("  overflow found, as planted" + System.lineSeparator())
                .doesNotContain("NOT found")
                .endsWith("PASS" + System.lineSeparator());
    }

    /** The planted overflow's red-zone record went to the tests' log, once, naming the demo's line. */
    private static void assertOverflowLogged(int mark) {
        assertThat(metrale.gpu.contract.TestLog.since(mark, System.Logger.Level.WARNING, m -> m.contains("red zone of")))
                .singleElement().satisfies(m -> assertThat(m.message()).contains("allocated at HeatDemo.java:", "overwritten"));
    }

    /** {@return the residual lines a run printed: equal lines mean equal grids step by step} */
    private static java.util.List<String> residuals(String text) {
        return text.lines().filter(l -> l.contains("residual ") && !l.contains("0x")).toList();
    }

    @Test
    void traceDiffShowsTheSwappedPointers() {
        String text = runDemo(new HeatDemo.Options(8, 3, 2, "sim", false, null), 0);
        assertThat(text).containsPattern("1 differing op\\(s\\) of 1")
                .containsPattern("#0 heat::jacobi_step \\[kernel] arg0 0x[0-9a-f]+ -> 0x[0-9a-f]+ \\(Δ (-?\\d+)\\); "
                        + "arg1 0x[0-9a-f]+ -> 0x[0-9a-f]+ \\(Δ -?\\d+\\)");
    }

    @Test
    void plantedOverflowIsFoundWithItsBufferAndSite() {
        int mark = metrale.gpu.contract.TestLog.mark();
        String text = runDemo(new HeatDemo.Options(16, 4, 2, "sim", true, null), 0);
        assertOverflowLogged(mark);
        assertThat(text)
                .contains("1 buffer(s) with a corrupted red zone")
                .containsPattern("red zone of 0x[0-9a-f]+ \\(256 B, #\\d+, allocated at HeatDemo\\.java:\\d+\\) overwritten: 16 byte\\(s\\)")
                .contains("  overflow found, as planted" + System.lineSeparator())
                .doesNotContain("NOT found")
                .endsWith("PASS" + System.lineSeparator());
    }

    @Test
    void jfrRecordingHoldsTheLaunches(@TempDir Path dir) {
        Path file = dir.resolve("heat.jfr");
        String text = runDemo(new HeatDemo.Options(16, 10, 4, "sim", false, file), 0);
        assertThat(file).exists();
        assertThat(text).containsPattern("metrale\\.Launch +\\d+").containsPattern("metrale\\.Alloc +\\d+");
    }

    @Test
    void badOptionsAreNamed() {
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--size", "2"})).hasMessageContaining("--size 2");
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--graph-steps", "3"})).hasMessageContaining("must be even");
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--steps"})).hasMessageContaining("--steps needs a value");
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--bogus"})).hasMessageContaining("'--bogus'");
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--size", "x"})).hasMessageContaining("not a whole number");
    }

    @Test
    void aJfrFileInAFolderThatDoesNotExistIsRefusedBeforeTheRun(@TempDir Path dir) {
        Path missing = dir.resolve("no/such/folder/heat.jfr");
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--jfr", missing.toString()}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--jfr " + missing).hasMessageContaining(missing.getParent() + " does not exist");
        assertThatThrownBy(() -> HeatDemo.parse(new String[] {"--jfr", dir.toString()})).hasMessageContaining("is a folder");
        assertThat(HeatDemo.parse(new String[] {"--jfr", dir.resolve("heat.jfr").toString()}).orElseThrow().jfr())
                .isEqualTo(dir.resolve("heat.jfr").toAbsolutePath());
    }

    @Test
    void helpAsksForUsage() {
        assertThat(HeatDemo.parse(new String[] {"--steps", "5", "--help"})).isEmpty();
        assertThat(HeatDemo.usage()).contains("--size", "--steps", "--graph-steps", "--backend", "--plant-overflow", "--no-twins", "--jfr");
    }

    @Test
    void unknownBackendIsADeviceError() {
        assertThatThrownBy(() -> HeatDemo.run(new HeatDemo.Options(8, 1, 0, "nope", false, null),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .hasMessageContaining("nope");
    }

    @Test
    void ptxDeclaresEveryTwin() throws Exception {
        String ptx = new String(HeatKernels.ptx(), StandardCharsets.US_ASCII);
        assertThat(ptx).contains(".entry " + HeatKernels.JACOBI + "(", ".entry " + HeatKernels.RESIDUAL + "(",
                ".entry " + HeatKernels.FILL + "(");
        Path cu = Path.of("src/main/cuda/heat.cu");
        if (Files.exists(cu)) {
            assertThat(Files.readString(cu)).contains("void jacobi_step(", "void residual_reduce(", "void fill(");
        }
    }
}
