// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The caching allocator on its own, over the scripted driver: sizes and bins, splitting and
 * coalescing, the fences of cross-stream reuse, {@code recordStream}, the out-of-memory retry,
 * releasing the cache, and what a live capture holds back.
 */
class CachingAllocatorTest {

    private static final long KIB = 1 << 10;
    private static final long MIB = 1 << 20;

    private ScriptedDriver driver;
    /** What the allocator's capture supplier answers. */
    private boolean capture;
    private CachingAllocator pool;
    private long s1;
    private long s2;

    /** When {@link #pool} was made. */
    private long t0;

    @BeforeEach
    void open() {
        driver = new ScriptedDriver();
        t0 = System.nanoTime();
        pool = new CachingAllocator(driver, () -> capture);
        s1 = driver.streamCreate(1);
        s2 = driver.streamCreate(1);
    }

    private long alloc(long bytes, long stream) {
        return pool.alloc(bytes, stream, "site", 0);
    }

    private List<PoolSnapshot.Block> blocks() {
        List<PoolSnapshot.Block> out = new ArrayList<>();
        for (PoolSnapshot.Chunk c : pool.snapshot().chunks()) {
            out.addAll(c.blocks());
        }
        return out;
    }

    // ---- sizes ----------------------------------------------------------------------------------

    @Test
    void requestsRoundToTheBlockGranularity() {
        assertThat(CachingAllocator.roundSize(1)).isEqualTo(512);
        assertThat(CachingAllocator.roundSize(512)).isEqualTo(512);
        assertThat(CachingAllocator.roundSize(513)).isEqualTo(1024);
        assertThat(CachingAllocator.roundSize(MIB + 1)).isEqualTo(MIB + 512);
    }

    @Test
    void chunkSizesFollowTheBins() {
        assertThat(CachingAllocator.chunkSize(512)).isEqualTo(2 * MIB);
        assertThat(CachingAllocator.chunkSize(MIB)).as("the largest small request").isEqualTo(2 * MIB);
        assertThat(CachingAllocator.chunkSize(MIB + 512)).isEqualTo(20 * MIB);
        assertThat(CachingAllocator.chunkSize(10 * MIB - 512)).isEqualTo(20 * MIB);
        assertThat(CachingAllocator.chunkSize(10 * MIB)).as("own chunk").isEqualTo(10 * MIB);
        assertThat(CachingAllocator.chunkSize(10 * MIB + 512)).as("rounded to 2 MiB").isEqualTo(12 * MIB);
        assertThat(CachingAllocator.chunkSize(12 * MIB)).isEqualTo(12 * MIB);
    }

