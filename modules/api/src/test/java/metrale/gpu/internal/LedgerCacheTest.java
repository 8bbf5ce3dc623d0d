// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger's cache of the entries its range checks found: what it caches and evicts, and that a
 * freed or reused address is never covered by a cached entry of the allocation that was there,
 * from the freeing thread or from others checking meanwhile.
 */
class LedgerCacheTest {

    private static final long MIB = 1 << 20;

    private Ledger ledger;
    private long index;

    private Ledger.Entry entry(long base, long bytes, long pad) {
        return new Ledger.Entry(new Allocation(new DevicePtr(base), bytes, "C.java:" + index, index++, false), pad);
    }

    private Ledger.Entry add(long base, long bytes, long pad) {
        Ledger.Entry e = entry(base, bytes, pad);
        ledger.add(e);
        return e;
    }

    @BeforeEach
    void open() {
        ledger = new Ledger();
    }

    @Test
    void aCoveredRangeIsCachedAndAnUncoveredOneIsNot() {
        add(0x10000, 4096, 64);
        assertThat(ledger.cache().size()).isZero();
        assertThat(ledger.covers(0x10000, 4096 + 65)).as("one byte past the red zone").isFalse();
        assertThat(ledger.cache().size()).as("a refused range caches nothing").isZero();
        assertThat(ledger.covers(0x10010, 16)).isTrue();
        assertThat(ledger.cache().size()).isEqualTo(1);
        assertThat(ledger.cache().covers(0x10000, 4096 + 64)).as("the cached extent holds the red zone").isTrue();
        assertThat(ledger.cache().covers(0x10000, 4096 + 65)).isFalse();
        assertThat(ledger.cache().covers(0x0ffff, 1)).isFalse();
        assertThat(ledger.covers(0x10000, 4096)).isTrue();
        assertThat(ledger.cache().size()).as("a cached entry is cached once").isEqualTo(1);
    }

    @Test
    void theCachedExtentKeepsTheLedgersBounds() {
        add(0x20000, 256, 0);
        assertThat(ledger.covers(0x20000, 1)).isTrue();
        LedgerCache cache = ledger.cache();
        assertThat(cache.covers(0x20000, 256)).isTrue();
        assertThat(cache.covers(0x200ff, 1)).isTrue();
        assertThat(cache.covers(0x200ff, 2)).isFalse();
        assertThat(cache.covers(0x20100, 0)).as("the empty range at the end").isFalse();
        assertThat(cache.covers(0x20000, -1)).as("a count past 2^63, unsigned").isFalse();
        assertThat(cache.covers(0x1ff00, 0x200)).as("a range that starts below").isFalse();
    }

    @Test
    void withinIsUnsignedAtTheTopOfTheAddressSpace() {
        long base = 0xffff_ffff_ffff_f000L;
        assertThat(LedgerCache.within(base, 0x1000, base, 0x1000)).isTrue();
        assertThat(LedgerCache.within(base, 0x1000, base + 0xfff, 1)).isTrue();
        assertThat(LedgerCache.within(base, 0x1000, base + 0xfff, 2)).isFalse();
        assertThat(LedgerCache.within(base, 0x1000, 0x10, 1)).as("below the base, as an unsigned offset").isFalse();
        assertThat(LedgerCache.within(0x1000, 0x100, 0x8000_0000_0000_1000L, 1)).isFalse();
    }

    @Test
    void aFreedAllocationLeavesTheCacheBeforeTheRemoveReturns() {
        Ledger.Entry e = add(0x30000, MIB, 0);
        assertThat(ledger.covers(0x30000, MIB)).isTrue();
        assertThat(ledger.remove(0x30000, "F.java:1")).isSameAs(e);
        assertThat(ledger.cache().size()).isZero();
        assertThat(ledger.cache().covers(0x30000, 1)).isFalse();
        assertThat(ledger.covers(0x30000, 1)).isFalse();
    }

    @Test
    void aReusedAddressIsCoveredOnlyByItsNewExtent() {
        add(0x40000, MIB, 0);
        assertThat(ledger.covers(0x40000, MIB)).isTrue();
        ledger.remove(0x40000, "F.java:2");
        Ledger.Entry small = add(0x40000, 4096, 0);
        assertThat(ledger.covers(0x40000, MIB)).as("the freed extent").isFalse();
        assertThat(ledger.covers(0x40000 + 8192, 16)).as("inside the freed extent, past the new one").isFalse();
        assertThat(ledger.covers(0x40000, 4096)).isTrue();
        assertThat(ledger.cache().covers(0x40000, 4097)).isFalse();
        ledger.remove(small.base(), "F.java:3");
        assertThat(ledger.covers(0x40000, 1)).isFalse();
    }

