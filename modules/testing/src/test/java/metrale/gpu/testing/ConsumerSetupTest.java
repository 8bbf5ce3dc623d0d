// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The consumer project has no parent, so nothing updates its metrale version with the reactor's:
 * this names the files to change when the version moves, before the consumer fails to resolve.
 */
class ConsumerSetupTest {

    private static final Pattern VERSION = Pattern.compile("<metrale\\.version>([^<]+)</metrale\\.version>");

    private static String versionIn(Path file) throws IOException {
        Matcher m = VERSION.matcher(Files.readString(file));
        assertThat(m.find()).as("%s sets <metrale.version>", file).isTrue();
        return m.group(1);
    }

    @Test
    void theGuidesSurefireSettingsAreTheConsumers() throws IOException {
        Path root = Path.of(System.getProperty("metrale.repository.root", "../.."));
        String pom = Files.readString(root.resolve("examples/consumer/pom.xml"));
        String guide = Files.readString(root.resolve("docs/user-guide.md"));
        Matcher m = Pattern.compile("<argLine>[^<]+</argLine>|<include>[^<]+</include>|<artifactId>metrale-gpu[^<]*</artifactId>")
                .matcher(pom);
        int n = 0;
        while (m.find()) {
            assertThat(guide).as("docs/user-guide.md has the consumer's %s", m.group()).contains(m.group());
            n++;
        }
        assertThat(n).as("settings found in the consumer's pom").isGreaterThanOrEqualTo(6);
    }

    @Test
    void theConsumerAndTheGuideNameTheReactorsVersion() throws IOException {
        String reactor = System.getProperty("metrale.reactor.version");
        Path root = Path.of(System.getProperty("metrale.repository.root", "../.."));
        assertThat(reactor).as("surefire passes metrale.reactor.version").isNotBlank();
        assertThat(versionIn(root.resolve("examples/consumer/pom.xml"))).as("examples/consumer/pom.xml").isEqualTo(reactor);
        assertThat(versionIn(root.resolve("docs/user-guide.md"))).as("docs/user-guide.md's Maven set-up").isEqualTo(reactor);
        assertThat(Files.readString(root.resolve("docs/user-guide.md")))
                .as("docs/user-guide.md's Gradle set-up")
                .contains("val metraleVersion = \"" + reactor + "\"");
    }
}
