// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CountersTest {

    private final Counters counters = new Counters();

    private static String here() {
        StackTraceElement caller = new Throwable().getStackTrace()[1];
        return caller.getFileName() + ":" + caller.getLineNumber();
    }

    @Test
    void countsAndBytes() {
        counters.streamSync();
        counters.streamSync();
        counters.launch();
        counters.h2dCopy(10);
        counters.h2dCopy(5);
        counters.d2hCopy(7);
        counters.d2dCopy(3);
        counters.d2dCopy(0);
        assertThat(counters.streamSyncs()).isEqualTo(2);
        assertThat(counters.launches()).isEqualTo(1);
        assertThat(counters.h2dCopies()).isEqualTo(2);
        assertThat(counters.bytesH2D()).isEqualTo(15);
        assertThat(counters.d2hCopies()).isEqualTo(1);
        assertThat(counters.bytesD2H()).isEqualTo(7);
        assertThat(counters.d2dCopies()).isEqualTo(2);
        assertThat(counters.bytesD2D()).isEqualTo(3);
        assertThat(counters.d2hSites()).as("site tracing off").isEmpty();

        counters.reset();
        assertThat(new long[] {counters.streamSyncs(), counters.launches(), counters.h2dCopies(),
                counters.d2hCopies(), counters.d2dCopies(), counters.bytesH2D(), counters.bytesD2H(),
                counters.bytesD2D()}).containsOnly(0);
    }

    @Test
    void negativeBytesAreRejected() {
        assertThatThrownBy(() -> counters.h2dCopy(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> counters.d2hCopy(-2)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-2");
        assertThatThrownBy(() -> counters.d2dCopy(-3)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-3");
        assertThat(counters.h2dCopies()).isZero();
        assertThat(counters.d2hCopies()).isZero();
        assertThat(counters.d2dCopies()).isZero();
        assertThatThrownBy(() -> counters.d2hSiteReport(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThat(counters.d2hSiteReport(0)).as("a report of no sites").startsWith("D2H copies by call site: ");
    }

    @Test
    void d2hSitesNameTheCaller() {
        counters.setD2hSiteTrace(true);
        assertThat(counters.d2hSiteTrace()).isTrue();
        String once = null;
        String thrice = null;
        for (int i = 0; i < 3; i++) {
            counters.d2hCopy(8); thrice = here();
        }
        counters.d2hCopy(8); once = here();

        assertThat(thrice).startsWith("CountersTest.java:");
        assertThat(counters.d2hSites()).containsExactly(Map.entry(thrice, 3L), Map.entry(once, 1L));
        assertThat(counters.d2hSiteReport(10)).isEqualTo(
                "D2H copies by call site: 4 copies at 2 site(s)\n"
                        + "           3  " + thrice + "\n"
                        + "           1  " + once + "\n");
        assertThat(counters.d2hSiteReport(1)).isEqualTo(
                "D2H copies by call site: 4 copies at 2 site(s)\n"
                        + "           3  " + thrice + "\n"
                        + "  ... 1 more site(s)\n");

        counters.setD2hSiteTrace(false);
        counters.d2hCopy(8);
        assertThat(counters.d2hSites()).containsEntry(thrice, 3L).hasSize(2);
        counters.reset();
        assertThat(counters.d2hSites()).isEmpty();
    }

    @Test
    void reportSaysHowToTurnTracingOn() {
        assertThat(counters.d2hSiteReport(5)).isEqualTo("D2H copies by call site: 0 copies at 0 site(s)"
                + " (site tracing is off: Gpu.builder().d2hTrace(true), metrale.d2h.trace=true or METRALE_D2H_TRACE=1)\n");
    }
}
