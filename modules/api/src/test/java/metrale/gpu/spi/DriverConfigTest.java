package metrale.gpu.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DriverConfigTest {

    private static final String KEY = "drivercfgtest.size";

    @AfterEach
    void clearProperty() {
        System.clearProperty("metrale." + KEY);
    }

    @Test
    void aGivenOptionWinsOverTheSystemProperty() {
        System.setProperty("metrale." + KEY, "7");
        assertThat(new DriverConfig(Map.of(KEY, "5")).getLong(KEY, 1)).isEqualTo(5);
    }

    @Test
    void theSystemPropertyFillsAMissingOption() {
        System.setProperty("metrale." + KEY, "7");
        assertThat(DriverConfig.empty().getLong(KEY, 1)).isEqualTo(7);
        assertThat(DriverConfig.empty().get(KEY, "x")).isEqualTo("7");
    }

    @Test
    void theDefaultWhenNothingIsSet() {
        assertThat(DriverConfig.empty().getLong(KEY, 3)).isEqualTo(3);
        assertThat(DriverConfig.empty().get(KEY, "d")).isEqualTo("d");
    }

    @Test
    void aNonNumberNamesTheOption() {
        assertThatThrownBy(() -> new DriverConfig(Map.of(KEY, "lots")).getLong(KEY, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KEY).hasMessageContaining("lots");
    }

    @Test
    void anObjectOptionIsGivenOnlyAsItsType() {
        StringBuilder table = new StringBuilder("twins");
        DriverConfig c = new DriverConfig(Map.of(), Map.of("o.k", table));
        assertThat(c.object("o.k", CharSequence.class)).containsSame(table);
        assertThat(c.object("o.missing", CharSequence.class)).isEmpty();
        assertThatThrownBy(() -> c.object("o.k", Integer.class))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("o.k").hasMessageContaining("java.lang.StringBuilder")
                .hasMessageContaining("java.lang.Integer");
        // Object options have no property or environment fallback, and string options are unaffected.
        assertThat(c.get("o.k", "none")).isEqualTo("none");
    }

    @Test
    void theBuilderSendsStringsAsStringOptionsAndOtherValuesAsObjects() {
        Object table = new StringBuilder("twins");
        var b = metrale.gpu.Gpu.builder();
        b.backendOption("b.s", (Object) "5").backendOption("b.o", table);
        assertThat(b.options().backendOptions()).containsEntry("b.s", "5").doesNotContainKey("b.o");
        assertThat(b.options().backendObjects()).containsEntry("b.o", table).doesNotContainKey("b.s");
        b.backendOption("b.o", "now a string");
        assertThat(b.options().backendObjects()).doesNotContainKey("b.o");
        assertThat(b.options().backendOptions()).containsEntry("b.o", "now a string");
    }
}
