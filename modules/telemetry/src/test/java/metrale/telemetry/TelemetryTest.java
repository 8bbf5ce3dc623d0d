// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TelemetryTest {

    @Test
    void freshInstanceIsOffAndEmptyWhateverThePropertiesSay() {
        String d2h = System.getProperty("metrale.d2h.trace");
        String timing = System.getProperty("metrale.timing");
        // The settings belong to the runtime's builder: a bare Telemetry must not read them,
        // or a builder's d2hTrace(false) would lose to them.
        System.setProperty("metrale.d2h.trace", "true");
        System.setProperty("metrale.timing", "1");
        try {
            Telemetry t = new Telemetry();
            assertThat(t.trace().on()).isFalse();
            assertThat(t.trace().current()).isEmpty();
            assertThat(t.audit().lookups()).isEmpty();
            assertThat(t.counters().launches()).isZero();
            assertThat(t.counters().d2hSiteTrace()).isFalse();
            assertThat(t.timing().enabled()).isFalse();
            assertThat(t.timing().stats()).isEmpty();
        } finally {
            restore("metrale.d2h.trace", d2h);
            restore("metrale.timing", timing);
        }
    }

    @Test
    void instancesAreIndependentAndGlobalIsShared() {
        Telemetry a = new Telemetry();
        Telemetry b = new Telemetry();
        a.counters().launch();
        a.trace().begin();
        assertThat(b.counters().launches()).isZero();
        assertThat(b.trace().on()).isFalse();
        assertThat(Telemetry.global()).isSameAs(Telemetry.global()).isNotSameAs(a);
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
