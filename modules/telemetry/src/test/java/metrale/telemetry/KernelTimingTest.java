// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class KernelTimingTest {

    private final Telemetry telemetry = new Telemetry();
    private final KernelTiming timing = telemetry.timing();

    @Test
    void offMeansNoSpans() {
        timing.setEnabled(false);
        long t0 = timing.begin();
        assertThat(t0).isZero();
        timing.end(0x10, t0);
        assertThat(timing.stats()).isEmpty();
    }

    @Test
    void spansAggregateByKernelName() {
        timing.setEnabled(true);
        assertThat(timing.enabled()).isTrue();
        telemetry.trace().nameKernel(0x10, "m", "k");
        for (int i = 0; i < 3; i++) {
            long t0 = timing.begin();
            assertThat(t0).isNotZero();
            timing.end(0x10, t0);
        }
        timing.end(0x20, timing.begin());
        assertThat(timing.stats()).containsOnlyKeys("m::k", "fn@0x20");
        TimingStats k = timing.stats().get("m::k");
        assertThat(k.count()).isEqualTo(3);
        assertThat(k.minNanos()).isLessThanOrEqualTo(k.maxNanos());
        assertThat(k.totalNanos()).isGreaterThanOrEqualTo(k.maxNanos());
        assertThat(timing.report()).startsWith("Kernel timing: 2 kernel(s)\n").contains("m::k", "fn@0x20");
        timing.reset();
        assertThat(timing.stats()).isEmpty();
        assertThat(timing.enabled()).isTrue();
    }

    @Test
    void statsAndReportFromKnownSpans() {
        telemetry.trace().nameKernel(0x10, "m", "fast");
        timing.add(0x10, 1_000);
        timing.add(0x10, 3_000);
        timing.add(0x20, 10_000_000);
        assertThat(timing.stats()).containsExactly(
                java.util.Map.entry("fn@0x20", new TimingStats(1, 10_000_000, 10_000_000, 10_000_000)),
                java.util.Map.entry("m::fast", new TimingStats(2, 4_000, 1_000, 3_000)));
        assertThat(timing.stats().get("m::fast").meanNanos()).isCloseTo(2_000, within(1e-9));
        assertThat(new TimingStats(0, 0, 0, 0).meanNanos()).isZero();
        assertThat(timing.report()).isEqualTo("""
                Kernel timing: 2 kernel(s)
                  kernel        count      total ms     mean us      min us      max us
                  fn@0x20           1        10.000   10000.000   10000.000   10000.000
                  m::fast           2         0.004       2.000       1.000       3.000
                """);
    }

    @Test
    void emptyReportSaysHowToTurnItOn() {
        timing.setEnabled(false);
        assertThat(timing.report()).isEqualTo(
                "Kernel timing: 0 kernel(s) (timing is off: Gpu.builder().timing(true), metrale.timing=true or METRALE_TIMING=1)\n");
    }

    @Test
    void kernelsWithEqualTotalsAreOrderedByName() {
        telemetry.trace().nameKernel(0x10, "m", "b");
        telemetry.trace().nameKernel(0x20, "m", "a");
        telemetry.trace().nameKernel(0x30, "m", "c");
        timing.add(0x10, 500);
        timing.add(0x20, 500);
        timing.add(0x30, 900);
        assertThat(timing.stats().keySet()).containsExactly("m::c", "m::a", "m::b");
    }

    @Test
    void aSpanIsTheTimeBetweenBeginAndEnd() {
        timing.setEnabled(true);
        long before = System.nanoTime();
        long t0 = timing.begin();
        timing.end(0x10, t0);
        long after = System.nanoTime();
        // An upper bound from the clock read around the span, not a speed measurement.
        assertThat(timing.stats().get("fn@0x10").totalNanos()).isBetween(0L, after - before);
    }
}
