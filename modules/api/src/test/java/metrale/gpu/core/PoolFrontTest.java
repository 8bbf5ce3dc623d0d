// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.here;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.Allocation;
import metrale.gpu.CaptureMode;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.LeakDetection;
import metrale.gpu.MemoryPool;
import metrale.gpu.PoolRace;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.Test;

/**
 * The runtime's side of the pool over the scripted driver: blocks on the ledger, what it refuses
 * (sizes, foreign pointers, allocations and frees during a capture), red zones in blocks, the
 * stream-order check and its race reports, the quarantine in front of the allocator, and what the
 * runtime tells the allocator (syncs, destroyed streams, close).
 */
class PoolFrontTest {

    private static final long MIB = 1 << 20;

    private final ScriptedDriver driver = new ScriptedDriver();

    private Gpu caching() {
        return driver.builder().allocator("caching").open();
    }

    private static void refused(CudaError error, Runnable r, String... text) {
        assertThatThrownBy(r::run).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(error);
            assertThat(e.getMessage()).contains(text);
        });
    }

    @Test
    void aBlockIsALedgerEntryWithItsSiteAndItsFreeIsRemembered() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            assertThat(pool.kind()).isEqualTo("caching");
            assertThat(pool.toString()).isEqualTo("MemoryPool[caching]");
            Stream s = gpu.createStream();
            DevicePtr p = pool.alloc(1000, s); String site = here();
            assertThat(gpu.liveAllocations()).singleElement().isEqualTo(new Allocation(p, 1000, site,
                    gpu.liveAllocations().getFirst().index(), false));
            assertThat(pool.stats().bySite()).containsEntry(site, 1024L);
            gpu.copyH2D(new byte[] {1, 2, 3}, p);
            byte[] back = new byte[3];
            gpu.copyD2H(p, back);
            assertThat(back).containsExactly(1, 2, 3);
            pool.free(p, s);
            assertThat(gpu.liveAllocations()).isEmpty();
            refused(CudaError.INVALID_VALUE, () -> pool.free(p, s), "already freed", site, "freed at pool.free", "nothing was freed");
            pool.free(DevicePtr.NULL);
            pool.free(DevicePtr.NULL, s);
            assertThatThrownBy(() -> pool.free(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> pool.free(p, null)).isInstanceOf(NullPointerException.class);
            gpu.destroyStream(s);
        }
    }

    @Test
    void theAllocatorOptionRoutesAllocAndFreeThroughThePool() {
        try (Gpu gpu = caching()) {
            DevicePtr p = gpu.alloc(777); String site = here();
            assertThat(gpu.pool().stats().liveBlocks()).isEqualTo(1);
            assertThat(gpu.liveAllocations()).singleElement().extracting(Allocation::site).isEqualTo(site);
            assertThat(driver.count("memAlloc")).as("one chunk").isEqualTo(1);
            gpu.free(p);
            assertThat(gpu.pool().stats().liveBlocks()).isZero();
            assertThat(gpu.freeMemory()).as("the cache counts as free").isEqualTo(gpu.deviceFreeMemory() + 2 * MIB);
            DevicePtr q = gpu.alloc(10);
            assertThat(gpu.sweepUnreleased()).isEqualTo(1);
            assertThat(gpu.pool().stats().liveBlocks()).isZero();
            refused(CudaError.INVALID_VALUE, () -> gpu.free(q), "already freed");
        }
    }

    @Test
    void sizesOutOfRangeAreRefusedBeforeTheAllocator() {
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).open()) {
            MemoryPool pool = gpu.pool();
            assertThatThrownBy(() -> pool.alloc(-1, Stream.DEFAULT)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("bytes=-1");
            refused(CudaError.INVALID_VALUE, () -> pool.alloc(0, Stream.DEFAULT), "bytes=0");
            long max = 1L << 62;
            refused(CudaError.OUT_OF_MEMORY, () -> pool.alloc(max - 63, Stream.DEFAULT),
                    "bytes=" + (max - 63) + " (+64 B red zone): larger than any device memory (at most " + max + " B per block)");
            refused(CudaError.OUT_OF_MEMORY, () -> pool.alloc(max - 64, Stream.DEFAULT), "pool: requested " + max + " bytes");
            assertThatThrownBy(() -> pool.alloc(8, null)).isInstanceOf(NullPointerException.class);
            assertThat(gpu.liveAllocations()).isEmpty();
            assertThat(gpu.fault()).isEmpty();
        }
        try (Gpu gpu = caching()) {
            assertThatThrownBy(() -> gpu.pool().alloc(Long.MAX_VALUE, Stream.DEFAULT)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.getMessage()).contains("B per block); nothing was allocated").doesNotContain("red zone"));
        }
    }

    @Test
    void pointersThePoolDidNotAllocateAreRefusedAndStayOnTheLedger() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            DevicePtr plain = gpu.allocArena(4096);
            refused(CudaError.INVALID_VALUE, () -> pool.free(plain), "was not allocated by this runtime");
            gpu.freeArena(plain);
            try (Gpu byDriver = new ScriptedDriver().open()) {
                DevicePtr d = byDriver.alloc(64);
                refused(CudaError.INVALID_VALUE, () -> byDriver.pool().free(d, Stream.DEFAULT),
                        "is " + byDriver.liveAllocations().getFirst().ptr(), "not a pool block: free it with Gpu.free(ptr)");
                assertThat(byDriver.liveAllocations()).hasSize(1);
                refused(CudaError.INVALID_VALUE, () -> byDriver.pool().recordStream(d, Stream.DEFAULT), "is not a live pool block (");
                byDriver.free(d);
            }
            DevicePtr p = pool.alloc(2048, Stream.DEFAULT);
            refused(CudaError.INVALID_VALUE, () -> pool.free(p.plus(512)), "interior pointer");
            assertThat(gpu.liveAllocations()).hasSize(1);
            pool.free(p);
        }
    }

    @Test
    void thePoolIsMadeAtFirstUseAndEmptyCacheBeforeThatDoesNothing() {
        try (Gpu gpu = caching()) {
            gpu.pool().emptyCache();
            gpu.synchronize();
            gpu.synchronize(Stream.DEFAULT);
            Stream s = gpu.createStream();
            gpu.destroyStream(s);
            assertThat(gpu.freeMemory()).isEqualTo(gpu.deviceFreeMemory());
            assertThat(driver.count("memAlloc")).isZero();
            assertThat(gpu.pool().stats().reservedBytes()).isZero();
            assertThat(gpu.pool().snapshot().chunks()).isEmpty();
            assertThat(gpu.pool().races()).isEmpty();
        }
        assertThat(driver.count("memFree")).isZero();
    }

    @Test
    void aSyncOfTheFreeingStreamOrOfTheDeviceLetsAnotherStreamReuseTheBlock() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s1 = gpu.createStream();
            Stream s2 = gpu.createStream();
            DevicePtr p = pool.alloc(12 * MIB, s1);
            pool.free(p, s1);
            gpu.synchronize(s1);
            assertThat(pool.alloc(12 * MIB, s2)).as("after the stream's sync, no fence is needed").isEqualTo(p);
            pool.free(p);
            gpu.synchronize();
            assertThat(pool.alloc(12 * MIB, s1)).as("after the device's").isEqualTo(p);
            assertThat(driver.count("eventRecord")).isZero();
            pool.free(p);
            pool.emptyCache();
            assertThat(driver.allocations()).isEmpty();
            gpu.destroyStream(s1);
            gpu.destroyStream(s2);
        }
    }

    @Test
    void theLegacyStreamsTwoHandlesAreOneLane() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            DevicePtr p = pool.alloc(12 * MIB, new Stream(1));
            pool.free(p, Stream.DEFAULT);
            assertThat(pool.alloc(12 * MIB, new Stream(1))).isEqualTo(p);
            pool.recordStream(p, Stream.DEFAULT);
            pool.free(p);
            assertThat(driver.count("eventRecord")).as("the mark of its own lane").isZero();
            assertThat(pool.snapshot().chunks().getFirst().stream()).isZero();
        }
    }

    @Test
    void aMarkedBlockWaitsForTheMarkedStreamWhenFreedOnItsOwn() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s1 = gpu.createStream();
            Stream s2 = gpu.createStream();
            DevicePtr p = pool.alloc(12 * MIB, s1);
            pool.recordStream(p, s2);
            assertThatThrownBy(() -> pool.recordStream(p, null)).isInstanceOf(NullPointerException.class);
            driver.holdEvents();
            pool.free(p);
            assertThat(driver.recordedEvents()).hasSize(1);
            assertThat(pool.alloc(12 * MIB, s1)).isNotEqualTo(p);
            driver.releaseEvents();
            assertThat(pool.alloc(12 * MIB, s1)).isEqualTo(p);
            gpu.sweepUnreleased();
            gpu.destroyStream(s2);
            gpu.destroyStream(s1);
        }
    }

    // ---- captures ----------------------------------------------------------------------------------

    @Test
    void aGlobalCaptureRefusesEveryAllocationAndFreeAndStaysValid() throws Exception {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            Stream other = gpu.createStream();
            DevicePtr held = pool.alloc(64, other);
            gpu.beginCapture(s, CaptureMode.GLOBAL);
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(64, other),
                    s + " is capturing in GLOBAL mode", "the pool does not allocate blocks then", "nothing was allocated");
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(held), "the pool does not free blocks then", "nothing was freed");
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.free(held), "nothing was freed");
            AtomicReference<Throwable> fromOther = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    pool.alloc(64, other);
                } catch (Throwable x) {
                    fromOther.set(x);
                }
            });
            t.join();
            assertThat(fromOther.get()).as("every thread").isInstanceOf(GpuException.class);
            assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(held);
            assertThat(gpu.streamIsCapturing(s)).isTrue();
            gpu.destroyGraph(gpu.endCapture(s));
            pool.free(held);
            pool.alloc(64, other);
            gpu.sweepUnreleased();
            gpu.destroyStream(s);
            gpu.destroyStream(other);
        }
    }

    @Test
    void aRelaxedCaptureRefusesOnlyItsOwnStreamAndAThreadLocalOneOnlyItsThread() throws Exception {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            Stream other = gpu.createStream();
            DevicePtr mine = pool.alloc(64, s);
            gpu.beginCapture(s, CaptureMode.RELAXED);
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(64, s), s + " is capturing a graph",
                    "allocate it before beginCapture or after endCapture");
            // The free names the block's stream by its driver handle (the pool keeps no other name for it).
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(mine), " is capturing a graph", "free it before");
            DevicePtr p = pool.alloc(64, other);
            pool.free(p);
            gpu.destroyGraph(gpu.endCapture(s));
            gpu.beginCapture(s, CaptureMode.THREAD_LOCAL);
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(64, other), "THREAD_LOCAL mode");
            AtomicReference<DevicePtr> got = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> got.set(pool.alloc(64, other)));
            t.join();
            assertThat(got.get()).as("another thread may").isNotNull();
            gpu.destroyGraph(gpu.endCapture(s));
            pool.free(got.get());
            pool.free(mine);
            gpu.destroyStream(s);
            gpu.destroyStream(other);
        }
    }

    @Test
    void theLegacyStreamsImplicitCaptureStatusIsNoRefusalAndAFailedQueryIsThrown() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            gpu.beginCapture(s, CaptureMode.RELAXED);
            driver.failNext("streamIsCapturing", CudaError.STREAM_CAPTURE_IMPLICIT);
            DevicePtr p = pool.alloc(64, Stream.DEFAULT);
            driver.failNext("streamIsCapturing", CudaError.INVALID_HANDLE);
            refused(CudaError.INVALID_HANDLE, () -> pool.alloc(64, Stream.DEFAULT), "streamIsCapturing");
            gpu.destroyGraph(gpu.endCapture(s));
            pool.free(p);
            assertThat(gpu.fault()).isEmpty();
            gpu.destroyStream(s);
        }
    }

    // ---- red zones, the quarantine, failures ---------------------------------------------------------

    @Test
    void aBlocksRedZoneIsFilledOnItsStreamAndScanned() {
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).quarantineBytes(0).open()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            DevicePtr p = pool.alloc(100, s);
            assertThat(driver.calls()).containsSubsequence("memAlloc", "memsetD8Async", "streamSynchronize");
            assertThat(driver.read(p.address() + 100, 64)).containsOnly((byte) 0xCB);
            DevicePtr q = pool.alloc(100, Stream.DEFAULT);
            assertThat(driver.calls().subList(driver.calls().size() - 2, driver.calls().size()))
                    .containsExactly("memsetD8", "streamSynchronize");
            gpu.memset(p.plus(100), 0, 2);
            assertThat(gpu.findRedzoneViolations()).singleElement().satisfies(v -> assertThat(v.badBytes()).isEqualTo(2));
            assertThat(gpu.liveAllocations()).extracting(Allocation::bytes).containsOnly(100L);
            pool.free(p, s);
            pool.free(q);
            gpu.destroyStream(s);
        }
    }

    @Test
    void aFailedRedZoneFillGivesTheBlockBack() {
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).quarantineBytes(0).open()) {
            MemoryPool pool = gpu.pool();
            driver.failNext("memsetD8", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> pool.alloc(100, Stream.DEFAULT), "memsetD8");
            assertThat(gpu.liveAllocations()).isEmpty();
            assertThat(pool.stats().liveBlocks()).isZero();
        }
    }

    @Test
    void withTheQuarantineAFreedBlockIsHeldAndItsFreeSiteWalked() {
        try (Gpu gpu = driver.builder().allocator("caching").quarantineBytes(64 * MIB).open()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            DevicePtr p = pool.alloc(12 * MIB, s);
            pool.free(p, s); String freed = here();
            assertThat(gpu.quarantinedBytes()).isEqualTo(12 * MIB);
            assertThat(pool.stats().liveBlocks()).as("still a block of the allocator").isEqualTo(1);
            refused(CudaError.INVALID_VALUE, () -> gpu.memset(p, 0, 8), "held in the quarantine", "freed at " + freed);
            gpu.destroyStream(s);
            assertThat(gpu.quarantinedBytes()).as("given back before its stream goes").isZero();
            assertThat(pool.stats().liveBlocks()).isZero();
        }
    }

    @Test
    void anAllocatorFailureGoesThroughTheFaultLatch() {
        try (Gpu gpu = caching()) {
            driver.failNext("memAlloc", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> gpu.pool().alloc(8, Stream.DEFAULT), "memAlloc");
            assertThat(gpu.fault()).isEmpty();
            driver.failNext("memAlloc", CudaError.ILLEGAL_ADDRESS);
            refused(CudaError.ILLEGAL_ADDRESS, () -> gpu.pool().alloc(8, Stream.DEFAULT), "surfaced during pool.alloc 8 B on");
            assertThat(gpu.fault()).isPresent();
            assertThatThrownBy(() -> gpu.pool().stats()).isInstanceOf(StickyFaultException.class);
        }
    }

    @Test
    void aFailedFreeLeavesTheBlockOnTheLedger() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            DevicePtr p = pool.alloc(64, s);
            pool.recordStream(p, Stream.DEFAULT);
            driver.failNext("eventRecord", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> pool.free(p), "eventRecord");
            assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(p);
            pool.free(p);
            assertThat(gpu.liveAllocations()).isEmpty();
            gpu.destroyStream(s);
        }
    }

    @Test
    void cudasAllocatorOnADriverWithoutItIsRefusedAtFirstUse() {
        try (Gpu gpu = driver.builder().allocator("cuda").open()) {
            assertThat(gpu.pool().kind()).isEqualTo("cuda");
            refused(CudaError.NOT_SUPPORTED, () -> gpu.pool().alloc(8, Stream.DEFAULT), "no stream-ordered allocator");
        }
        ScriptedDriver pools = new ScriptedDriver().withMemPools();
        try (Gpu gpu = pools.builder().allocator("cuda").open()) {
            DevicePtr p = gpu.alloc(100);
            assertThat(pools.count("memAllocAsync")).isEqualTo(1);
            gpu.free(p);
            assertThat(pools.count("memFreeAsync")).isEqualTo(1);
            pools.failNext("memPoolGetAttribute", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> gpu.pool().stats(), "memPoolGetAttribute");
            pools.failNext("memPoolGetAttribute", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> gpu.pool().snapshot(), "memPoolGetAttribute");
            pools.failNext("memPoolTrimTo", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> gpu.pool().emptyCache(), "memPoolTrimTo");
        }
    }

    // ---- the stream-order check -----------------------------------------------------------------------

    @Test
    void aDriverThatChecksStreamOrderHasEveryReuseCheckedAndRacesNamed() {
        driver.reportRaces(null);
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            assertThat(driver.extentOf(0x7000_0000_0000L)).as("no block yet: nothing looked up").isNull();
            Stream s1 = gpu.createStream();
            Stream s2 = gpu.createStream();
            DevicePtr p = pool.alloc(1000, s1); String site = here();
            assertThat(driver.extentOf(p.address() + 999)).containsExactly(p.address(), 1000);
            assertThat(driver.count("streamOrderViolation")).isEqualTo(1);
            assertThat(pool.races()).isEmpty();
            pool.free(p, s1); String freed = here();
            driver.reportRaces("a pending kernel on " + s1);
            DevicePtr q = pool.alloc(1000, s1); String again = here();
            assertThat(q).isEqualTo(p);
            assertThat(pool.races()).singleElement().satisfies(r -> {
                assertThat(r.ptr()).isEqualTo(q);
                assertThat(r.bytes()).isEqualTo(1000);
                assertThat(r.stream()).isEqualTo(s1);
                assertThat(r.site()).isEqualTo(again);
                assertThat(r.unorderedWith()).isEqualTo("a pending kernel on " + s1);
                // The previous life's stream is named by its driver handle (the pool keeps no other name for it).
                assertThat(r.previous()).startsWith("0x" + Long.toHexString(p.address()) + " (1000 B, #"
                        + (gpu.liveAllocations().getFirst().index() - 1) + ", allocated at " + site + ", freed at " + freed + " on ");
            });
            DevicePtr fresh = pool.alloc(3000, s2);
            assertThat(pool.races()).hasSize(2);
            assertThat(pool.races().get(1).previous()).isEqualTo("earlier blocks (not remembered)");
            driver.failNext("streamOrderViolation", CudaError.INVALID_VALUE);
            refused(CudaError.INVALID_VALUE, () -> pool.alloc(64, s2), "streamOrderViolation");
            List<PoolRace> races = pool.races();
            assertThatThrownBy(() -> races.add(null)).isInstanceOf(UnsupportedOperationException.class);
            pool.free(q);
            pool.free(fresh);
            gpu.sweepUnreleased();
            gpu.destroyStream(s1);
            gpu.destroyStream(s2);
        }
    }

    @Test
    void aRaceAcrossSeveralFreedBlocksNamesEachAndCudasAllocatorIsNotChecked() {
        driver.reportRaces(null);
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            DevicePtr a = pool.alloc(1000, Stream.DEFAULT);
            DevicePtr b = pool.alloc(1000, Stream.DEFAULT);
            pool.free(a);
            pool.free(b);
            driver.reportRaces("unordered");
            DevicePtr big = pool.alloc(1500, Stream.DEFAULT);
            assertThat(big).isEqualTo(a);
            assertThat(pool.races()).singleElement().extracting(PoolRace::previous).asString()
                    .contains("0x" + Long.toHexString(a.address()) + " (1000 B", "; 0x" + Long.toHexString(b.address()) + " (1000 B");
            DevicePtr inside = pool.alloc(100, Stream.DEFAULT);
            assertThat(inside.address()).isEqualTo(a.address() + 1536);
            assertThat(pool.races().get(1).previous()).as("the freed block it starts inside")
                    .startsWith("0x" + Long.toHexString(b.address()));
            gpu.sweepUnreleased();
        }
        ScriptedDriver pools = new ScriptedDriver().withMemPools().reportRaces("unordered");
        try (Gpu gpu = pools.builder().allocator("cuda").open()) {
            gpu.pool().free(gpu.pool().alloc(64, Stream.DEFAULT));
            assertThat(pools.count("streamOrderViolation")).isZero();
            assertThat(gpu.pool().races()).isEmpty();
            assertThat(pools.extentOf(0)).isNull();
        }
    }

    @Test
    void aRaceNamesTheBlockWithItsRedZoneAndSoDoesItsPreviousLife() {
        driver.reportRaces(null);
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).quarantineBytes(0).open()) {
            MemoryPool pool = gpu.pool();
            DevicePtr p = pool.alloc(1000, Stream.DEFAULT);
            assertThat(driver.extentOf(p.address() + 1063)).containsExactly(p.address(), 1064);
            pool.free(p);
            driver.reportRaces("unordered");
            DevicePtr q = pool.alloc(1000, Stream.DEFAULT);
            assertThat(pool.races()).singleElement().satisfies(r -> {
                assertThat(r.bytes()).isEqualTo(1064);
                assertThat(r.previous()).startsWith("0x" + Long.toHexString(p.address()) + " (1064 B");
            });
            pool.free(q);
        }
    }

    @Test
    void aFreshBlockRightAfterAFreedOneHasNoPreviousLife() {
        driver.reportRaces(null);
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            DevicePtr x = pool.alloc(1024, Stream.DEFAULT);
            pool.free(x);
            DevicePtr again = pool.alloc(1024, Stream.DEFAULT);
            assertThat(again).isEqualTo(x);
            driver.reportRaces("unordered");
            DevicePtr fresh = pool.alloc(1024, Stream.DEFAULT);
            assertThat(fresh.address()).isEqualTo(x.address() + 1024);
            assertThat(pool.races()).singleElement().extracting(PoolRace::previous).isEqualTo("earlier blocks (not remembered)");
            gpu.sweepUnreleased();
        }
    }

    @Test
    void atMostAThousandAndTwentyFourRacesAreKept() {
        driver.reportRaces("unordered");
        try (Gpu gpu = driver.builder().allocator("caching").leakDetection(LeakDetection.OFF).open()) {
            MemoryPool pool = gpu.pool();
            for (int i = 0; i < 1025; i++) {
                pool.alloc(512, Stream.DEFAULT);
            }
            assertThat(pool.races()).hasSize(1024);
            gpu.sweepUnreleased();
        }
    }

    @Test
    void theLastFourThousandNinetySixFreedBlocksAreRemembered() {
        driver.reportRaces(null);
        try (Gpu gpu = driver.builder().allocator("caching").leakDetection(LeakDetection.OFF).open()) {
            MemoryPool pool = gpu.pool();
            List<DevicePtr> ps = new java.util.ArrayList<>();
            for (int i = 0; i < 4097; i++) {
                ps.add(pool.alloc(512, Stream.DEFAULT));
            }
            ps.forEach(pool::free);
            driver.reportRaces("unordered");
            DevicePtr p = pool.alloc(1024, Stream.DEFAULT);
            assertThat(p).isEqualTo(ps.getFirst());
            assertThat(pool.races()).singleElement().extracting(PoolRace::previous).asString()
                    .as("the first free is forgotten, the second remembered")
                    .startsWith("0x" + Long.toHexString(ps.get(1).address()) + " (512 B").doesNotContain("; ");
            pool.free(p);
        }
    }

    @Test
    void aBlockTheQuarantineGivesBackIsRememberedForRaceReports() {
        driver.reportRaces(null);
        try (Gpu gpu = driver.builder().allocator("caching").quarantineBytes(1).open()) {
            MemoryPool pool = gpu.pool();
            DevicePtr p = pool.alloc(1024, Stream.DEFAULT);
            pool.free(p);
            assertThat(gpu.quarantinedBytes()).as("over the limit: given back at once").isZero();
            driver.reportRaces("unordered");
            pool.alloc(1024, Stream.DEFAULT);
            assertThat(pool.races()).singleElement().extracting(PoolRace::previous).asString()
                    .startsWith("0x" + Long.toHexString(p.address()) + " (1024 B");
            gpu.sweepUnreleased();
        }
    }

    @Test
    void duringACaptureTheFillIsNotWaitedForAndTheQuarantineHoldsWhatItWouldGiveBack() {
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).quarantineBytes(1).open()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            Stream other = gpu.createStream();
            gpu.beginCapture(s, CaptureMode.RELAXED);
            int syncs = driver.count("streamSynchronize");
            DevicePtr p = pool.alloc(100, other);
            assertThat(driver.count("streamSynchronize")).as("a sync would break the capture").isEqualTo(syncs);
            pool.free(p);
            assertThat(gpu.quarantinedBytes()).as("held, unscanned, until the capture ends").isEqualTo(164);
            gpu.destroyGraph(gpu.endCapture(s));
            pool.free(pool.alloc(100, other));
            assertThat(gpu.quarantinedBytes()).isZero();
            gpu.destroyStream(s);
            gpu.destroyStream(other);
        }
    }

    @Test
    void aPoolFreeAfterAStickyFaultIsRefused() {
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).quarantineBytes(1).open()) {
            DevicePtr p = gpu.pool().alloc(100, Stream.DEFAULT);
            driver.failNext("ctxSynchronize", CudaError.ILLEGAL_ADDRESS);
            assertThatThrownBy(gpu::synchronize).isInstanceOf(GpuException.class);
            assertThat(gpu.fault()).isPresent();
            assertThatThrownBy(() -> gpu.pool().free(p)).isInstanceOf(StickyFaultException.class);
        }
    }

    @Test
    void anOutOfMemoryRetriedAfterTheQuarantineGaveBackHandsOutAUsableBlock() {
        ScriptedDriver small = new ScriptedDriver(16 * MIB);
        try (Gpu gpu = small.builder().allocator("caching").quarantineBytes(64 * MIB).open()) {
            DevicePtr a = gpu.pool().alloc(12 * MIB, Stream.DEFAULT);
            gpu.pool().free(a);
            gpu.pool().emptyCache();
            DevicePtr b = gpu.pool().alloc(12 * MIB, Stream.DEFAULT);
            assertThat(b.address()).isNotZero();
            assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(b);
            gpu.copyH2D(new byte[] {4, 5}, b);
            assertThat(small.read(b.address(), 2)).containsExactly(4, 5);
            gpu.pool().free(b);
        }
    }

    @Test
    void aFailedFillAndAFailedGiveBackAreBothReported() {
        ScriptedDriver pools = new ScriptedDriver().withMemPools();
        try (Gpu gpu = pools.builder().allocator("cuda").redZoneBytes(64).open()) {
            pools.failNext("memsetD8", CudaError.INVALID_VALUE).failNext("memFreeAsync", CudaError.INVALID_HANDLE);
            assertThatThrownBy(() -> gpu.pool().alloc(100, Stream.DEFAULT)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                assertThat(e.getSuppressed()).singleElement().isInstanceOfSatisfying(GpuException.class,
                        x -> assertThat(x.error()).isEqualTo(CudaError.INVALID_HANDLE));
            });
        }
    }

    @Test
    void aFreeOnTheLegacyStreamIsOrderedThereAndARefusalNamesTheCallersStream() {
        try (Gpu gpu = caching()) {
            MemoryPool pool = gpu.pool();
            Stream s = gpu.createStream();
            DevicePtr p = pool.alloc(12 * MIB, s);
            pool.free(p, Stream.DEFAULT);
            assertThat(pool.snapshot().chunks().getFirst().blocks().getFirst().stream()).as("freed on the legacy lane").isZero();
            DevicePtr q = pool.alloc(64, s);
            gpu.beginCapture(s, CaptureMode.RELAXED);
            refused(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(q, s), s + " is capturing a graph");
            assertThatThrownBy(() -> pool.free(q)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.getMessage()).doesNotContain("null is capturing"));
            gpu.destroyGraph(gpu.endCapture(s));
            pool.free(q);
            gpu.destroyStream(s);
        }
    }

    @Test
    void aDestroyedStreamsLiveBlocksPassToTheLegacyStream() {
        try (Gpu gpu = caching()) {
            Stream s = gpu.createStream();
            DevicePtr p = gpu.pool().alloc(64, s);
            gpu.destroyStream(s);
            assertThat(gpu.pool().snapshot().chunks().getFirst().blocks().getFirst().stream()).isZero();
            gpu.pool().free(p);
        }
    }

    @Test
    void poolBlocksAreJfrAllocationAndFreeEvents(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("pool.jfr");
        DevicePtr p;
        try (jdk.jfr.Recording rec = new jdk.jfr.Recording(); Gpu gpu = caching()) {
            rec.enable("metrale.Alloc");
            rec.enable("metrale.Free");
            rec.start();
            p = gpu.pool().alloc(3000, Stream.DEFAULT);
            gpu.pool().free(p);
            rec.stop();
            rec.dump(file);
        }
        List<jdk.jfr.consumer.RecordedEvent> events = jdk.jfr.consumer.RecordingFile.readAllEvents(file);
        assertThat(events).extracting(e -> e.getEventType().getName()).containsExactly("metrale.Alloc", "metrale.Free");
        assertThat(events).allSatisfy(e -> assertThat(e.getLong("bytes")).isEqualTo(3000));
    }

    @Test
    void closeGivesTheChunksBackLiveBlocksIncluded() {
        Gpu gpu = caching();
        gpu.pool().alloc(12 * MIB, Stream.DEFAULT);
        gpu.pool().alloc(64, Stream.DEFAULT);
        assertThat(driver.allocations()).hasSize(2);
        gpu.close();
        assertThat(driver.allocations()).isEmpty();
    }
}
