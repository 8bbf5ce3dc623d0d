// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import metrale.gpu.Setting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The default timeout is a setting of the table: its grammar, its default, and a bad value named with its property and variable. */
class CollectivesTimeoutTest {

    @AfterEach
    void clear() {
        System.clearProperty(Collectives.TIMEOUT_PROPERTY);
    }

    @Test
    void theTimeoutIsTheTablesSetting() {
        assertThat(Setting.NCCL_TIMEOUT_MILLIS.property()).isEqualTo(Collectives.TIMEOUT_PROPERTY);
        assertThat(Collectives.timeout()).isEqualTo(Duration.ofMillis(
                Long.parseLong(Setting.NCCL_TIMEOUT_MILLIS.defaultValue().orElseThrow())));
        System.setProperty(Collectives.TIMEOUT_PROPERTY, " 1500 ");
        assertThat(Collectives.timeout()).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void aBadTimeoutIsRefusedNamingItsPropertyAndVariable() {
        for (String bad : new String[] {"soon", "0", "-5"}) {
            System.setProperty(Collectives.TIMEOUT_PROPERTY, bad);
            assertThatThrownBy(Collectives::timeout).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("metrale.nccl.timeoutMillis").hasMessageContaining("METRALE_NCCL_TIMEOUT_MILLIS")
                    .hasMessageContaining(bad);
        }
    }
}
