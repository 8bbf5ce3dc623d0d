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

    /** Every any-case spelling of every choice, and every boolean spelling, given as the system property. */
    @Test
    void theSimulatorsChoicesAndBooleansTakeTheTablesGrammar() {
        for (String p : new String[] {"FRESH", "Fresh", "fresh", " fresh "}) {
            System.setProperty(Setting.SIM_PROCESS.property(), p);
            try (Gpu gpu = Gpu.builder().backend("sim").open()) {
                assertThat(gpu.smCount()).as(p).isPositive();
            }
        }
        System.clearProperty(Setting.SIM_PROCESS.property());
        for (String b : new String[] {"ORDERED", "Shuffled", "PARALLEL", "parallel"}) {
            System.setProperty(Setting.SIM_BLOCKS.property(), b);
            try (Gpu gpu = sim().open()) {
                assertThat(gpu.smCount()).as(b).isPositive();
            }
        }
        System.clearProperty(Setting.SIM_BLOCKS.property());
        for (String on : new String[] {"true", "TRUE", "True", "1", "yes", "YES", "on", "ON"}) {
            System.setProperty(Setting.SIM_INITCHECK.property(), on);
            try (Gpu gpu = sim().open()) {
                assertThat(gpu.unwrap(metrale.gpu.sim.SimInitCheck.class).orElseThrow().initCheckEnabled()).as(on).isTrue();
            }
        }
        for (String off : new String[] {"false", "FALSE", "0", "no", "No", "off", "OFF"}) {
            System.setProperty(Setting.SIM_INITCHECK.property(), off);
            try (Gpu gpu = sim().open()) {
                assertThat(gpu.unwrap(metrale.gpu.sim.SimInitCheck.class).orElseThrow().initCheckEnabled()).as(off).isFalse();
            }
        }
    }

    /** A bad value from the property names the key, the property and the variable, and the value. */
    @Test
    void eachBadValueNamesItsPropertyAndVariable() {
        String[][] bad = {
            {Setting.SIM_SMS.key(), "many"}, {Setting.SIM_SMS.key(), "0"}, {Setting.SIM_BLOCKS.key(), "random"},
            {Setting.SIM_PROCESS.key(), "private"}, {Setting.SIM_INITCHECK.key(), "maybe"},
            {Setting.SIM_CAPACITY.key(), "-1"}, {Setting.SIM_FILL.key(), "300"}};
        for (String[] kv : bad) {
            Setting s = Setting.forKey(kv[0]).orElseThrow();
            System.setProperty(s.property(), kv[1]);
            try {
                assertThatThrownBy(() -> Gpu.builder().backend("sim").open()).as(kv[0] + "=" + kv[1])
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(s.key())
                        .hasMessageContaining(s.property()).hasMessageContaining(s.environment())
                        .hasMessageContaining(kv[1]);
            } finally {
                System.clearProperty(s.property());
            }
        }
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