    @Test
    void aSizeOutOfRangeIsInvalidValueAndTouchesNothing() {
        for (long bad : new long[] {0, -1, Long.MAX_VALUE - (2 << 20) + 1}) {
            assertThatThrownBy(() -> alloc(bad, 0)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                assertThat(e.getMessage()).contains("bytes=" + bad);
            });
        }
        assertThat(driver.count("memAlloc")).isZero();
        assertThat(pool.kind()).isEqualTo("caching");
        long largest = Long.MAX_VALUE - (2 << 20);
        assertThatThrownBy(() -> alloc(largest, 0)).as("the largest size is taken, and no device has it")
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY));
    }

    // ---- split and coalesce ------------------------------------------------------------------------

    @Test
    void aSmallChunkIsSplitIntoConsecutiveBlocks() {
        long a = alloc(1000, s1);
        long b = alloc(1000, s1);
        long c = alloc(100, s1);
        assertThat(b).isEqualTo(a + 1024);
        assertThat(c).isEqualTo(b + 1024);
        assertThat(driver.allocations()).containsOnlyKeys(a).containsValue(2 * MIB);
        PoolStats st = pool.stats();
        assertThat(st.chunks()).isEqualTo(1);
        assertThat(st.driverAllocs()).isEqualTo(1);
        assertThat(st.allocs()).isEqualTo(3);
        assertThat(st.hits()).as("the second and third came from the first's remainder").isEqualTo(2);
        assertThat(st.allocatedBytes()).isEqualTo(2560);
        assertThat(st.requestedBytes()).isEqualTo(2100);
        assertThat(st.reservedBytes()).isEqualTo(2 * MIB);
        assertThat(st.cachedBytes()).isEqualTo(2 * MIB - 2560);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(1024L, 1024L, 512L, 2 * MIB - 2560);
        assertThat(blocks()).extracting(PoolSnapshot.Block::allocated).containsExactly(true, true, true, false);
    }

    @Test
    void aSmallRestOfExactlyOneGranuleIsSplitOff() {
        long a = alloc(MIB, s1);
        long b = alloc(MIB - 512, s1);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(MIB, MIB - 512, 512L);
        assertThat(alloc(1, s1)).isEqualTo(b + MIB - 512);
        assertThat(a).isNotZero();
        assertThat(driver.count("memAlloc")).isEqualTo(1);
    }

    @Test
    void aSmallBlockTakesTheWholeRestWhenNothingWouldRemain() {
        long a = alloc(MIB, s1);
        long b = alloc(MIB, s1);
        assertThat(b).isEqualTo(a + MIB);
        assertThat(blocks()).hasSize(2).allSatisfy(x -> assertThat(x.allocated()).isTrue());
        assertThat(pool.cachedBytes()).isZero();
    }

    @Test
    void aLargeChunkIsSplitOnlyWhenMoreThanASmallRequestRemains() {
        long a = alloc(2 * MIB, s1);
        assertThat(driver.allocations()).containsEntry(a, 20 * MIB);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(2 * MIB, 18 * MIB);
        // 17.5 MiB of the 18 MiB rest leaves 512 KiB, too little to split off.
        long b = alloc(17 * MIB + 512 * KIB, s1);
        assertThat(b).isEqualTo(a + 2 * MIB);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(2 * MIB, 18 * MIB);
        assertThat(pool.stats().allocatedBytes()).as("the block keeps the unsplit rest").isEqualTo(20 * MIB);
        assertThat(pool.stats().requestedBytes()).isEqualTo(19 * MIB + 512 * KIB);
        // A remainder of 1 MiB + 512 is split off, more than a small request; one of exactly 1 MiB is not.
        long c = alloc(3 * MIB, s2);
        long d = alloc(16 * MIB - 512, s2);
        assertThat(d).isEqualTo(c + 3 * MIB);
        assertThat(pool.snapshot().chunks().get(1).blocks()).extracting(PoolSnapshot.Block::bytes)
                .containsExactly(3 * MIB, 16 * MIB - 512, MIB + 512);
        long e = alloc(3 * MIB, s1);
        alloc(16 * MIB, s1);
        assertThat(pool.snapshot().chunks().get(2).blocks()).extracting(PoolSnapshot.Block::bytes)
                .containsExactly(3 * MIB, 17 * MIB);
        assertThat(e).isNotZero();
    }

    @Test
    void aLargeRequestGetsAChunkOfItsOwnRoundedToTwoMebibytes() {
        long a = alloc(11 * MIB, s1);
        assertThat(driver.allocations()).containsEntry(a, 12 * MIB);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(12 * MIB);
    }

    @Test
    void freeNeighboursCoalesceIntoOneBlock() {
        long a = alloc(1000, s1);
        long b = alloc(1000, s1);
        long c = alloc(1000, s1);
        pool.free(a, s1);
        pool.free(c, s1);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(1024L, 1024L, 2 * MIB - 2048);
        pool.free(b, s1);
        assertThat(blocks()).singleElement().satisfies(x -> {
            assertThat(x.ptr()).isEqualTo(a);
            assertThat(x.bytes()).isEqualTo(2 * MIB);
            assertThat(x.allocated()).isFalse();
        });
        assertThat(pool.stats().largestCachedBlock()).isEqualTo(2 * MIB);
        assertThat(pool.stats().fragmentation()).isZero();
        // The merged block serves a request as large as the chunk.
        assertThat(alloc(MIB, s1)).isEqualTo(a);
        assertThat(pool.stats().driverAllocs()).isEqualTo(1);
    }

    @Test
    void neighboursFreedOnAnotherStreamDoNotMerge() {
        long a = alloc(1000, s1);
        long b = alloc(1000, s1);
        pool.free(a, s2);
        pool.free(b, s1);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(1024L, 2 * MIB - 1024);
        assertThat(pool.stats().fragmentation()).isGreaterThan(0.0).isLessThan(0.01);
    }

    @Test
    void theSmallestFittingBlockIsTaken() {
        long a = alloc(4096, s1);
        long keep1 = alloc(512, s1);
        long b = alloc(2048, s1);
        long keep2 = alloc(512, s1);
        pool.free(a, s1);
        pool.free(b, s1);
        assertThat(alloc(2000, s1)).as("the 2 KiB block, not the 4 KiB one or the rest").isEqualTo(b);
        assertThat(alloc(3000, s1)).as("then the 4 KiB block").isEqualTo(a);
        assertThat(keep1).isNotEqualTo(keep2);
    }

    @Test
    void smallAndLargeRequestsUseSeparateBins() {
        long big = alloc(2 * MIB, s1);
        pool.free(big, s1);
        long small = alloc(1000, s1);
        assertThat(driver.allocations()).hasSize(2).containsEntry(small, 2 * MIB);
        pool.free(small, s1);
        long big2 = alloc(MIB + 1, s1);
        assertThat(big2).as("a large request reuses the large chunk").isEqualTo(big);
        assertThat(pool.stats().chunks()).isEqualTo(2);
    }

    // ---- stream order ---------------------------------------------------------------------------

    @Test
    void theNeverUsedRestOfAFreshChunkServesAnyStreamAtOnce() {
        long a = alloc(1000, s1);
        assertThat(alloc(1000, s2)).isEqualTo(a + 1024);
        assertThat(driver.count("memAlloc")).isEqualTo(1);
        assertThat(driver.count("eventRecord")).isZero();
    }

    @Test
    void aBlockFreedOnItsStreamIsReusedThereAtOnceWithoutAnEvent() {
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        assertThat(alloc(10 * MIB, s1)).isEqualTo(a);
        assertThat(driver.count("eventRecord")).isZero();
        assertThat(driver.count("eventCreate")).isZero();
    }

    @Test
    void anotherStreamReusesABlockOnlyOnceTheFenceAfterItsFreeHasCompleted() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        // First miss on s2: the fence is recorded on s1 now, lazily, and the block is not yet safe.
        long b = alloc(10 * MIB, s2);
        assertThat(b).isNotEqualTo(a);
        assertThat(driver.recordedEvents()).singleElement().satisfies(r -> assertThat(r.stream()).isEqualTo(s1));
        long fence = driver.recordedEvents().getFirst().event();
        assertThat(driver.count("eventQuery")).isZero();
        // Asked again while it is still incomplete, twice: no reuse, and no second record.
        long c = alloc(10 * MIB, s2);
        assertThat(driver.count("eventQuery")).isEqualTo(1);
        long d = alloc(10 * MIB, s2);
        assertThat(driver.count("eventQuery")).isEqualTo(2);
        assertThat(List.of(b, c, d)).doesNotContain(a).doesNotHaveDuplicates();
        assertThat(driver.recordedEvents()).hasSize(1);
        driver.complete(fence);
        assertThat(alloc(10 * MIB, s2)).as("reused once the fence completed").isEqualTo(a);
        assertThat(driver.count("eventQuery")).isEqualTo(3);
        assertThat(driver.count("eventCreate")).isEqualTo(1);
        // A later free on s1 is covered by the same event, recorded again; the fence seen complete is not asked again.
        pool.free(b, s1);
        long e = alloc(10 * MIB, s2);
        assertThat(e).isNotEqualTo(b);
        assertThat(driver.count("eventQuery")).isEqualTo(3);
        assertThat(driver.recordedEvents()).hasSize(2).extracting(ScriptedDriver.Recorded::event).containsOnly(fence);
        assertThat(driver.count("eventCreate")).isEqualTo(1);
    }

    @Test
    void aFenceThatCompletedCoversOnlyTheFreesBeforeItsRecord() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        long x = alloc(12 * MIB, s1);
        pool.free(a, s1);
        alloc(10 * MIB, s2);
        long fence = driver.recordedEvents().getFirst().event();
        // Freed after the record: the fence does not cover it.
        pool.free(x, s1);
        driver.complete(fence);
        long y = alloc(12 * MIB, s2);
        assertThat(y).isNotEqualTo(x);
        assertThat(driver.recordedEvents()).as("recorded again for the later free").hasSize(2);
        assertThat(alloc(10 * MIB, s2)).isEqualTo(a);
    }

    @Test
    void aSyncOfTheFreeingStreamOrOfTheDeviceMakesItsFreesSafeWithoutAnEvent() {
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        pool.streamSynchronized(s1);
        assertThat(alloc(10 * MIB, s2)).isEqualTo(a);
        long b = alloc(12 * MIB, s2);
        pool.free(b, s2);
        pool.streamSynchronized(s1);
        pool.deviceSynchronized();
        assertThat(alloc(12 * MIB, s1)).isEqualTo(b);
        assertThat(driver.count("eventRecord")).isZero();
        pool.streamSynchronized(12345);
    }

    @Test
    void ofTheSafeBlocksOfOtherStreamsTheSmallestFittingIsTaken() {
        long a = alloc(12 * MIB, s1);
        long b = alloc(10 * MIB, s2);
        long s3 = driver.streamCreate(1);
        pool.free(a, s1);
        pool.free(b, s2);
        pool.deviceSynchronized();
        assertThat(alloc(10 * MIB, s3)).isEqualTo(b);
        assertThat(alloc(10 * MIB, s3)).isEqualTo(a);
    }

    @Test
    void anUnmarkedFreeDuringACaptureIsBinnedAtOnce() {
        long a = alloc(10 * MIB, s1);
        capture = true;
        pool.free(a, s1);
        assertThat(alloc(10 * MIB, s1)).isEqualTo(a);
        assertThat(pool.stats().requestedBytes()).isEqualTo(10 * MIB);
        pool.free(a, s1);
        assertThat(pool.stats().requestedBytes()).as("a free gives its request back").isZero();
    }

    @Test
    void aFenceIsNotRecordedWhileACaptureIsLive() {
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        capture = true;
        assertThat(alloc(10 * MIB, s2)).isNotEqualTo(a);
        assertThat(driver.count("eventRecord")).isZero();
        capture = false;
        alloc(10 * MIB, s2);
        assertThat(driver.count("eventRecord")).isEqualTo(1);
        assertThat(alloc(10 * MIB, s2)).as("the fence, recorded after the capture, completed").isEqualTo(a);
    }

    // ---- recordStream -----------------------------------------------------------------------------

    @Test
    void aFreeWaitsForTheEventsOfTheStreamsMarkedAsUsers() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.recordStream(a, s2);
        pool.recordStream(a, s1);
        pool.free(a, s1);
        assertThat(driver.recordedEvents()).as("one event, on the marked stream").singleElement()
                .satisfies(r -> assertThat(r.stream()).isEqualTo(s2));
        assertThat(pool.owns(a)).isFalse();
        assertThat(pool.cachedBytes()).isEqualTo(10 * MIB);
        long b = alloc(10 * MIB, s1);
        assertThat(b).as("pending: not reused, not even on its own stream").isNotEqualTo(a);
        driver.complete(driver.recordedEvents().getFirst().event());
        assertThat(alloc(10 * MIB, s1)).isEqualTo(a);
        // The event went back to the spares: the next marked free records it again.
        pool.recordStream(b, s2);
        pool.free(b, s1);
        assertThat(driver.count("eventCreate")).isEqualTo(1);
        assertThat(driver.recordedEvents()).hasSize(2);
    }

    @Test
    void aMarkOfTheFreeingStreamItselfNeedsNoEvent() {
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.free(a, s2);
        assertThat(driver.count("eventRecord")).isZero();
        assertThat(alloc(10 * MIB, s2)).as("binned on s2 at once").isEqualTo(a);
    }

    @Test
    void aMarkOfTheBlocksOwnStreamCountsWhenItIsFreedOnAnother() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s1);
        pool.free(a, s2);
        assertThat(driver.recordedEvents()).as("the free waits for the marked stream's work")
                .extracting(ScriptedDriver.Recorded::stream).containsExactly(s1);
        assertThat(alloc(10 * MIB, s2)).as("not before s1's work completed").isNotEqualTo(a);
        driver.releaseEvents();
        assertThat(alloc(10 * MIB, s2)).isEqualTo(a);
    }

    @Test
    void severalMarkedStreamsEachGetAnEventAndAllMustComplete() {
        driver.holdEvents();
        long s3 = driver.streamCreate(1);
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.recordStream(a, s3);
        pool.recordStream(a, s3);
        pool.free(a, s1);
        List<ScriptedDriver.Recorded> rs = driver.recordedEvents();
        assertThat(rs).extracting(ScriptedDriver.Recorded::stream).containsExactly(s2, s3);
        driver.complete(rs.get(0).event());
        assertThat(alloc(10 * MIB, s1)).isNotEqualTo(a);
        driver.complete(rs.get(1).event());
        assertThat(alloc(10 * MIB, s1)).isEqualTo(a);
    }

    @Test
    void aFailedRecordLeavesTheBlockLiveAndItsEventsSpare() {
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        driver.failNext("eventRecord", CudaError.INVALID_HANDLE);
        assertThatThrownBy(() -> pool.free(a, s1)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_HANDLE));
        assertThat(pool.owns(a)).isTrue();
        assertThat(pool.stats().allocatedBytes()).isEqualTo(10 * MIB);
        pool.free(a, s1);
        assertThat(driver.count("eventCreate")).as("the spare event was used again").isEqualTo(1);
        assertThat(pool.owns(a)).isFalse();
    }

    @Test
    void aMarkedFreeDuringACaptureRecordsItsEventsOnlyAfterIt() {
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        capture = true;
        pool.free(a, s1);
        assertThat(driver.count("eventRecord")).isZero();
        assertThat(alloc(10 * MIB, s1)).as("still pending during the capture").isNotEqualTo(a);
        capture = false;
        assertThat(alloc(10 * MIB, s1)).as("recorded and completed after the capture").isEqualTo(a);
        assertThat(driver.recordedEvents()).singleElement().satisfies(r -> assertThat(r.stream()).isEqualTo(s2));
    }

    @Test
    void aFailedDeferredRecordKeepsTheRestDeferred() {
        long s3 = driver.streamCreate(1);
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.recordStream(a, s3);
        capture = true;
        pool.free(a, s1);
        capture = false;
        driver.failNext("eventRecord", CudaError.INVALID_HANDLE);
        assertThatThrownBy(() -> alloc(MIB, s1)).isInstanceOf(GpuException.class);
        assertThat(alloc(10 * MIB, s1)).as("both events recorded on the next try").isEqualTo(a);
        assertThat(driver.recordedEvents()).extracting(ScriptedDriver.Recorded::stream).containsExactly(s2, s3);
        assertThat(driver.count("eventCreate")).as("the failed record's event was kept").isEqualTo(2);
    }

    @Test
    void unknownPointersAreInvalidValueNamingTheCall() {
        assertThatThrownBy(() -> pool.free(0x1000, s1)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.operation()).isEqualTo("pool.free");
            assertThat(e.getMessage()).contains("0x1000", "not a live pool block");
        });
        assertThatThrownBy(() -> pool.recordStream(0x1000, s1)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.operation()).isEqualTo("pool.recordStream"));
        assertThatThrownBy(() -> pool.streamOf(0x1000)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.operation()).isEqualTo("pool.streamOf"));
        long a = alloc(64, s2);
        assertThat(pool.owns(a)).isTrue();
        assertThat(pool.owns(a + 512)).isFalse();
        assertThat(pool.streamOf(a)).isEqualTo(s2);
    }

    // ---- out of memory ---------------------------------------------------------------------------

    @Test
    void outOfMemoryFreesTheCacheAndRetriesTheChunk() {
        driver = new ScriptedDriver(32 * MIB);
        pool = new CachingAllocator(driver, () -> false);
        long a = alloc(10 * MIB, 0);
        long b = alloc(10 * MIB, 0);
        pool.free(a, 0);
        pool.free(b, 0);
        long c = alloc(20 * MIB, 0);
        assertThat(driver.allocations()).containsOnlyKeys(c).containsValue(20 * MIB);
        PoolStats st = pool.stats();
        assertThat(st.cacheFlushes()).isEqualTo(1);
        assertThat(st.driverFrees()).isEqualTo(2);
        assertThat(st.reservedBytes()).isEqualTo(20 * MIB);
        assertThat(st.peakReservedBytes()).isEqualTo(20 * MIB);
        assertThat(pool.snapshot().history()).extracting(PoolSnapshot.Event::action)
                .containsSubsequence("chunk_alloc", "alloc", "free", "free", "oom", "chunk_free", "chunk_free", "chunk_alloc", "alloc");
    }

    @Test
    void outOfMemoryRetriesWithJustTheBlockWhenTheUsualChunkDoesNotFit() {
        driver = new ScriptedDriver(16 * MIB);
        pool = new CachingAllocator(driver, () -> false);
        long a = alloc(3 * MIB, 0);
        assertThat(driver.allocations()).containsEntry(a, 3 * MIB);
        assertThat(blocks()).extracting(PoolSnapshot.Block::bytes).containsExactly(3 * MIB);
        assertThat(driver.count("memAlloc")).as("20 MiB, 20 MiB again, then 3 MiB").isEqualTo(3);
    }

    @Test
    void aRequestWithAChunkOfItsOwnIsRetriedOnce() {
        driver = new ScriptedDriver(8 * MIB);
        pool = new CachingAllocator(driver, () -> false);
        assertThatThrownBy(() -> alloc(10 * MIB, 0)).isInstanceOf(GpuException.class);
        assertThat(driver.count("memAlloc")).as("the chunk is the block: tried, then tried once more").isEqualTo(2);
    }

    @Test
    void aListOfExactlyTenSitesIsComplete() {
        driver = new ScriptedDriver(4 * MIB);
        pool = new CachingAllocator(driver, () -> false);
        for (int i = 0; i < 10; i++) {
            pool.alloc(512, 0, "Site" + i + ".java:9", i);
        }
        assertThatThrownBy(() -> alloc(3 * MIB, 0)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.getMessage()).contains("Site9.java:9=512 B;").doesNotContain("more site"));
    }

    @Test
    void outOfMemoryAfterTheRetryNamesTheRequestTheCacheAndTheSites() {
        driver = new ScriptedDriver(24 * MIB);
        pool = new CachingAllocator(driver, () -> false);
        pool.alloc(10 * MIB, 0, "Held.java:1", 0);
        for (int i = 0; i < 11; i++) {
            pool.alloc(512, 0, "Site" + i + ".java:9", i + 1);
        }
        assertThatThrownBy(() -> pool.alloc(13 * MIB, 0, "Here.java:7", 99)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
            assertThat(e.operation()).isEqualTo("pool.alloc");
            assertThat(e.getMessage()).contains("requested " + 13 * MIB + " bytes (" + 13 * MIB + " rounded) at Here.java:7",
                    "the pool reserves " + 12 * MIB + " bytes", (10 * MIB + 11 * 512) + " allocated in 12 block(s), "
                    + (2 * MIB - 11 * 512) + " free;",
                    "Held.java:1=" + 10 * MIB + " B;", "... 2 more site(s);",
                    "the device reports " + (12 * MIB) + " bytes free");
            assertThat(e.getCause()).isInstanceOf(GpuException.class);
        });
        driver.failNext("memAlloc", CudaError.OUT_OF_MEMORY).failNext("memAlloc", CudaError.OUT_OF_MEMORY)
                .failNext("memAlloc", CudaError.OUT_OF_MEMORY).failNext("memGetInfo", CudaError.UNKNOWN);
        assertThatThrownBy(() -> pool.alloc(MIB + 1, 0, "Here.java:8", 100)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.getMessage()).contains("the device reports ? (", "[scripted failure]) bytes free"));
    }

    @Test
    void anErrorOtherThanOutOfMemoryIsNotRetried() {
        driver.failNext("memAlloc", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> alloc(MIB, s1)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        assertThat(pool.stats().cacheFlushes()).isZero();
        driver.failNext("memAlloc", CudaError.OUT_OF_MEMORY).failNext("memAlloc", CudaError.LAUNCH_FAILED);
        assertThatThrownBy(() -> alloc(MIB, s1)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED));
    }

    // ---- releasing ---------------------------------------------------------------------------------

    @Test
    void emptyCacheReturnsOnlyChunksWhoseBlocksAreAllFree() {
        long a = alloc(1000, s1);
        long b = alloc(1000, s1);
        long c = alloc(10 * MIB, s1);
        pool.free(a, s1);
        pool.free(c, s1);
        pool.emptyCache();
        assertThat(driver.allocations()).containsOnlyKeys(a);
        PoolStats st = pool.stats();
        assertThat(st.driverFrees()).isEqualTo(1);
        assertThat(st.cacheFlushes()).isEqualTo(1);
        assertThat(st.reservedBytes()).isEqualTo(2 * MIB);
        pool.free(b, s1);
        pool.emptyCache();
        assertThat(driver.allocations()).isEmpty();
        assertThat(pool.stats().reservedBytes()).isZero();
        assertThat(pool.stats().chunks()).isZero();
        assertThat(pool.stats().peakReservedBytes()).isEqualTo(12 * MIB);
        assertThat(pool.stats().peakAllocatedBytes()).isEqualTo(10 * MIB + 2048);
    }

    @Test
    void emptyCacheWaitsForPendingBlocksAndReturnsThem() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.free(a, s1);
        pool.emptyCache();
        assertThat(driver.count("eventSynchronize")).isEqualTo(1);
        assertThat(driver.allocations()).isEmpty();
    }

    @Test
    void closeReleasesChunksLiveBlocksIncludedAndEveryEvent() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        long b = alloc(12 * MIB, s1);
        long c = alloc(1000, s1);
        pool.recordStream(a, s2);
        pool.free(a, s1);
        pool.free(b, s1);
        alloc(12 * MIB, s2);
        List<String> steps = new ArrayList<>();
        pool.close((what, step) -> {
            steps.add(what.replaceAll("0x[0-9a-f]+", "0x?"));
            step.run();
        });
        assertThat(steps).containsExactly("cuMemFree_v2 pool chunk 0x?", "cuMemFree_v2 pool chunk 0x?",
                "cuMemFree_v2 pool chunk 0x?", "cuMemFree_v2 pool chunk 0x?",
                "cuEventDestroy_v2 pool event", "cuEventDestroy_v2 pool event");
        assertThat(driver.allocations()).isEmpty();
        assertThat(pool.owns(c)).isFalse();
        assertThat(pool.stats().reservedBytes()).isZero();
        assertThat(pool.stats().allocatedBytes()).isZero();
        assertThat(pool.stats().requestedBytes()).isZero();
        assertThat(pool.toString()).isEqualTo("CachingAllocator[reserved=0, allocated=0, chunks=0, live=0]");
        assertThat(pool.stats().largestCachedBlock()).as("no bins are left").isZero();
        steps.clear();
        pool.close((what, step) -> steps.add(what));
        assertThat(steps).as("a second close has nothing left").isEmpty();
    }

    @Test
    void closeDestroysTheSpareEventsToo() {
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.free(a, s1);
        alloc(10 * MIB, s1);
        List<String> steps = new ArrayList<>();
        pool.close((what, step) -> {
            steps.add(what);
            step.run();
        });
        assertThat(steps).filteredOn(w -> w.startsWith("cuEventDestroy")).hasSize(1);
        assertThat(driver.count("eventDestroy")).isEqualTo(1);
        steps.clear();
        pool.close((what, step) -> steps.add(what));
        assertThat(steps).as("the spare event is not destroyed twice").isEmpty();
    }

    @Test
    void closeForgetsTheLanesOfDestroyedStreams() {
        long a = alloc(1000, s1);
        pool.free(a, s1);
        pool.streamDestroyed(s1);
        assertThat(pool.stats().largestCachedBlock()).isEqualTo(2 * MIB);
        pool.close((what, step) -> step.run());
        assertThat(pool.stats().largestCachedBlock()).isZero();
    }

    // ---- destroyed streams ----------------------------------------------------------------------------

    @Test
    void aDestroyedStreamsFreeBlocksAreWaitedForAndServeOtherStreams() {
        long a = alloc(10 * MIB, s1);
        long keep = alloc(1000, s1);
        pool.free(a, s1);
        pool.streamDestroyed(s1);
        assertThat(driver.count("streamSynchronize")).isEqualTo(1);
        assertThat(pool.streamOf(keep)).as("re-owned by the legacy stream").isZero();
        driver.streamDestroy(s1);
        assertThat(alloc(10 * MIB, s2)).isEqualTo(a);
        assertThat(driver.count("eventRecord")).as("no fence on the dead handle").isZero();
        // What remains of the retired lane's small chunk still serves, split from it.
        pool.free(keep, 0);
        assertThat(pool.stats().chunks()).isEqualTo(2);
    }

    @Test
    void whatIsSplitOffABlockOfADestroyedStreamStaysInItsRetiredLane() {
        long a = alloc(1000, s1);
        pool.free(a, s1);
        pool.streamDestroyed(s1);
        driver.streamDestroy(s1);
        long b = alloc(1000, s2);
        assertThat(b).isEqualTo(a);
        assertThat(alloc(1000, s2)).as("the rest, safe like the block it was cut from").isEqualTo(a + 1024);
        assertThat(driver.count("memAlloc")).isEqualTo(1);
        assertThat(driver.count("eventRecord")).isZero();
    }

    @Test
    void aDestroyedStreamHoldingNothingNeedsNoSyncAndItsFenceEventIsKept() {
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        alloc(10 * MIB, s2);
        pool.streamSynchronized(s1);
        alloc(10 * MIB, s2);
        pool.streamDestroyed(s2);
        assertThat(driver.count("streamSynchronize")).as("s2's blocks are live on s2: waited for").isEqualTo(1);
        pool.streamDestroyed(12345);
        long s3 = driver.streamCreate(1);
        long b = alloc(1000, s3);
        pool.free(b, s3);
        pool.emptyCache();
        pool.streamDestroyed(s3);
        assertThat(driver.count("streamSynchronize")).as("s3 holds nothing").isEqualTo(1);
    }

    @Test
    void aStreamDestroyedWithAFenceInFlightGivesItsEventToTheSpares() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        alloc(10 * MIB, s2);
        pool.emptyCache();
        pool.streamDestroyed(s1);
        assertThat(driver.count("streamSynchronize")).isZero();
        long b = alloc(10 * MIB, s2);
        pool.recordStream(b, s1 + 1000);
        assertThat(driver.count("eventCreate")).isEqualTo(1);
        List<String> steps = new ArrayList<>();
        pool.close((what, step) -> steps.add(what));
        assertThat(steps).filteredOn(w -> w.startsWith("cuEventDestroy")).hasSize(1);
    }

    @Test
    void aDestroyedMarkedStreamIsDroppedFromLiveBlocksAndRecordedForDeferredFrees() {
        long s3 = driver.streamCreate(1);
        long a = alloc(10 * MIB, s1);
        long b = alloc(12 * MIB, s1);
        pool.recordStream(a, s2);
        pool.recordStream(b, s3);
        capture = true;
        pool.free(b, s1);
        capture = false;
        pool.streamDestroyed(s3);
        assertThat(driver.recordedEvents()).as("the deferred event, while the handle lives").singleElement()
                .satisfies(r -> assertThat(r.stream()).isEqualTo(s3));
        pool.streamDestroyed(s2);
        pool.free(a, s1);
        assertThat(driver.recordedEvents()).as("the mark was spent by the destroy's sync").hasSize(1);
        assertThat(alloc(10 * MIB, s1)).isEqualTo(a);
    }

    @Test
    void aDeferredFreeRecordsOnlyTheDestroyedStreamsEventAndKeepsTheRest() {
        long s3 = driver.streamCreate(1);
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.recordStream(a, s3);
        capture = true;
        pool.free(a, s1);
        pool.streamDestroyed(s2);
        assertThat(driver.recordedEvents()).extracting(ScriptedDriver.Recorded::stream).containsExactly(s2);
        assertThat(alloc(10 * MIB, s1)).as("s3's record is still deferred").isNotEqualTo(a);
        capture = false;
        assertThat(alloc(10 * MIB, s1)).isEqualTo(a);
        assertThat(driver.recordedEvents()).extracting(ScriptedDriver.Recorded::stream).containsExactly(s2, s3);
    }

    @Test
    void aDeferredFreeWhoseLastStreamIsDestroyedIsBinnedEvenDuringTheCapture() {
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        capture = true;
        pool.free(a, s1);
        pool.streamDestroyed(s2);
        assertThat(alloc(10 * MIB, s1)).as("nothing is deferred any more, and its event completed").isEqualTo(a);
    }

    @Test
    void aStreamDestroyedDuringACaptureIsNotSynchronized() {
        long a = alloc(10 * MIB, s1);
        pool.free(a, s1);
        capture = true;
        pool.streamDestroyed(s1);
        assertThat(driver.count("streamSynchronize")).isZero();
        assertThat(alloc(10 * MIB, s2)).as("not known safe: its free was not waited for").isNotEqualTo(a);
        capture = false;
        pool.deviceSynchronized();
        assertThat(alloc(10 * MIB, s2)).isEqualTo(a);
    }

    @Test
    void aPendingBlockOfADestroyedStreamIsReownedByTheLegacyStream() {
        driver.holdEvents();
        long a = alloc(10 * MIB, s1);
        pool.recordStream(a, s2);
        pool.free(a, s1);
        pool.streamDestroyed(s1);
        driver.releaseEvents();
        assertThat(alloc(10 * MIB, 0)).as("binned on the legacy stream's lane").isEqualTo(a);
    }

    // ---- statistics ------------------------------------------------------------------------------------

    @Test
    void statsAndSnapshotNameBlocksBySiteIndexAndStream() {
        long a = pool.alloc(1000, s1, "A.java:1", 7);
        pool.alloc(3000, s2, "B.java:2", 8);
        pool.alloc(10, s2, "A.java:1", 9);
        PoolStats st = pool.stats();
        assertThat(st.kind()).isEqualTo("caching");
        assertThat(st.bySite()).containsExactlyInAnyOrderEntriesOf(java.util.Map.of("A.java:1", 1536L, "B.java:2", 3072L));
        assertThat(st.liveBlocks()).isEqualTo(3);
        PoolSnapshot snap = pool.snapshot();
        assertThat(snap.kind()).isEqualTo("caching");
        PoolSnapshot.Block first = snap.chunks().stream().flatMap(c -> c.blocks().stream())
                .filter(x -> x.ptr() == a).findFirst().orElseThrow();
        assertThat(first).isEqualTo(new PoolSnapshot.Block(a, 1024, true, 1000, "A.java:1", 7, s1));
        assertThat(snap.chunks()).as("s2 took the rest of s1's fresh chunk").extracting(PoolSnapshot.Chunk::stream)
                .containsExactly(s1);
        pool.free(a, s2);
        PoolSnapshot.Block freed = pool.snapshot().chunks().getFirst().blocks().getFirst();
        assertThat(freed).isEqualTo(new PoolSnapshot.Block(a, 1024, false, 0, "", -1, s2));
        assertThat(pool.snapshot().history().getLast()).satisfies(e -> {
            assertThat(e.nanos()).as("nanoseconds since the pool was made").isBetween(0L, System.nanoTime() - t0);
            assertThat(e.action()).isEqualTo("free");
            assertThat(e.ptr()).isEqualTo(a);
            assertThat(e.bytes()).isEqualTo(1024);
            assertThat(e.stream()).isEqualTo(s2);
            assertThat(e.site()).isEqualTo("A.java:1");
            assertThat(e.reserved()).isEqualTo(2 * MIB);
            assertThat(e.allocated()).isEqualTo(3584);
        });
    }

    @Test
    void theHistoryKeepsTheLatestEventsOldestFirst() {
        for (int i = 0; i < PoolSnapshot.HISTORY + 10; i++) {
            pool.free(pool.alloc(512, s1, "S" + i, i), s1);
        }
        List<PoolSnapshot.Event> h = pool.snapshot().history();
        assertThat(h).hasSize(PoolSnapshot.HISTORY);
        assertThat(h.getLast().site()).isEqualTo("S" + (PoolSnapshot.HISTORY + 9));
        assertThat(h.getLast().action()).isEqualTo("free");
        assertThat(h.getFirst().nanos()).isLessThanOrEqualTo(h.getLast().nanos());
        assertThat(h.getLast().nanos()).as("nanoseconds since the pool was made").isBetween(0L, System.nanoTime() - t0);
    }
}