    @Test
    void aDrainEmptiesTheCache() {
        add(0x50000, 64, 0);
        add(0x60000, 64, 0);
        assertThat(ledger.covers(0x50000, 64)).isTrue();
        assertThat(ledger.covers(0x60000, 64)).isTrue();
        assertThat(ledger.cache().size()).isEqualTo(2);
        ledger.drain("close");
        assertThat(ledger.cache().size()).isZero();
        assertThat(ledger.covers(0x50000, 1)).isFalse();
        assertThat(ledger.covers(0x60000, 1)).isFalse();
    }

    @Test
    void theOldestSlotMakesRoomAndAnEvictedEntryIsStillCovered() {
        List<Ledger.Entry> entries = new ArrayList<>();
        for (int i = 0; i <= LedgerCache.SLOTS; i++) {
            entries.add(add(0x100000L * (i + 1), 128, 0));
        }
        for (Ledger.Entry e : entries) {
            assertThat(ledger.covers(e.base(), 128)).isTrue();
        }
        LedgerCache cache = ledger.cache();
        assertThat(cache.size()).isEqualTo(LedgerCache.SLOTS);
        assertThat(cache.covers(entries.get(0).base(), 1)).as("the first, evicted").isFalse();
        for (int i = 1; i <= LedgerCache.SLOTS; i++) {
            assertThat(cache.covers(entries.get(i).base(), 128)).as("entry %d", i).isTrue();
        }
        assertThat(ledger.covers(entries.get(0).base(), 128)).as("evicted from the cache, live on the ledger").isTrue();
        assertThat(cache.covers(entries.get(0).base(), 1)).isTrue();
        assertThat(cache.covers(entries.get(1).base(), 1)).as("the next oldest made room").isFalse();
    }

    @Test
    void forgettingAnEntryLeavesTheOthers() {
        Ledger.Entry a = add(0x70000, 64, 0);
        add(0x80000, 64, 0);
        ledger.covers(0x70000, 1);
        ledger.covers(0x80000, 1);
        ledger.remove(a.base(), "F.java:4");
        assertThat(ledger.cache().size()).isEqualTo(1);
        assertThat(ledger.cache().covers(0x80000, 64)).isTrue();
        assertThat(ledger.cache().covers(0x70000, 1)).isFalse();
    }

    @Test
    void anEntryPutBackAfterAFailedFreeIsCachedAgain() {
        Ledger.Entry e = add(0x90000, 64, 0);
        ledger.covers(0x90000, 1);
        ledger.remove(e.base(), "F.java:5");
        ledger.add(e);
        assertThat(ledger.cache().covers(0x90000, 1)).isFalse();
        assertThat(ledger.covers(0x90000, 64)).isTrue();
        assertThat(ledger.cache().covers(0x90000, 64)).isTrue();
    }

    /**
     * Checking threads keep caching whatever lives at one address while this thread frees and
     * reallocates it smaller, again and again: after each free returns, no check of this thread
     * may find the freed extent, whatever the others cached meanwhile.
     */
    @Test
    void checksOnOtherThreadsNeverCacheAFreedEntry() throws Exception {
        long base = 0x1000_0000L;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(3);
        List<Thread> checkers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            Thread th = new Thread(() -> {
                started.countDown();
                try {
                    while (!stop.get()) {
                        ledger.covers(base, MIB);
                        ledger.covers(base + 100, 16);
                        ledger.covers(base, 4096);
                    }
                } catch (Throwable x) {
                    failure.set(x);
                }
            }, "checker-" + t);
            th.start();
            checkers.add(th);
        }
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            for (int i = 0; i < 20_000; i++) {
                Ledger.Entry big = add(base, MIB, 0);
                assertThat(ledger.covers(base, MIB)).isTrue();
                ledger.remove(big.base(), "F.java:6");
                assertThat(ledger.covers(base, MIB)).as("round %d: the freed 1 MiB", i).isFalse();
                assertThat(ledger.covers(base, 1)).as("round %d: nothing lives there", i).isFalse();
                Ledger.Entry small = add(base, 4096, 0);
                assertThat(ledger.covers(base, MIB)).as("round %d: the reused address, old extent", i).isFalse();
                assertThat(ledger.covers(base, 4096)).isTrue();
                ledger.remove(small.base(), "F.java:7");
                assertThat(ledger.covers(base + 100, 16)).as("round %d: the freed 4 KiB", i).isFalse();
            }
        } finally {
            stop.set(true);
            for (Thread th : checkers) {
                th.join(10_000);
            }
        }
        assertThat(failure.get()).isNull();
    }
}
