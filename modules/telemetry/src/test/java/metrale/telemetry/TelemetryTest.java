package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TelemetryTest {

    @Test
    void freshInstanceIsOffAndEmpty() {
        String d2h = System.getProperty("metrale.d2h.trace");
        String timing = System.getProperty("metrale.timing");
        System.setProperty("metrale.d2h.trace", "false");
        System.setProperty("metrale.timing", "false");
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
    void propertiesTurnPartsOnAndWinOverTheEnvironment() {
        String d2h = System.getProperty("metrale.d2h.trace");
        String timing = System.getProperty("metrale.timing");
        System.setProperty("metrale.d2h.trace", "TRUE");
        System.setProperty("metrale.timing", "1");
        try {
            Telemetry t = new Telemetry();
            assertThat(t.counters().d2hSiteTrace()).isTrue();
            assertThat(t.timing().enabled()).isTrue();
            System.setProperty("metrale.timing", "0");
            assertThat(new Telemetry().timing().enabled()).isFalse();
            assertThat(t.timing().enabled()).as("read once, at construction").isTrue();
        } finally {
            restore("metrale.d2h.trace", d2h);
            restore("metrale.timing", timing);
        }
    }

    @Test
    void flagValues() {
        for (String on : new String[] {"true", "TRUE", "1", "yes", "On", " true "}) {
            assertThat(Telemetry.parse(on)).as(on).isTrue();
        }
        for (String off : new String[] {"false", "0", "", "no", "off", "maybe"}) {
            assertThat(Telemetry.parse(off)).as(off).isFalse();
        }
        assertThat(Telemetry.parse(null)).isFalse();
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
