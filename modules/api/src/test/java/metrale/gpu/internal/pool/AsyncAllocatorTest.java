// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.PoolStats;
import metrale.gpu.internal.ScriptedDriver;
import metrale.gpu.spi.Driver;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * CUDA's stream-ordered allocator behind the pool's API, over the scripted driver: the release
 * threshold, the out-of-memory trim and retry, {@code recordStream} as an event the freeing
 * stream waits for, frees deferred past a capture, destroyed streams and close.
 */
class AsyncAllocatorTest {

    private static final long MIB = 1 << 20;

    private ScriptedDriver driver;
    private boolean capture;
    private AsyncAllocator pool;
    private long s1;
    private long s2;

    @BeforeEach
    void open() {
        driver = new ScriptedDriver(64 * MIB).withMemPools();
        pool = new AsyncAllocator(driver, () -> capture);
        s1 = driver.streamCreate(1);
        s2 = driver.streamCreate(1);
    }

    /** {@return the calls since the first of {@code from}} */
    private List<String> callsFrom(String from) {
        List<String> all = driver.calls();
        return all.subList(all.lastIndexOf(from), all.size());
    }

    @Test
    void aDriverWithoutMemoryPoolsIsRefusedNamingTheOtherAllocator() {
        assertThatThrownBy(() -> new AsyncAllocator(new ScriptedDriver(), () -> false))
                .isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.NOT_SUPPORTED);
                    assertThat(e.getMessage()).contains("the scripted driver has no stream-ordered allocator", "allocator=caching");
                });
    }

    @Test
    void theReleaseThresholdIsRaisedSoFreedMemoryStaysCached() {
        assertThat(driver.calls()).contains("memPoolSetAttribute");
        assertThat(pool.kind()).isEqualTo("cuda");
    }

    @Test
    void blocksAreTheDriversAndStatsComeFromThePoolsAttributes() {
        long a = pool.alloc(1000, s1, "A.java:1", 0);
        long b = pool.alloc(3000, s2, "B.java:2", 1);
        assertThat(pool.owns(a)).isTrue();
        assertThat(pool.owns(a + 1)).isFalse();
        assertThat(pool.streamOf(b)).isEqualTo(s2);
        PoolStats st = pool.stats();
        assertThat(st.kind()).isEqualTo("cuda");
        assertThat(st.reservedBytes()).isEqualTo(4000);
        assertThat(st.allocatedBytes()).isEqualTo(4000);
        assertThat(st.requestedBytes()).isEqualTo(4000);
        assertThat(st.peakReservedBytes()).isEqualTo(4000);
        assertThat(st.liveBlocks()).isEqualTo(2);
        assertThat(st.allocs()).isEqualTo(2);
        assertThat(st.driverAllocs()).isEqualTo(2);
        assertThat(st.bySite()).containsEntry("A.java:1", 1000L).containsEntry("B.java:2", 3000L);
        pool.free(a, s1);
        assertThat(pool.stats().driverFrees()).isEqualTo(1);
        assertThat(pool.stats().requestedBytes()).isEqualTo(3000);
        assertThat(pool.stats().peakAllocatedBytes()).isEqualTo(4000);
        assertThat(pool.stats().reservedBytes()).as("CUDA's pool keeps what was freed").isEqualTo(4000);
        assertThat(pool.stats().allocatedBytes()).isEqualTo(3000);
        assertThat(pool.stats().cachedBytes()).isEqualTo(1000);
        assertThat(pool.cachedBytes()).isEqualTo(1000);
        pool.emptyCache();
        assertThat(pool.cachedBytes()).isZero();
        assertThat(pool.snapshot().chunks()).isEmpty();
        assertThat(pool.snapshot().history()).extracting(e -> e.action()).containsExactly("alloc", "alloc", "free");
        assertThatThrownBy(() -> pool.free(a, s1)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.operation()).isEqualTo("pool.free");
        });
        assertThatThrownBy(() -> pool.streamOf(a)).isInstanceOf(GpuException.class).hasMessageContaining("not a live pool block");
    }

    @Test
    void outOfMemoryTrimsThePoolAndRetriesOnce() {
        driver.failNext("memAllocAsync", CudaError.OUT_OF_MEMORY);
        long a = pool.alloc(MIB, s1, "A.java:1", 0);
        assertThat(pool.owns(a)).isTrue();
        assertThat(callsFrom("ctxSynchronize")).startsWith("ctxSynchronize", "memPoolTrimTo", "memAllocAsync");
        assertThat(pool.stats().cacheFlushes()).isEqualTo(1);
        assertThat(pool.snapshot().history()).extracting(e -> e.action()).containsExactly("oom", "alloc");
    }

    @Test
    void outOfMemoryAgainNamesThePoolAndTheSites() {
        pool.alloc(MIB, s1, "Held.java:3", 0);
        assertThatThrownBy(() -> pool.alloc(100 * MIB, s1, "Here.java:5", 1)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
            assertThat(e.operation()).isEqualTo("pool.alloc");
            assertThat(e.getMessage()).contains("requested " + 100 * MIB + " bytes at Here.java:5 after trimming the pool",
                    "CUDA's pool reserves " + MIB + " bytes", MIB + " allocated in 1 block(s)", "Held.java:3=" + MIB + " B;",
                    "the device reports " + 63 * MIB + " bytes free");
        });
        driver.failNext("memAllocAsync", CudaError.OUT_OF_MEMORY).failNext("memAllocAsync", CudaError.OUT_OF_MEMORY)
                .failNext("memGetInfo", CudaError.UNKNOWN);
        assertThatThrownBy(() -> pool.alloc(1, s1, "Here.java:6", 2)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.getMessage()).contains("the device reports ? ("));
    }

    @Test
    void anErrorOtherThanOutOfMemoryIsNotRetried() {
        driver.failNext("memAllocAsync", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> pool.alloc(1, s1, "s", 0)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        assertThat(driver.count("memPoolTrimTo")).isZero();
        driver.failNext("memAllocAsync", CudaError.OUT_OF_MEMORY).failNext("memAllocAsync", CudaError.LAUNCH_FAILED);
        assertThatThrownBy(() -> pool.alloc(1, s1, "s", 0)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED));
    }

    @Test
    void aMarkedFreeWaitsOnTheFreeingStreamForAnEventOfEachMarkedStream() {
        long a = pool.alloc(MIB, s1, "s", 0);
        pool.recordStream(a, s2);
        pool.recordStream(a, s2);
        pool.recordStream(a, s1);
        pool.free(a, s1);
        assertThat(callsFrom("eventRecord")).containsExactly("eventRecord", "streamWaitEvent", "memFreeAsync");
        assertThat(driver.recordedEvents()).singleElement().satisfies(r -> assertThat(r.stream()).isEqualTo(s2));
        long b = pool.alloc(MIB, s1, "s", 1);
        pool.recordStream(b, s2);
        pool.free(b, s1);
        assertThat(driver.count("eventCreate")).as("the event is reused at once").isEqualTo(1);
    }

    @Test
    void aMarkOfTheBlocksOwnStreamCountsWhenItIsFreedOnAnother() {
        long a = pool.alloc(MIB, s1, "s", 0);
        pool.recordStream(a, s1);
        pool.free(a, s2);
        assertThat(driver.recordedEvents()).as("s2's free waits for the marked stream's work")
                .extracting(ScriptedDriver.Recorded::stream).containsExactly(s1);
    }

    @Test
    void aMarkedFreeDuringACaptureIsDeferredUntilNoCaptureIsLive() {
        long a = pool.alloc(MIB, s1, "s", 0);
        pool.recordStream(a, s2);
        capture = true;
        pool.free(a, s1);
        assertThat(pool.owns(a)).isFalse();
        assertThat(driver.count("memFreeAsync")).isZero();
        assertThat(driver.count("eventRecord")).isZero();
        long b = pool.alloc(MIB, s1, "s", 1);
        assertThat(driver.count("memFreeAsync")).as("still during the capture").isZero();
        pool.emptyCache();
        assertThat(driver.count("memFreeAsync")).isZero();
        capture = false;
        long c0 = pool.alloc(MIB, s1, "s", 9);
        assertThat(driver.count("memFreeAsync")).as("flushed by the next allocation").isEqualTo(1);
        pool.free(c0, s1);
        pool.free(b, s1);
        assertThat(driver.count("memFreeAsync")).isEqualTo(3);
        assertThat(driver.allocations()).isEmpty();
        // An unmarked free during a capture is not deferred.
        long c = pool.alloc(MIB, s1, "s", 2);
        capture = true;
        pool.free(c, s1);
        assertThat(driver.count("memFreeAsync")).isEqualTo(4);
    }

    @Test
    void theNextFreeAfterTheCaptureDoesTheDeferredFreeFirst() {
        long a = pool.alloc(MIB, s1, "s", 0);
        long b = pool.alloc(MIB, s1, "s", 1);
        pool.recordStream(a, s2);
        capture = true;
        pool.free(a, s1);
        capture = false;
        pool.free(b, s1);
        assertThat(driver.count("memFreeAsync")).isEqualTo(2);
        assertThat(driver.allocations()).isEmpty();
    }

    @Test
    void aDeferredFreeThatFailsStaysDeferred() {
        long a = pool.alloc(MIB, s1, "s", 0);
        pool.recordStream(a, s2);
        capture = true;
        pool.free(a, s1);
        capture = false;
        driver.failNext("memFreeAsync", CudaError.INVALID_VALUE);
        assertThatThrownBy(pool::emptyCache).isInstanceOf(GpuException.class);
        pool.emptyCache();
        assertThat(driver.allocations()).isEmpty();
    }

    @Test
    void aFailedRecordGivesTheEventBack() {
        long a = pool.alloc(MIB, s1, "s", 0);
        pool.recordStream(a, s2);
        driver.failNext("eventRecord", CudaError.INVALID_HANDLE);
        assertThatThrownBy(() -> pool.free(a, s1)).isInstanceOf(GpuException.class);
        assertThat(pool.owns(a)).as("live: the free was refused").isTrue();
        pool.free(a, s1);
        assertThat(driver.count("eventCreate")).isEqualTo(1);
    }

    @Test
    void emptyCacheWaitsAndTrims() {
        pool.emptyCache();
        assertThat(callsFrom("ctxSynchronize")).containsExactly("ctxSynchronize", "memPoolTrimTo");
        assertThat(pool.stats().cacheFlushes()).isEqualTo(1);
    }

    @Test
    void aDestroyedStreamsLiveBlocksAreWaitedForAndReownedByTheLegacyStream() {
        long a = pool.alloc(MIB, s1, "s", 0);
        long b = pool.alloc(MIB, s2, "s", 1);
        pool.recordStream(b, s1);
        pool.streamDestroyed(s1);
        assertThat(driver.count("streamSynchronize")).isEqualTo(1);
        assertThat(pool.streamOf(a)).isZero();
        pool.free(b, s2);
        assertThat(driver.count("eventRecord")).as("the mark on the dead stream was spent").isZero();
        pool.streamDestroyed(s2);
        pool.streamDestroyed(12345);
        assertThat(driver.count("streamSynchronize")).as("nothing held: no waits").isEqualTo(1);
        long s3 = driver.streamCreate(1);
        long s4 = driver.streamCreate(1);
        long c = pool.alloc(MIB, s3, "s", 2);
        pool.recordStream(c, s4);
        pool.streamDestroyed(s2);
        assertThat(driver.count("streamSynchronize")).as("a block marked for another stream does not hold this one").isEqualTo(1);
        pool.streamDestroyed(s4);
        assertThat(driver.count("streamSynchronize")).as("the marked stream does").isEqualTo(2);
        pool.streamSynchronized(s1);
        pool.deviceSynchronized();
    }

    @Test
    void aDestroyedStreamOrdersTheDeferredFreesThatNameIt() {
        long s3 = driver.streamCreate(1);
        long a = pool.alloc(MIB, s1, "s", 0);
        pool.recordStream(a, s2);
        pool.recordStream(a, s3);
        long b = pool.alloc(MIB, s3, "s", 1);
        pool.recordStream(b, s2);
        capture = true;
        pool.free(a, s1);
        pool.free(b, s3);
        // s2 is a marked user of both: its work so far is ordered before each free now.
        pool.streamDestroyed(s2);
        assertThat(driver.recordedEvents()).extracting(ScriptedDriver.Recorded::stream).containsExactly(s2, s2);
        // b was to be freed on s3: it is freed on the legacy stream once s3's work is done.
        pool.streamDestroyed(s3);
        assertThat(driver.count("streamSynchronize")).isEqualTo(1);
        capture = false;
        pool.emptyCache();
        assertThat(driver.recordedEvents()).as("a's remaining mark, s3, was ordered at its destroy")
                .extracting(ScriptedDriver.Recorded::stream).containsExactly(s2, s2, s3);
        assertThat(driver.count("streamWaitEvent")).as("each record is waited for by the freeing stream").isEqualTo(3);
        assertThat(driver.count("eventCreate")).as("one event, given back after each wait").isEqualTo(1);
        assertThat(driver.allocations()).isEmpty();
    }

    @Test
    void closeFreesDeferredAndLiveBlocksTrimsResetsTheThresholdAndDestroysTheEvents() {
        long a = pool.alloc(MIB, s1, "s", 0);
        long b = pool.alloc(MIB, s1, "s", 1);
        pool.recordStream(a, s2);
        capture = true;
        pool.free(a, s1);
        capture = false;
        List<String> steps = new ArrayList<>();
        pool.close((what, step) -> {
            steps.add(what.replaceAll("0x[0-9a-f]+", "0x?"));
            step.run();
        });
        assertThat(steps).containsExactly("cuMemFreeAsync 0x?", "cuMemFreeAsync 0x?", "cuMemPoolTrimTo",
                "cuMemPoolSetAttribute (release threshold)", "cuEventDestroy_v2 pool event");
        assertThat(driver.allocations()).isEmpty();
        assertThat(pool.owns(b)).isFalse();
        assertThat(driver.count("memPoolSetAttribute")).as("raised at creation, reset at close").isEqualTo(2);
        assertThat(driver.count("eventDestroy")).isEqualTo(1);
        steps.clear();
        pool.close((what, step) -> {
            steps.add(what);
            step.run();
        });
        assertThat(steps).as("a second close has nothing left to free").containsExactly("cuMemPoolTrimTo",
                "cuMemPoolSetAttribute (release threshold)");
    }

    @Test
    void theReservedBytesAreReadFromThePool() {
        pool.alloc(5 * MIB, s1, "s", 0);
        assertThat(pool.cachedBytes()).isZero();
        assertThat(driver.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT)).isEqualTo(5 * MIB);
    }
}
