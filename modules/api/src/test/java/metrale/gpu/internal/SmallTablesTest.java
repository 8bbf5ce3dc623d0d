// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import metrale.gpu.LeakDetection;
import org.junit.jupiter.api.Test;

/** The arena chunk table, the pinned registry, the host-input checks and the call-site policy. */
class SmallTablesTest {

    @Test
    void arenaChunksCoverTheirBytesOverlapAndCountSlack() {
        ArenaTable t = new ArenaTable();
        t.add(0x1000, 0x100);
        t.add(0x2000, 0x100);
        assertThat(t.get(0x1000).bytes).isEqualTo(0x100);
        assertThat(t.get(0x1001)).isNull();
        assertThat(t.covers(0x1000, 0x100)).isTrue();
        assertThat(t.covers(0x10ff, 1)).isTrue();
        assertThat(t.covers(0x10ff, 2)).isFalse();
        assertThat(t.covers(0x1100, 1)).isFalse();
        assertThat(t.covers(0x2100, 0)).as("the empty range at the end").isFalse();
        assertThat(t.covers(0x0fff, 1)).isFalse();
        assertThat(t.overlaps(0x0f00, 0x100)).as("ends where the chunk starts").isFalse();
        assertThat(t.overlaps(0x0f00, 0x101)).isTrue();
        assertThat(t.overlaps(0x10ff, 1)).isTrue();
        assertThat(t.overlaps(0x1100, 0xf00)).isFalse();
        assertThat(t.overlaps(0x1100, 0xf01)).isTrue();
        assertThat(t.overlaps(0x3000, 1)).isFalse();
        assertThat(t.slackBytes()).isEqualTo(0x200);
        t.get(0x1000).used.set(0x80);
        assertThat(t.slackBytes()).isEqualTo(0x180);
        assertThat(t.remove(0x1000).base).isEqualTo(0x1000);
        assertThat(t.remove(0x1000)).isNull();
        assertThat(t.drain()).extracting(c -> c.base).containsExactly(0x2000L);
        assertThat(t.drain()).isEmpty();
        assertThat(t.slackBytes()).isZero();
    }

