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
import metrale.telemetry.Telemetry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SettingTest {

    static final String BEGIN = "<!-- settings-table:begin (generated from metrale.gpu.Setting by SettingTest) -->\n";
    static final String END = "<!-- settings-table:end -->";

    /** The settings' properties as the build set them (the test log's folder, gpu.required), put back after each test. */
    private final java.util.Map<String, String> before = new java.util.HashMap<>();

    @org.junit.jupiter.api.BeforeEach
    void keep() {
        for (Setting s : Setting.values()) {
            String v = System.getProperty(s.property());
            if (v != null) {
                before.put(s.property(), v);
            }
        }
    }

    @AfterEach
    void clear() {
        for (Setting s : Setting.values()) {
            System.clearProperty(s.property());
        }
        before.forEach(System::setProperty);
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

    /** The deprecated variables, in a child JVM: mapped onto the levels, and a conflict with the new one refused. */
    @Test
    void theOldVariablesMapAndAConflictWithTheNewOneIsRefused() throws Exception {
        assertThat(probe(Map.of("METRALE_ALLOC_SITES_SAMPLE", "32"))).contains("leaks=SAMPLED,32");
        assertThat(probe(Map.of("METRALE_ALLOC_SITES", "0"))).contains("leaks=OFF,128");
        assertThat(probe(Map.of("METRALE_LEAK_DETECTION", "All", "METRALE_ALLOC_SITES", "yes"))).contains("leaks=ALL,128");
        assertThat(probe(Map.of("METRALE_LEAK_DETECTION", "off", "METRALE_ALLOC_SITES", "true")))
                .anySatisfy(l -> assertThat(l).startsWith("leaks=refused: ").contains("METRALE_LEAK_DETECTION")
                        .contains("METRALE_ALLOC_SITES").contains("environment variable"));
    }

    private static java.util.List<String> probe(Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SettingProbe.class.getName()).redirectErrorStream(true);
        for (Setting s : Setting.values()) {
            pb.environment().remove(s.environment());
        }
        pb.environment().putAll(env);
        Process proc = pb.start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor()).as(out).isZero();
        return out.lines().toList();
    }

    @Test
    void leakDetectionIsAChoiceInAnyCaseWithARateOfAtLeastOne() {
        assertThat(Gpu.builder().options().leakDetection()).as("default").isEqualTo(LeakDetection.SAMPLED);
        for (String[] w : new String[][] {{"off", "OFF"}, {"Sampled", "SAMPLED"}, {" ALL ", "ALL"}}) {
            System.setProperty(Setting.LEAK_DETECTION.property(), w[0]);
            assertThat(Gpu.builder().options().leakDetection()).as(w[0]).isEqualTo(LeakDetection.valueOf(w[1]));
        }
        assertThat(Gpu.builder().leakDetection(LeakDetection.OFF).options().leakDetection()).as("code wins")
                .isEqualTo(LeakDetection.OFF);
        System.setProperty(Setting.LEAK_DETECTION.property(), "paranoid");
        assertThatThrownBy(() -> Gpu.builder().options()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrale.leakDetection").hasMessageContaining("METRALE_LEAK_DETECTION")
                .hasMessageContaining("'paranoid'").hasMessageContaining("off, sampled, all");
        System.clearProperty(Setting.LEAK_DETECTION.property());
        System.setProperty(Setting.LEAK_DETECTION_SAMPLE.property(), "64");
        assertThat(Gpu.builder().options().leakDetectionSample()).isEqualTo(64);
        assertThat(Gpu.builder().leakDetectionSample(8).options().leakDetectionSample()).isEqualTo(8);
        System.setProperty(Setting.LEAK_DETECTION_SAMPLE.property(), "0");
        assertThatThrownBy(() -> Gpu.builder().options()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrale.leakDetection.sample").hasMessageContaining("must be >= 1");
        assertThatThrownBy(() -> Gpu.builder().leakDetectionSample(-1).options()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leakDetection.sample").hasMessageContaining("'-1'");
        assertThatThrownBy(() -> Gpu.builder().leakDetection(null)).isInstanceOf(NullPointerException.class);
        assertThat(LeakDetection.fromOption("Sampled")).isEqualTo(LeakDetection.SAMPLED);
        assertThat(java.util.Arrays.stream(LeakDetection.values()).map(LeakDetection::option).toList())
                .isEqualTo(LeakDetection.OPTIONS);
    }

    @SuppressWarnings("removal")
    @Test
    void theOldBuilderCallsPropertiesAndConstructorMapOntoTheLevels() {
        record Case(GpuBuilder builder, LeakDetection level, int sample) {
        }
        for (Case c : java.util.List.of(
                new Case(Gpu.builder().allocSites(true), LeakDetection.ALL, 128),
                new Case(Gpu.builder().allocSites(false), LeakDetection.OFF, 128),
                new Case(Gpu.builder().allocSiteSample(64), LeakDetection.SAMPLED, 64),
                new Case(Gpu.builder().allocSites(true).allocSiteSample(8), LeakDetection.SAMPLED, 8),
                new Case(Gpu.builder().allocSites(false).allocSiteSample(8), LeakDetection.OFF, 8),
                new Case(Gpu.builder().allocSiteSample(1), LeakDetection.ALL, 128),
                // The same answer under both names is no conflict.
                new Case(Gpu.builder().allocSites(true).leakDetection(LeakDetection.ALL), LeakDetection.ALL, 128),
                new Case(Gpu.builder().allocSiteSample(16).leakDetection(LeakDetection.SAMPLED), LeakDetection.SAMPLED, 16),
                new Case(Gpu.builder().allocSiteSample(16).leakDetectionSample(16), LeakDetection.SAMPLED, 16))) {
            GpuOptions o = c.builder().options();
            assertThat(o.leakDetection()).as(c.toString()).isEqualTo(c.level());
            assertThat(o.leakDetectionSample()).as(c.toString()).isEqualTo(c.sample());
        }
        GpuOptions all = Gpu.builder().leakDetection(LeakDetection.ALL).options();
        assertThat(all.allocSites()).isTrue();
        assertThat(all.allocSiteSample()).isEqualTo(1);
        GpuOptions sampled = Gpu.builder().leakDetectionSample(32).options();
        assertThat(sampled.allocSites()).isTrue();
        assertThat(sampled.allocSiteSample()).isEqualTo(32);
        assertThat(Gpu.builder().leakDetection(LeakDetection.OFF).options().allocSites()).isFalse();

        System.setProperty(Setting.ALLOC_SITES.property(), "off");
        assertThat(Gpu.builder().options().leakDetection()).isEqualTo(LeakDetection.OFF);
        assertThat(Gpu.builder().leakDetection(LeakDetection.ALL).options().leakDetection())
                .as("a new name in code wins over an old property").isEqualTo(LeakDetection.ALL);
        System.clearProperty(Setting.ALLOC_SITES.property());
        System.setProperty(Setting.ALLOC_SITES_SAMPLE.property(), "32");
        assertThat(Gpu.builder().options()).satisfies(o -> {
            assertThat(o.leakDetection()).isEqualTo(LeakDetection.SAMPLED);
            assertThat(o.leakDetectionSample()).isEqualTo(32);
        });
        System.setProperty(Setting.LEAK_DETECTION.property(), "all");
        assertThat(Gpu.builder().allocSites(false).options().leakDetection())
                .as("an old name in code wins over a new property").isEqualTo(LeakDetection.OFF);
        System.clearProperty(Setting.LEAK_DETECTION.property());
        System.setProperty(Setting.ALLOC_SITES_SAMPLE.property(), "none");
        assertThatThrownBy(() -> Gpu.builder().options()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrale.allocSites.sample").hasMessageContaining("'none'");
        System.setProperty(Setting.ALLOC_SITES_SAMPLE.property(), "0");
        assertThatThrownBy(() -> Gpu.builder().options()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrale.allocSites.sample").hasMessageContaining("must be >= 1");
        System.clearProperty(Setting.ALLOC_SITES_SAMPLE.property());

        Telemetry t = new Telemetry();
        GpuOptions old = new GpuOptions(null, 0, 0, false, false, false, true, false, t, Map.of(), Map.of(), "driver", 64, 0);
        assertThat(old.leakDetection()).isEqualTo(LeakDetection.SAMPLED);
        assertThat(old.leakDetectionSample()).isEqualTo(64);
        GpuOptions older = new GpuOptions(null, 64, 0, false, false, false, true, false, t, Map.of(), Map.of(), "driver", 1);
        assertThat(older.leakDetection()).isEqualTo(LeakDetection.ALL);
        assertThat(older.quarantineBytes()).isEqualTo(GpuOptions.DEFAULT_QUARANTINE_BYTES);
        assertThat(new GpuOptions(null, 0, 0, false, false, false, false, false, t, Map.of(), Map.of(), "driver", 1)
                .leakDetection()).isEqualTo(LeakDetection.OFF);
        assertThatThrownBy(() -> new GpuOptions(null, 0, 0, false, false, false, true, false, t, Map.of(), Map.of(),
                "driver", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allocSiteSample=0");
    }

    @SuppressWarnings("removal")
    @Test
    void anOldAndANewNameThatDisagreeInOnePlaceAreRefusedNamingBoth() {
        assertThatThrownBy(() -> Gpu.builder().leakDetection(LeakDetection.OFF).allocSites(true).options())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leakDetection (metrale.leakDetection / METRALE_LEAK_DETECTION) = 'off' (given in code)")
                .hasMessageContaining("deprecated allocSites (metrale.allocSites / METRALE_ALLOC_SITES) = 'true' (given in code)")
                .hasMessageContaining("which means leakDetection=all");
        assertThatThrownBy(() -> Gpu.builder().leakDetection(LeakDetection.ALL).allocSiteSample(64).options())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leakDetection")
                .hasMessageContaining("allocSites.sample").hasMessageContaining("which means leakDetection=sampled");
        assertThatThrownBy(() -> Gpu.builder().leakDetectionSample(64).allocSiteSample(32).options())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leakDetection.sample")
                .hasMessageContaining("allocSites.sample").hasMessageContaining("which means leakDetection.sample=32");
        System.setProperty(Setting.LEAK_DETECTION.property(), "all");
        System.setProperty(Setting.ALLOC_SITES.property(), "false");
        assertThatThrownBy(() -> Gpu.builder().options()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrale.leakDetection").hasMessageContaining("metrale.allocSites")
                .hasMessageContaining("(system property)");
        assertThat(Gpu.builder().leakDetection(LeakDetection.SAMPLED).options().leakDetection())
                .as("given in code, the new name decides over both properties").isEqualTo(LeakDetection.SAMPLED);
    }

    @Test
    void theLeakDetectionRowsReplaceTheAllocSitesRows() {
        assertThat(Setting.LEAK_DETECTION.key()).isEqualTo("leakDetection");
        assertThat(Setting.LEAK_DETECTION.property()).isEqualTo("metrale.leakDetection");
        assertThat(Setting.LEAK_DETECTION.environment()).isEqualTo("METRALE_LEAK_DETECTION");
        assertThat(Setting.LEAK_DETECTION.defaultValue()).contains("sampled");
        assertThat(Setting.LEAK_DETECTION.grammar()).isEqualTo(Setting.Grammar.CHOICE);
        assertThat(Setting.LEAK_DETECTION.builderMethod()).contains("leakDetection(LeakDetection)");
        assertThat(Setting.LEAK_DETECTION_SAMPLE.key()).isEqualTo("leakDetection.sample");
        assertThat(Setting.LEAK_DETECTION_SAMPLE.environment()).isEqualTo("METRALE_LEAK_DETECTION_SAMPLE");
        assertThat(Setting.LEAK_DETECTION_SAMPLE.defaultValue()).contains(Integer.toString(LeakDetection.DEFAULT_SAMPLE));
        assertThat(Setting.LEAK_DETECTION_SAMPLE.builderMethod()).contains("leakDetectionSample(int)");
        @SuppressWarnings("removal")
        Setting[] old = {Setting.ALLOC_SITES, Setting.ALLOC_SITES_SAMPLE};
        assertThat(old[0].replacedBy()).contains(Setting.LEAK_DETECTION);
        assertThat(old[1].replacedBy()).contains(Setting.LEAK_DETECTION_SAMPLE);
        assertThat(old).allSatisfy(s -> assertThat(s.defaultValue()).as(s.key() + ": unset defers to the new one").isEmpty());
        assertThat(Setting.forKey("allocSites")).contains(old[0]);
        assertThat(java.util.Arrays.stream(Setting.values()).filter(s -> s.replacedBy().isPresent()))
                .containsExactlyInAnyOrder(old);
        String table = Setting.markdownTable();
        int deprecated = table.indexOf("Deprecated names");
        assertThat(deprecated).isPositive();
        assertThat(table.substring(0, deprecated)).contains("| `leakDetection` |").contains("| `leakDetection.sample` |")
                .doesNotContain("| `allocSites");
        assertThat(table.substring(deprecated))
                .contains("| `allocSites` | `allocSites(boolean)` | `metrale.allocSites` | `METRALE_ALLOC_SITES` | `leakDetection` |")
                .contains("| `allocSites.sample` |");
    }

    @Test
    void thePropertyFillsWhatTheBuilderLeftUnset() {
        System.setProperty("metrale.d2h.trace", "on");
        System.setProperty("metrale.redzone", "64");
        GpuOptions o = Gpu.builder().options();
        assertThat(o.d2hTrace()).isTrue();
        assertThat(o.redZoneBytes()).isEqualTo(64);
        assertThat(o.leakDetection()).as("default").isEqualTo(LeakDetection.SAMPLED);
        assertThat(o.leakDetectionSample()).as("default").isEqualTo(LeakDetection.DEFAULT_SAMPLE);
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
        assertThat(Gpu.builder().options().allocator()).as("default").isEqualTo("caching");
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
