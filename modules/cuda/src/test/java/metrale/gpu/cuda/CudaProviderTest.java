// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import org.junit.jupiter.api.Test;

/**
 * The provider on any machine, GPU or not: discovery, and "unavailable" with a reason instead of
 * an exception when the driver or the native-access flag is missing (each in a child JVM, since
 * the driver loads once per process).
 */
class CudaProviderTest {

    @Test
    void theProviderIsFoundAndRanksAboveTheSimulator() {
        BackendProvider p = new CudaBackendProvider();
        assertThat(p.name()).isEqualTo("cuda");
        assertThat(p.priority()).isEqualTo(100);
        assertThat(Gpu.backends()).anySatisfy(b -> {
            assertThat(b.name()).isEqualTo("cuda");
            assertThat(b.priority()).isEqualTo(100);
        });
    }

    @Test
    void availabilityNeverThrowsAndExplainsItself() {
        Availability a = new CudaBackendProvider().availability();
        if (a.available()) {
            assertThat(a.reason()).as("the reason of an available backend").isEmpty();
            try (Gpu gpu = Gpu.builder().backend("cuda").open()) {
                assertThat(gpu.isClosed()).as("a runtime opened on the available backend").isFalse();
            }
        } else {
            assertThat(CudaCondition.required()).as("%s=true but CUDA is unavailable: %s",
                    CudaCondition.REQUIRED_PROPERTY, a.reason()).isFalse();
            assertThat(a.reason()).isNotBlank();
            assertThatThrownBy(() -> Gpu.builder().backend("cuda").open()).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.NO_DEVICE);
                assertThat(e.getMessage()).as("opening names why CUDA is unavailable").contains(a.reason());
            });
        }
        // Asking twice gives the same answer: the driver is probed once.
        assertThat(new CudaBackendProvider().availability()).isEqualTo(a);
    }

    @Test
    void aMissingDriverLibraryIsAReasonNotAnException() throws Exception {
        List<String> out = probe(List.of("--enable-native-access=ALL-UNNAMED", "-Dmetrale.cuda.library=libmetrale-no-such-driver.so.1"));
        assertThat(out).contains("available=false");
        assertThat(String.join("\n", out)).contains("libmetrale-no-such-driver.so.1", "-Dmetrale.cuda.library=");
    }

    @Test
    void missingNativeAccessNamesTheFlag() throws Exception {
        List<String> out = probe(List.of());
        assertThat(out).contains("available=false");
        assertThat(String.join("\n", out)).contains("--enable-native-access=ALL-UNNAMED");
    }

    @Test
    void anInstalledDriverWithoutNativeAccessIsPresentButUnusable(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        // A file at the library path is what the presence check looks for; it is never loaded,
        // since without native access the probe makes no native call.
        Path lib = java.nio.file.Files.writeString(dir.resolve("libcuda.so.1"), "not a library");
        List<String> out = probe(List.of("-Dmetrale.cuda.library=" + lib));
        assertThat(out).contains("available=false", "present=true");
        assertThat(String.join("\n", out)).contains("an NVIDIA driver is installed", lib.toString(), "--enable-native-access=ALL-UNNAMED");
    }

    @Test
    void noDriverAndNoNativeAccessIsNotPresent() throws Exception {
        List<String> out = probe(List.of("-Dmetrale.cuda.library=/nonexistent/metrale/libcuda.so.1"));
        assertThat(out).contains("available=false", "present=false");
    }

    /** The class path of this JVM plus where the probe's classes came from (a launcher may load tests from its own loader). */
    private static String classPath() throws java.net.URISyntaxException {
        List<String> parts = new ArrayList<>();
        for (Class<?> c : List.of(AvailabilityProbe.class, CudaBackendProvider.class, Availability.class, metrale.telemetry.Telemetry.class)) {
            parts.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        parts.add(System.getProperty("java.class.path"));
        return String.join(java.io.File.pathSeparator, parts);
    }

    private static List<String> probe(List<String> flags) throws IOException, InterruptedException, java.net.URISyntaxException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(flags);
        cmd.add("-cp");
        cmd.add(classPath());
        cmd.add(AvailabilityProbe.class.getName());
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String text = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as(text).isZero();
        return text.lines().toList();
    }
}