    @Test
    void thePinnedRegistryKnowsRangesTheirSlicesAndTheirDeviceAddresses() {
        PinnedRegistry r = new PinnedRegistry();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment seg = a.allocate(256);
            MemorySegment other = a.allocate(64);
            assertThat(r.contains(seg)).isFalse();
            r.add(seg);
            assertThat(r.contains(seg)).isTrue();
            assertThat(r.contains(seg.asSlice(255))).isTrue();
            assertThat(r.contains(seg.asSlice(256))).as("the empty slice at its end").isTrue();
            assertThat(r.contains(seg.asSlice(16, 32))).isTrue();
            assertThat(r.contains(MemorySegment.ofArray(new byte[8]))).isFalse();
            assertThat(r.contains(other)).isFalse();
            assertThat(r.contains(MemorySegment.ofAddress(seg.address() - 1).reinterpret(2))).isFalse();
            assertThat(r.contains(MemorySegment.ofAddress(seg.address()).reinterpret(257))).isFalse();
            long p = seg.address();
            assertThat(r.coversAddress(p, 256)).isTrue();
            assertThat(r.coversAddress(p + 255, 1)).isTrue();
            assertThat(r.coversAddress(p + 255, 2)).isFalse();
            assertThat(r.coversAddress(p + 256, 1)).isFalse();
            assertThat(r.coversAddress(p + 256, 0)).as("the empty range at the end").isFalse();
            assertThat(r.contains(MemorySegment.ofAddress(p + 16).reinterpret(241))).as("one byte past the end").isFalse();
            assertThat(r.contains(MemorySegment.ofAddress(p + 16).reinterpret(240))).isTrue();
            assertThat(r.coversAddress(p - 1, 1)).isFalse();
            assertThat(r.remove(seg.asSlice(8))).as("only the base address removes").isNull();
            assertThat(r.remove(MemorySegment.ofAddress(p))).isSameAs(seg);
            assertThat(r.remove(seg)).isNull();
            r.add(seg);
            assertThat(r.drain()).containsExactly(seg);
            assertThat(r.coversAddress(p, 1)).isFalse();
        }
    }

    @Test
    void hostInputIsCheckedWithTheParameterNamed() {
        MemorySegment heap = MemorySegment.ofArray(new byte[4]);
        assertThat(Checks.alive(heap, "src")).isSameAs(heap);
        assertThat(Checks.writable(heap, "dst")).isSameAs(heap);
        assertThatThrownBy(() -> Checks.alive(null, "src")).isInstanceOf(NullPointerException.class).hasMessage("src");
        MemorySegment dead;
        try (Arena a = Arena.ofConfined()) {
            dead = a.allocate(4);
            assertThat(Checks.nativeSeg(dead, "src", "copyH2DAsync")).isSameAs(dead);
        }
        assertThatThrownBy(() -> Checks.alive(dead, "src")).isInstanceOf(IllegalStateException.class)
                .hasMessage("src: the segment's arena is closed");
        assertThatThrownBy(() -> Checks.writable(heap.asReadOnly(), "dst")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("dst: the segment is read-only");
        assertThatThrownBy(() -> Checks.nativeSeg(heap, "src", "copyH2DAsync")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("copyH2DAsync: src must be native memory");
        assertThat(Checks.ptr(new DevicePtr(0x40), "p")).isEqualTo(0x40);
        assertThatThrownBy(() -> Checks.ptr(null, "p")).isInstanceOf(NullPointerException.class).hasMessage("p");
        Checks.size(0, "bytes", "alloc");
        assertThatThrownBy(() -> Checks.size(-1, "bytes", "alloc")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("alloc(bytes=-1): must be >= 0");
        Checks.byteValue(0, "memset");
        Checks.byteValue(255, "memset");
        assertThatThrownBy(() -> Checks.byteValue(256, "memset")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("memset(value=256): must be a byte, 0 to 255");
        assertThatThrownBy(() -> Checks.byteValue(-1, "memset")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sitesAreWalkedForEveryCallForOneInNOrNever() {
        AtomicInteger walked = new AtomicInteger();
        Supplier<String> walker = () -> "W.java:" + walked.incrementAndGet();
        AllocSites off = new AllocSites(LeakDetection.OFF, 1, walker);
        assertThat(off.get()).isEqualTo("?");
        AllocSites every = new AllocSites(LeakDetection.ALL, 64, walker);
        assertThat(List.of(every.get(), every.get())).containsExactly("W.java:1", "W.java:2");
        AllocSites sampledEvery = new AllocSites(LeakDetection.SAMPLED, 1, walker);
        assertThat(sampledEvery.get()).isEqualTo("W.java:3");
        assertThat(walked).hasValue(3);
        assertThat(off.walks() + every.walks() + sampledEvery.walks()).isEqualTo(3);
        assertThatThrownBy(() -> new AllocSites(LeakDetection.SAMPLED, 0, walker))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leakDetectionSample=0");
    }

    /** One in N drawn at random: about total/N walked, the rest named unsampled. */
    @Test
    void sampledWalksAboutOneInN() {
        AtomicInteger walked = new AtomicInteger();
        AllocSites eighth = new AllocSites(LeakDetection.SAMPLED, 8, () -> "W.java:" + walked.incrementAndGet());
        int n = 8000;
        int unsampled = 0;
        for (int i = 0; i < n; i++) {
            if (eighth.get().equals(LeakDetection.UNSAMPLED_SITE)) {
                unsampled++;
            }
        }
        // Binomial(8000, 1/8): mean 1000, sd 29.6; the bounds are over 6 sd away.
        assertThat(walked.get()).isBetween(800, 1200).isEqualTo((int) eighth.walks()).isEqualTo(n - unsampled);
    }

    /** A free walks only for an allocation whose own site was walked, and names it in the ledger's memory of the free. */
    @Test
    void aFreeWalksOnlyForAWalkedAllocation() {
        AtomicInteger walked = new AtomicInteger();
        AllocSites sites = new AllocSites(LeakDetection.SAMPLED, 2, () -> "W.java:" + walked.incrementAndGet());
        Ledger ledger = new Ledger();
        Ledger.Entry named = new Ledger.Entry(new Allocation(new DevicePtr(0x1000), 16, "A.java:1", 0, false), 0);
        Ledger.Entry unsampled = new Ledger.Entry(
                new Allocation(new DevicePtr(0x2000), 16, LeakDetection.UNSAMPLED_SITE, 1, false), 0);
        Ledger.Entry off = new Ledger.Entry(new Allocation(new DevicePtr(0x3000), 16, "?", 2, false), 0);
        for (Ledger.Entry e : List.of(named, unsampled, off)) {
            ledger.add(e);
            ledger.remove(e.base(), AllocSites.FREE_NOT_RECORDED);
        }
        assertThat(sites.freeSite(unsampled, ledger)).isEqualTo(LeakDetection.UNSAMPLED_SITE);
        assertThat(sites.freeSite(off, ledger)).isEqualTo("?");
        assertThat(walked).hasValue(0);
        assertThat(sites.freeSite(named, ledger)).isEqualTo("W.java:1");
        assertThat(walked).hasValue(1);
        assertThat(ledger.explainNotLive(0x1000)).endsWith("freed at W.java:1");
        assertThat(ledger.explainNotLive(0x2000)).endsWith("freed at " + LeakDetection.UNSAMPLED_SITE);
        ledger.add(named);
        ledger.remove(named.base(), AllocSites.FREE_NOT_RECORDED);
        assertThat(ledger.explainNotLive(0x1000)).as("no report named it this time")
                .endsWith("freed at " + AllocSites.FREE_NOT_RECORDED);
    }
}
