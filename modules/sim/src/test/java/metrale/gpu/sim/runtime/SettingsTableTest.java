// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.Gpu;
import metrale.gpu.Setting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The simulator reads its options as the settings table declares them: defaults, keys and properties. */
class SettingsTableTest {

    @AfterEach
    void clear() {
        System.clearProperty(Setting.SIM_SMS.property());
    }

    @Test
    void theSimulatorsDefaultsAreTheTablesDefaults() {
        try (Gpu gpu = sim().open()) {
            assertThat(gpu.totalMemory()).isEqualTo(Long.parseLong(Setting.SIM_CAPACITY.defaultValue().orElseThrow()));
            assertThat(gpu.smCount()).isEqualTo(Integer.parseInt(Setting.SIM_SMS.defaultValue().orElseThrow()));
        }
    }

    @Test
    void aBackendOptionWinsOverItsPropertyWhichFillsItIn() {
        System.setProperty(Setting.SIM_SMS.property(), "8");
        try (Gpu gpu = sim().open(); Gpu given = sim().backendOption(Setting.SIM_SMS.key(), "16").open()) {
            assertThat(gpu.smCount()).isEqualTo(8);
            assertThat(given.smCount()).isEqualTo(16);
        }
    }

    @Test
    void aBadValueNamesTheOption() {
        assertThatThrownBy(() -> sim().backendOption(Setting.SIM_SMS.key(), "many").open())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sim.sms").hasMessageContaining("'many'");
    }
}
