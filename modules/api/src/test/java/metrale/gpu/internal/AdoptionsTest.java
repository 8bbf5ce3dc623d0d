// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.AdoptedMemory;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import org.junit.jupiter.api.Test;

/** The table of adopted foreign ranges: what may be adopted, overlaps, coverage, release and the report. */
class AdoptionsTest {

    private final Adoptions table = new Adoptions();

    private static void invalid(Runnable r, String... text) {
        assertThatThrownBy(r::run).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.getMessage()).contains(text);
        });
    }

    @Test
    void aRangeIsAdoptedWithItsLabelAndSite() {
        AdoptedMemory a = table.adopt(0x1000, 256, "nccl", "A.java:1", null);
        assertThat(a.ptr().address()).isEqualTo(0x1000);
        assertThat(a.bytes()).isEqualTo(256);
        assertThat(a.label()).isEqualTo("nccl");
        assertThat(a.site()).isEqualTo("A.java:1");
        assertThat(table.snapshot()).containsExactly(a);
    }

    @Test
    void nullWrappingAndOwnMemoryAreRefused() {
        invalid(() -> table.adopt(0, 16, "x", "s", null), "address=0");
        invalid(() -> table.adopt(-16, 32, "x", "s", null), "[0xfffffffffffffff0, +32)", "wraps");
        table.adopt(-32, 16, "high", "s", null);
        table.adopt(0x9000, 0, "empty", "s", null);
        invalid(() -> table.adopt(0x1000, 16, "x", "s", "a live allocation"), "[0x1000, +16)", "own memory (a live allocation)");
        assertThat(table.snapshot()).hasSize(2);
    }

    @Test
    void overlapsWithAnAdoptionAreRefusedButNeighboursAreNot() {
        table.adopt(0x1000, 0x100, "a", "s", null);
        invalid(() -> table.adopt(0x1000, 1, "b", "s", null), "overlaps the adopted range");
        invalid(() -> table.adopt(0x10ff, 1, "b", "s", null), "overlaps");
        invalid(() -> table.adopt(0x0f00, 0x101, "b", "s", null), "overlaps");
        table.adopt(0x0f00, 0x100, "below", "s", null);
        table.adopt(0x1100, 0x10, "above", "s", null);
        assertThat(table.snapshot()).extracting(AdoptedMemory::label).containsExactly("below", "a", "above");
    }

    @Test
    void coverageIsOfOneRange() {
        table.adopt(0x1000, 0x100, "a", "s", null);
        table.adopt(0x1100, 0x100, "b", "s", null);
        assertThat(table.covers(0x1000, 0x100)).isTrue();
        assertThat(table.covers(0x10ff, 1)).isTrue();
        assertThat(table.covers(0x10ff, 2)).as("across two adoptions").isFalse();
        assertThat(table.covers(0x0fff, 1)).isFalse();
        assertThat(table.covers(0x1200, 1)).isFalse();
        assertThat(table.covers(0x1200, 0)).as("the empty range at the end").isFalse();
        assertThat(table.explainPast(0x10f0, 0x20)).isEqualTo("[0x10f0, +32) starts at +240 in "
                + table.snapshot().getFirst().describe() + " but runs 16 byte(s) past its end");
        assertThat(table.explainPast(0x0fff, 4)).isNull();
        assertThat(table.explainPast(0x1200, 4)).isNull();
    }

    @Test
    void releaseTakesTheRangeAtItsStartOnly() {
        AdoptedMemory a = table.adopt(0x1000, 0x100, "a", "s", null);
        invalid(() -> table.release(0x1010), "ptr=0x1010 is inside the adopted range " + a.describe());
        assertThat(table.release(0x1000)).isEqualTo(a);
        invalid(() -> table.release(0x1000), "starts no adopted range");
        assertThat(table.covers(0x1000, 1)).isFalse();
    }

    @Test
    void theReportListsEachRangeOrNothing() {
        assertThat(table.report()).isEmpty();
        AdoptedMemory a = table.adopt(0x2000, 64, "a", "s", null);
        AdoptedMemory b = table.adopt(0x1000, 64, "b", "t", null);
        assertThat(table.report()).isEqualTo("foreign device memory (adopted, never freed by this runtime): 2 range(s)\n"
                + "  " + b.describe() + "\n  " + a.describe() + "\n");
    }
}
