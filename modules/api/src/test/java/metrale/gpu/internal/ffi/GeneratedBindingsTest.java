// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.ffi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The checked-in bindings ({@code LibCuda}, {@code LibNvrtc}, {@code LibNccl}) are what
 * {@code scripts/GenBindings.java} writes from the prototype lists under
 * {@code modules/*}{@code /src/main/bindings}: an edit to a list without regenerating, or to a
 * generated class by hand, fails here. Here, beside the loader the generated classes call, so that
 * a build of either binding module (which builds this one) runs it.
 */
class GeneratedBindingsTest {

    @Test
    void theGeneratedBindingsAreWhatTheGeneratorWritesFromTheLists() throws Exception {
        Path root = root();
        assumeTrue(root != null, "not in a source tree: no scripts/GenBindings.java above " + Path.of("").toAbsolutePath());
        assumeTrue(ModuleLayer.boot().findModule("jdk.compiler").isPresent(), "this runtime cannot run a source file");
        // The same JDK, in source-file mode: --check compares and writes nothing.
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "scripts/GenBindings.java", "--check")).directory(root.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the generator finishes").isTrue();
        assertThat(p.exitValue()).as("java scripts/GenBindings.java --check:%n%s", out).isZero();
    }

    private static Path root() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.exists(d.resolve("scripts/GenBindings.java"))) {
                return d;
            }
        }
        return null;
    }
}
