// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SettingTest {

    static final String BEGIN = "<!-- settings-table:begin (generated from metrale.gpu.Setting by SettingTest) -->\n";
    static final String END = "<!-- settings-table:end -->";

    @AfterEach
    void clear() {
        for (Setting s : Setting.values()) {
            System.clearProperty(s.property());
        }
    }

    @Test
    void aBuilderCallWinsOverThePropertyAndReachesTheTelemetry() {
        System.setProperty("metrale.d2h.trace", "1");
        System.setProperty("metrale.timing", "true");
        GpuOptions o = Gpu.builder().d2hTrace(false).timing(false).options();
        assertThat(o.d2hTrace()).isFalse();
        assertThat(o.timing()).isFalse();
        assertThat(o.telemetry().counters().d2hSiteTrace()).as("a fresh Telemetry reads no setting").isFalse();
        assertThat(o.telemetry().timing().enabled()).isFalse();
    }

    /** The environment itself, in a child JVM: the builder wins, and a bare Telemetry reads nothing. */
    @Test
    void aBuilderCallWinsOverTheEnvironment() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SettingProbe.class.getName()).redirectErrorStream(true);
        pb.environment().put("METRALE_D2H_TRACE", "1");
        pb.environment().put("METRALE_TIMING", "1");
        Process proc = pb.start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor()).as(out).isZero();
        assertThat(out.lines()).contains("builder=false,false", "builderTelemetry=false,false", "unset=true,true",
                "telemetry=false,false");
    }

    @Test
    void thePropertyFillsWhatTheBuilderLeftUnset() {
        System.setProperty("metrale.d2h.trace", "on");
        System.setProperty("metrale.redzone", "64");
        GpuOptions o = Gpu.builder().options();
        assertThat(o.d2hTrace()).isTrue();
        assertThat(o.redZoneBytes()).isEqualTo(64);
        assertThat(o.allocSites()).as("default").isTrue();
    }

    @Test
    void oneBooleanGrammarEverywhere() {
        for (String on : new String[] {"true", "TRUE", "1", "yes", "On", " on "}) {
            assertThat(Setting.parseBoolean("x", on)).as(on).isTrue();
            assertThat(new DriverConfig(Map.of("k.flag", on)).getBoolean("k.flag", false)).as(on).isTrue();
        }
        for (String off : new String[] {"false", "0", "no", "OFF"}) {
            assertThat(Setting.parseBoolean("x", off)).as(off).isFalse();
            assertThat(new DriverConfig(Map.of("k.flag", off)).getBoolean("k.flag", true)).as(off).isFalse();
        }
        System.setProperty("metrale.timing", "maybe");
        assertThatThrownBy(() -> Gpu.builder().options())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrale.timing").hasMessageContaining("METRALE_TIMING").hasMessageContaining("'maybe'");
        assertThatThrownBy(() -> new DriverConfig(Map.of("k.flag", "maybe")).getBoolean("k.flag", false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("k.flag").hasMessageContaining("'maybe'");
    }

    @Test
    void theAllocatorIsAChoiceInAnyCase() {
        for (String w : new String[] {"driver", "CACHING", "Cuda", " caching "}) {
            System.setProperty(Setting.ALLOCATOR.property(), w);
            assertThat(Gpu.builder().options().allocator()).as(w).isEqualTo(w.strip().toLowerCase(java.util.Locale.ROOT));
            System.clearProperty(Setting.ALLOCATOR.property());
            assertThat(Gpu.builder().allocator(w).options().allocator()).as(w).isEqualTo(w.strip().toLowerCase(java.util.Locale.ROOT));
        }
        assertThat(Gpu.builder().options().allocator()).as("default").isEqualTo("driver");
        System.setProperty(Setting.ALLOCATOR.property(), "slab");
        assertThatThrownBy(() -> Gpu.builder().options())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("metrale.allocator")
                .hasMessageContaining("METRALE_ALLOCATOR").hasMessageContaining("'slab'")
                .hasMessageContaining("driver, caching, cuda");
        assertThatThrownBy(() -> Gpu.builder().allocator("pool").options())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("metrale.allocator")
                .hasMessageContaining("METRALE_ALLOCATOR").hasMessageContaining("'pool'");
    }

    @Test
    void backendChoicesNumbersAndBooleansNameTheirPropertyAndVariable() {
        DriverConfig c = new DriverConfig(Map.of("k.mode", "Fast", "k.n", "many", "k.flag", "maybe"));
        assertThat(c.getChoice("k.mode", "slow", java.util.List.of("slow", "fast"))).isEqualTo("fast");
        assertThat(c.getChoice("k.unset", "slow", java.util.List.of("slow", "fast"))).isEqualTo("slow");
        assertThatThrownBy(() -> c.getChoice("k.mode", "slow", java.util.List.of("slow")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("option k.mode (metrale.k.mode / METRALE_K_MODE)")
                .hasMessageContaining("'Fast'");
        assertThatThrownBy(() -> c.getLong("k.n", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("option k.n (metrale.k.n / METRALE_K_N)")
                .hasMessageContaining("'many'");
        assertThatThrownBy(() -> c.getBoolean("k.flag", false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("option k.flag (metrale.k.flag / METRALE_K_FLAG)").hasMessageContaining("'maybe'");
    }

    @Test
    void backendOptionsResolveAsTheTableSays() {
        System.setProperty(Setting.SIM_SEED.property(), "9");
        assertThat(DriverConfig.empty().getLong(Setting.SIM_SEED.key(), 0)).isEqualTo(9);
        assertThat(new DriverConfig(Map.of(Setting.SIM_SEED.key(), "4")).getLong(Setting.SIM_SEED.key(), 0)).isEqualTo(4);
        for (Setting s : Setting.values()) {
            if (s.key().contains(".") && s.builderMethod().map(m -> m.startsWith("backendOption")).orElse(false)) {
                assertThat(s.property()).isEqualTo("metrale." + s.key());
                assertThat(s.environment()).isEqualTo("METRALE_" + s.key().toUpperCase(java.util.Locale.ROOT).replace('.', '_'));
            }
        }
    }

    @Test
    void eachSettingOnceAndEachDefaultInItsGrammar() {
        Set<String> seen = new HashSet<>();
        for (Setting s : Setting.values()) {
            assertThat(seen.add(s.key())).as("key " + s.key()).isTrue();
            assertThat(seen.add(s.property())).as("property " + s.property()).isTrue();
            assertThat(seen.add(s.environment())).as("env " + s.environment()).isTrue();
            s.defaultValue().ifPresent(d -> {
                switch (s.grammar()) {
                    case BOOLEAN -> Setting.parseBoolean(s.name(), d);
                    case WHOLE_NUMBER -> Setting.parseWhole(s.name(), d);
                    default -> assertThat(d).isNotBlank();
                }
            });
            assertThat(Setting.forKey(s.key())).contains(s);
        }
    }

    /**
     * docs/options.md holds the table as {@link Setting#markdownTable()} renders it. Run with
     * {@code -Dmetrale.docs.update=true} to rewrite the section after changing the table.
     */
    @Test
    void optionsPageHoldsTheTable() throws IOException {
        Path page = repoRoot().resolve("docs/options.md");
        String text = Files.readString(page, StandardCharsets.UTF_8);
        int b = text.indexOf(BEGIN);
        int e = text.indexOf(END);
        assertThat(b).as(page + " has the marker " + BEGIN.strip()).isGreaterThanOrEqualTo(0);
        assertThat(e).as(page + " has the marker " + END).isGreaterThan(b);
        String want = text.substring(0, b + BEGIN.length()) + Setting.markdownTable() + text.substring(e);
        if (Boolean.getBoolean("metrale.docs.update")) {
            Files.writeString(page, want, StandardCharsets.UTF_8);
            text = want;
        }
        assertThat(text).as(page + " is out of date with metrale.gpu.Setting; rerun this test with -Dmetrale.docs.update=true")
                .isEqualTo(want);
    }

    static Path repoRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("docs/options.md"))) {
            p = p.getParent();
        }
        assertThat(p).as("repository root above " + Path.of("").toAbsolutePath()).isNotNull();
        return p;
    }
}
