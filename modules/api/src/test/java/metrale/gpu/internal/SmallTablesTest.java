// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import metrale.gpu.DevicePtr;
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
        AllocSites off = new AllocSites(false, 1);
        assertThat(off.get()).isEqualTo("?");
        AllocSites every = new AllocSites(true, 1);
        assertThat(every.get()).isEqualTo(every.get()).doesNotContain("unsampled");
        AllocSites clamped = new AllocSites(true, 0);
        assertThat(clamped.unsampled()).isEqualTo("(unsampled: 1 in 1 allocations is walked for its site)");
        AllocSites third = new AllocSites(true, 3);
        assertThat(third.unsampled()).isEqualTo("(unsampled: 1 in 3 allocations is walked for its site)");
        String first = third.get();
        assertThat(first).isNotEqualTo(third.unsampled());
        assertThat(third.get()).isEqualTo(third.unsampled());
        assertThat(third.get()).isEqualTo(third.unsampled());
        assertThat(third.get()).isNotEqualTo(third.unsampled());
    }
}
