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
}
