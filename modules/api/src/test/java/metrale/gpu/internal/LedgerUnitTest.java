// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger's lookups on their own: coverage with red zones, the explanations of ranges outside
 * live memory, the nearest and the overlapping entry, extents, and the memory of freed entries.
 */
class LedgerUnitTest {

    private Ledger ledger;
    /** 256 B at 0x1000 with a 64 B pad, to 0x1140. */
    private Ledger.Entry padded;
    /** 128 B at 0x2000, no pad. */
    private Ledger.Entry plain;

    private static Ledger.Entry entry(long base, long bytes, long pad, long index, boolean managed) {
        return new Ledger.Entry(new Allocation(new DevicePtr(base), bytes, "S" + index + ".java:1", index, managed), pad);
    }

    @BeforeEach
    void fill() {
        ledger = new Ledger();
        padded = entry(0x1000, 256, 64, ledger.nextIndex(), false);
        plain = entry(0x2000, 128, 0, ledger.nextIndex(), false);
        ledger.add(plain);
        ledger.add(padded);
    }

    @Test
    void entriesAreCountedWithoutTheirPadsAndListedByIndex() {
        assertThat(ledger.count()).isEqualTo(2);
        assertThat(ledger.liveBytes()).isEqualTo(384);
        assertThat(ledger.snapshot()).containsExactly(padded, plain);
        assertThat(padded.end()).isEqualTo(0x1100);
        assertThat(entry(0x3000, 16, 0, 9, true).describe()).isEqualTo("0x3000 (16 B, #9, managed, allocated at S9.java:1)");
        assertThat(plain.describe()).isEqualTo("0x2000 (128 B, #1, allocated at S1.java:1)");
    }

    @Test
    void coverageIncludesTheRedZoneAndNothingBeyond() {
        assertThat(ledger.covers(0x1000, 256)).isTrue();
        assertThat(ledger.covers(0x1000, 320)).isTrue();
        assertThat(ledger.covers(0x1000, 321)).isFalse();
        assertThat(ledger.covers(0x113f, 1)).isTrue();
        assertThat(ledger.covers(0x1140, 1)).isFalse();
        assertThat(ledger.covers(0x0fff, 1)).isFalse();
        assertThat(ledger.covers(0x207f, 1)).isTrue();
        assertThat(ledger.covers(0x207f, 2)).isFalse();
        assertThat(ledger.covers(0x2080, 0)).as("the empty range at the end").isFalse();
    }

    @Test
    void aRangeThatRunsPastAnEntryNamesByHowMuchAndItsRedZone() {
        assertThat(ledger.explainRange(0x10f0, 32)).isEqualTo("[0x10f0, +32) starts at +240 in " + padded.describe()
                + " but runs 16 byte(s) past its end and past its 64-byte red zone");
        assertThat(ledger.explainRange(0x1100, 100)).isEqualTo("[0x1100, +100) starts at +256 in " + padded.describe()
                + " but runs 100 byte(s) past its end and past its 64-byte red zone");
        assertThat(ledger.explainRange(0x1140, 4)).as("just past the red zone").contains("is not in device memory");
        assertThat(ledger.explainRange(0x2070, 32)).isEqualTo("[0x2070, +32) starts at +112 in " + plain.describe()
                + " but runs 16 byte(s) past its end");
    }

    @Test
    void aRangeInFreedMemoryNamesWhereItWasFreed() {
        assertThat(ledger.remove(0x2000, "F.java:3")).isSameAs(plain);
        assertThat(ledger.remove(0x2000, "F.java:4")).isNull();
        assertThat(ledger.liveBytes()).isEqualTo(256);
        assertThat(ledger.explainRange(0x2010, 4)).isEqualTo("[0x2010, +4) lies in freed memory: it was "
                + plain.describe() + ", freed at F.java:3");
        assertThat(ledger.explainRange(0x2000, 4)).contains("lies in freed memory");
        assertThat(ledger.explainRange(0x2080, 4)).as("just past the freed entry").contains("is not in device memory");
        assertThat(ledger.explainNotLive(0x2000)).isEqualTo("ptr=0x2000 was already freed: it was " + plain.describe()
                + ", freed at F.java:3");
        ledger.add(plain);
        assertThat(ledger.explainNotLive(0x2000)).as("live again").doesNotContain("freed");
    }

    @Test
    void aRangeInNoMemoryNamesTheNearestEntry() {
        assertThat(ledger.explainRange(0x1800, 4)).isEqualTo("[0x1800, +4) is not in device memory this runtime allocated;"
                + " the nearest allocation is " + padded.describe());
        assertThat(new Ledger().explainRange(0x1800, 4)).isEqualTo("[0x1800, +4) is not in device memory this runtime"
                + " allocated (it holds no allocation)");
    }

    @Test
    void theNearestEntryIsTheOneHoldingTheAddressElseTheCloserEdge() {
        assertThat(ledger.nearest(0x0100)).as("below every entry").isSameAs(padded);
        assertThat(ledger.nearest(0x1000)).isSameAs(padded);
        assertThat(ledger.nearest(0x113f)).as("in the red zone").isSameAs(padded);
        // 0x1140 is the padded entry's end, 0x2000 the plain one's start: halfway is 0x18a0.
        assertThat(ledger.nearest(0x18a0)).as("a tie names the lower").isSameAs(padded);
        assertThat(ledger.nearest(0x18a1)).isSameAs(plain);
        assertThat(ledger.nearest(0x1141)).isSameAs(padded);
        assertThat(ledger.nearest(0x1fff)).isSameAs(plain);
        assertThat(ledger.nearest(0x9000)).as("above every entry").isSameAs(plain);
        assertThat(new Ledger().nearest(0x1000)).isNull();
    }

    @Test
    void theExtentOfAnAddressIsItsEntryWithThePad() {
        assertThat(ledger.extentOf(0x1000)).containsExactly(0x1000, 320);
        assertThat(ledger.extentOf(0x113f)).containsExactly(0x1000, 320);
        assertThat(ledger.extentOf(0x1140)).isNull();
        assertThat(ledger.extentOf(0x0fff)).isNull();
        assertThat(ledger.extentOf(0x2050)).containsExactly(0x2000, 128);
    }

    @Test
    void anOverlappingEntrySharesAByteWithTheRange() {
        assertThat(ledger.overlapping(0x0f00, 0x100)).as("ends where the entry starts").isNull();
        assertThat(ledger.overlapping(0x0f00, 0x101)).isSameAs(padded);
        assertThat(ledger.overlapping(0x113f, 1)).as("its red zone").isSameAs(padded);
        assertThat(ledger.overlapping(0x1140, 0xec0)).isNull();
        assertThat(ledger.overlapping(0x1140, 0xec1)).isSameAs(plain);
        assertThat(ledger.overlapping(0x2080, 0x1000)).isNull();
        assertThat(ledger.overlapping(0x0100, 0x10)).isNull();
    }

    @Test
    void drainTakesEveryEntryOldestFirstAndRemembersThemAsFreed() {
        Ledger.Entry low = entry(0x0100, 8, 0, ledger.nextIndex(), false);
        ledger.add(low);
        assertThat(ledger.snapshot()).as("by index, not by address").containsExactly(padded, plain, low);
        assertThat(ledger.drain("close")).containsExactly(padded, plain, low);
        assertThat(ledger.count()).isZero();
        assertThat(ledger.liveBytes()).isZero();
        assertThat(ledger.explainNotLive(0x1000)).endsWith("freed at close");
    }

    @Test
    void theLastFreedEntriesAreRemembered() {
        Ledger l = new Ledger();
        for (int i = 0; i < 4096; i++) {
            l.add(entry(0x10_0000 + 0x1000L * i, 16, 0, i, false));
            l.remove(0x10_0000 + 0x1000L * i, "F");
        }
        assertThat(l.explainNotLive(0x10_0000)).as("the oldest of 4096").contains("already freed");
        l.add(entry(0x9000_0000L, 16, 0, 4096, false));
        l.remove(0x9000_0000L, "F");
        assertThat(l.explainNotLive(0x10_0000)).as("forgotten by the 4097th").contains("was not allocated");
        assertThat(l.explainNotLive(0x10_1000)).contains("already freed");
    }

    @Test
    void freedMemoryIsNamedWithBothSitesUntilALiveEntryHoldsTheAddressAgain() {
        assertThat(ledger.freedHolding(0x1000)).as("live").isNull();
        assertThat(ledger.remove(0x1000, "F.java:9")).isSameAs(padded);
        String was = "it was " + padded.describe() + ", freed at F.java:9";
        assertThat(ledger.freedHolding(0x1000)).isEqualTo(was);
        assertThat(ledger.freedHolding(0x1000 + 255)).isEqualTo(was);
        assertThat(ledger.freedHolding(0x1000 + 256)).as("its pad").isEqualTo(was);
        assertThat(ledger.freedHolding(0x1000 + 256 + 63)).isEqualTo(was);
        assertThat(ledger.freedHolding(0x1000 + 256 + 64)).as("past the pad").isNull();
        assertThat(ledger.freedHolding(0x0fff)).as("before it").isNull();
        assertThat(ledger.freedHolding(0x2000)).as("a live entry's").isNull();
        Ledger.Entry again = entry(0x1000, 64, 0, ledger.nextIndex(), false);
        ledger.add(again);
        assertThat(ledger.freedHolding(0x1000)).as("live again").isNull();
        assertThat(ledger.freedHolding(0x1000 + 100)).as("past the new entry, in the old one's memory: forgotten with it")
                .isNull();
    }

    @Test
    void theLatestFreeAtABaseIsTheOneNamed() {
        ledger.remove(0x2000, "A.java:1");
        Ledger.Entry second = entry(0x2000, 32, 0, ledger.nextIndex(), false);
        ledger.add(second);
        ledger.remove(0x2000, "B.java:2");
        assertThat(ledger.freedHolding(0x2000 + 16)).isEqualTo("it was " + second.describe() + ", freed at B.java:2");
        assertThat(ledger.freedHolding(0x2000 + 100)).as("the old, larger entry is forgotten").isNull();
    }
}
