// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.MemoryPool;
import metrale.gpu.PoolRace;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * The memory pool ({@link Gpu#pool()}): blocks on the ledger with their sites, red zones inside
 * the pool, refusal during capture, out of memory after freeing the cache, stream-ordered reuse
 * across streams and {@code recordStream}, statistics and the snapshot.
 *
 * <p>A backend's subclass runs it for one allocator: {@link #allocator()} is {@code caching} (the
 * runtime's own, the default here) or {@code cuda} ({@code cuMemAllocAsync}). Tests of the caching
 * allocator's own reuse decisions run only for {@code caching}.
 */
public abstract class PoolContract extends GpuContract {

    /** A size that gets its own chunk in the caching allocator (at least 10 MiB, a multiple of 2 MiB). */
    protected static final long BIG = 12L << 20;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected PoolContract() {
    }

    /** {@return {@code caching} or {@code cuda}: the allocator under test} */
    protected String allocator() {
        return "caching";
    }

    /**
     * {@return whether the backend reports stream-order races ({@link MemoryPool#races()})} True on
     * the simulator, which sees its pending work; CUDA cannot.
     */
    protected boolean detectsRaces() {
        return false;
    }

    /** {@return the builder with this contract's allocator} */
    private GpuBuilder pooled(GpuBuilder b) {
        return b.allocator(allocator());
    }

    private boolean caching() {
        return "caching".equals(allocator());
    }

    private MemoryPool pool() {
        reopenOnce();
        return gpu.pool();
    }

    private boolean reopened;

    private void reopenOnce() {
        if (!reopened) {
            reopen(this::pooled);
            reopened = true;
        }
    }

    /** A block is a ledger entry with its call site, creation index and size; a free takes it off. */
    @Test
    public void blocksAreOnTheLedgerWithTheirSite() {
        MemoryPool pool = pool();
        assertThat(pool.kind()).isEqualTo(allocator());
        Stream s = gpu.createStream();
        DevicePtr p = pool.alloc(1000, s); String site = here();
        assertThat(gpu.liveAllocations()).singleElement().satisfies(a -> {
            assertThat(a.ptr()).isEqualTo(p);
            assertThat(a.bytes()).isEqualTo(1000);
            assertThat(a.site()).isEqualTo(site);
            assertThat(a.managed()).isFalse();
        });
        assertThat(gpu.liveBytes()).isEqualTo(1000);
        assertThat(gpu.allocReport(10, 0)).contains(site);
        assertThat(p.address() % 256).as("alignment").isZero();
        pool.free(p, s);
        assertThat(gpu.liveAllocations()).isEmpty();
        GpuException e = assertCuda(CudaError.INVALID_VALUE, () -> pool.free(p, s));
        assertThat(e.getMessage()).contains("already freed").contains(site);
        gpu.destroyStream(s);
    }

    /** Data written to a block reads back; the block serves kernels on its stream. */
    @Test
    public void blocksHoldData() {
        MemoryPool pool = pool();
        Stream s = gpu.createStream();
        DevicePtr p = pool.alloc(4 * 300, s);
        fill(p, 2.5f, 300, s);
        gpu.synchronize(s);
        assertThat(readFloats(p, 300)).containsOnly(2.5f);
        pool.free(p, s);
        gpu.destroyStream(s);
    }

    /** {@link Gpu#free(DevicePtr)} frees a block on its own stream; {@link Gpu#sweepUnreleased()} counts blocks. */
    @Test
    public void gpuFreeAndSweepTakeBlocks() {
        MemoryPool pool = pool();
        DevicePtr a = pool.alloc(512, Stream.DEFAULT);
        DevicePtr b = pool.alloc(4096, Stream.DEFAULT);
        DevicePtr c = gpu.alloc(256);
        gpu.free(a);
        assertThat(gpu.liveAllocCount()).isEqualTo(2);
        assertThat(gpu.sweepUnreleased()).isEqualTo(2);
        assertThat(gpu.liveAllocations()).isEmpty();
        assertThat(pool.stats().liveBlocks()).isZero();
        assertCuda(CudaError.INVALID_VALUE, () -> pool.free(b, Stream.DEFAULT));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(c));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(c, 0, 256));
    }

    /** The pool refuses what it did not allocate, and the ledger keeps it. */
    @Test
    public void foreignPointersAreRefused() {
        MemoryPool pool = pool();
        DevicePtr plain = gpu.allocArena(4096);
        assertLedgerUnchanged(() -> assertCuda(CudaError.INVALID_VALUE, () -> pool.free(plain, Stream.DEFAULT)));
        gpu.freeArena(plain);
        DevicePtr p = pool.alloc(2048, Stream.DEFAULT);
        assertLedgerUnchanged(() -> assertCuda(CudaError.INVALID_VALUE,
                () -> pool.free(new DevicePtr(p.address() + 512), Stream.DEFAULT)));
        assertThat(assertCuda(CudaError.INVALID_VALUE, () -> pool.alloc(0, Stream.DEFAULT)).getMessage()).contains("bytes=0");
        pool.free(p);
    }

    /** With the pool as the allocator, {@link Gpu#alloc(long)} takes pool blocks on the default stream. */
    @Test
    public void theAllocatorOptionRoutesAlloc() {
        reopenOnce();
        assertThat(gpu.options().allocator()).isEqualTo(allocator());
        DevicePtr p = gpu.alloc(777); String site = here();
        assertThat(gpu.pool().stats().liveBlocks()).isEqualTo(1);
        assertThat(gpu.liveAllocations()).singleElement().extracting(Allocation::site).isEqualTo(site);
        assertThat(gpu.pool().stats().bySite()).containsKey(site);
        gpu.free(p);
        assertThat(gpu.pool().stats().liveBlocks()).isZero();
        assertThat(gpu.liveAllocations()).isEmpty();
    }

    /** A block freed on a stream is reused at once on that stream, without a driver call. */
    @Test
    public void sameStreamReuseIsImmediate() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream s = gpu.createStream();
        DevicePtr p = pool.alloc(BIG, s);
        spin(100, s);
        pool.free(p, s);
        long driverAllocs = pool.stats().driverAllocs();
        DevicePtr q = pool.alloc(BIG, s);
        assertThat(q).as("reused on its own stream").isEqualTo(p);
        assertThat(pool.stats().driverAllocs()).isEqualTo(driverAllocs);
        assertThat(pool.stats().hits()).isEqualTo(1);
        pool.free(q, s);
        gpu.synchronize(s);
        gpu.destroyStream(s);
    }

    /**
     * Another stream does not get a block while the freeing stream's work before the free may
     * still run; after the host waited for that stream, it does.
     */
    @Test
    public void crossStreamReuseWaitsForTheFreeingStream() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream s1 = gpu.createStream();
        Stream s2 = gpu.createStream();
        DevicePtr p = pool.alloc(BIG, s1);
        spin(300, s1);
        addI32(p, 1, 16, s1);
        pool.free(p, s1);
        DevicePtr q = pool.alloc(BIG, s2);
        assertThat(q).as("not reused while s1 may still use it").isNotEqualTo(p);
        assertThat(pool.stats().driverAllocs()).isEqualTo(2);
        DevicePtr q2 = null;
        if (observableAsync()) {
            // A second miss queries the fence the first recorded and finds it incomplete; only where
            // s1's work is known not to have run can that be asserted. q2 stays live, so the reuse
            // below still has only p to take.
            q2 = pool.alloc(BIG, s2);
            assertThat(q2).as("not reused on a second miss while s1 may still use it").isNotEqualTo(p);
            assertThat(pool.stats().driverAllocs()).isEqualTo(3);
        }
        long driverAllocs = pool.stats().driverAllocs();
        gpu.synchronize(s1);
        DevicePtr r = pool.alloc(BIG, s2);
        assertThat(r).as("reused once s1 was waited for").isEqualTo(p);
        assertThat(pool.stats().driverAllocs()).isEqualTo(driverAllocs);
        if (detectsRaces()) {
            assertThat(pool.races()).isEmpty();
        }
        pool.free(q, s2);
        pool.free(r, s2);
        if (q2 != null) {
            pool.free(q2, s2);
        }
        gpu.synchronize();
        gpu.destroyStream(s1);
        gpu.destroyStream(s2);
    }

    /** A block marked with {@code recordStream} waits for that stream's work before any reuse. */
    @Test
    public void recordStreamDelaysReuse() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream s1 = gpu.createStream();
        Stream s2 = gpu.createStream();
        DevicePtr p = pool.alloc(BIG, s1);
        gpu.memsetAsync(p, 0, 64, s1);
        gpu.synchronize(s1);
        spin(300, s2);
        addI32(p, 1, 16, s2);
        pool.recordStream(p, s2);
        pool.free(p, s1);
        DevicePtr q = pool.alloc(BIG, s1);
        assertThat(q).as("not reused while s2 may still use it").isNotEqualTo(p);
        gpu.synchronize();
        DevicePtr r = pool.alloc(BIG, s1);
        assertThat(r).as("reused once s2's work completed").isEqualTo(p);
        assertThat(readInts(r, 16)).containsOnly(1);
        if (detectsRaces()) {
            assertThat(pool.races()).isEmpty();
        }
        pool.free(q);
        pool.free(r);
        gpu.synchronize();
        gpu.destroyStream(s1);
        gpu.destroyStream(s2);
    }

    /**
     * A block freed on its stream without {@code recordStream} for another stream that still
     * uses it is reused on the freeing stream at once: on a backend that sees its pending work,
     * that reuse is reported as a race naming both sites and the unordered work.
     */
    @Test
    public void aFreeWithoutRecordStreamIsARace() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream s1 = gpu.createStream();
        Stream s2 = gpu.createStream();
        DevicePtr p = pool.alloc(BIG, s1); String first = here();
        gpu.memsetAsync(p, 0, 64, s1);
        gpu.synchronize(s1);
        spin(300, s2);
        addI32(p, 1, 16, s2);
        pool.free(p, s1); String freed = here();
        DevicePtr q = pool.alloc(BIG, s1); String second = here();
        assertThat(q).isEqualTo(p);
        if (detectsRaces()) {
            List<PoolRace> races = pool.races();
            assertThat(races).singleElement().satisfies(r -> {
                assertThat(r.ptr()).isEqualTo(q);
                assertThat(r.site()).isEqualTo(second);
                assertThat(r.stream()).isEqualTo(s1);
                assertThat(r.previous()).contains(first).contains(freed);
                assertThat(r.unorderedWith()).contains("add_i32");
                assertThat(r.toString()).contains(first).contains(second).contains("recordStream");
            });
        } else {
            assertThat(pool.races()).isEmpty();
        }
        gpu.synchronize();
        pool.free(q, s1);
        gpu.destroyStream(s1);
        gpu.destroyStream(s2);
    }

    /** Work ordered by an event before the free is no race. */
    @Test
    public void anEventWaitOrdersTheReuse() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream s1 = gpu.createStream();
        Stream s2 = gpu.createStream();
        Event done = gpu.createEvent();
        DevicePtr p = pool.alloc(BIG, s1);
        gpu.memsetAsync(p, 0, 64, s1);
        gpu.synchronize(s1);
        addI32(p, 1, 16, s2);
        gpu.recordEvent(done, s2);
        gpu.streamWaitEvent(s1, done);
        pool.free(p, s1);
        DevicePtr q = pool.alloc(BIG, s1);
        assertThat(q).isEqualTo(p);
        assertThat(pool.races()).isEmpty();
        gpu.synchronize();
        pool.free(q);
        gpu.destroyEvent(done);
        gpu.destroyStream(s1);
        gpu.destroyStream(s2);
    }

    /** A steady-state step allocates without a driver call once the pool is warm. */
    @Test
    public void aSteadyStateStepCallsNoDriverAllocation() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream s = gpu.createStream();
        long[] sizes = {4096, 1 << 20, 3 << 20, 256, BIG};
        long afterFirst = -1;
        for (int step = 0; step < 20; step++) {
            DevicePtr[] ps = new DevicePtr[sizes.length];
            for (int i = 0; i < sizes.length; i++) {
                ps[i] = pool.alloc(sizes[i], s);
            }
            for (DevicePtr p : ps) {
                pool.free(p, s);
            }
            if (step == 0) {
                afterFirst = pool.stats().driverAllocs();
            }
        }
        PoolStats st = pool.stats();
        assertThat(st.driverAllocs()).isEqualTo(afterFirst);
        assertThat(st.allocs()).isEqualTo(20L * sizes.length);
        assertThat(st.hits()).isGreaterThanOrEqualTo(19L * sizes.length);
        gpu.synchronize();
        gpu.destroyStream(s);
    }

    /** Neighbouring free blocks coalesce: a chunk cut into pieces serves one large block again. */
    @Test
    public void freeBlocksCoalesce() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        DevicePtr[] ps = new DevicePtr[4];
        for (int i = 0; i < ps.length; i++) {
            ps[i] = pool.alloc(256 << 10, Stream.DEFAULT);
        }
        long chunks = pool.stats().chunks();
        for (int i : new int[] {1, 3, 0, 2}) {
            pool.free(ps[i]);
        }
        PoolStats st = pool.stats();
        assertThat(st.fragmentation()).as("one free block per chunk").isZero();
        DevicePtr whole = pool.alloc(1 << 20, Stream.DEFAULT);
        assertThat(whole).isEqualTo(ps[0]);
        assertThat(pool.stats().chunks()).isEqualTo(chunks);
        pool.free(whole);
    }

    /** Statistics count reserved, allocated and peak bytes and sites; the snapshot renders as JSON and SVG. */
    @Test
    public void statisticsAndSnapshot() {
        MemoryPool pool = pool();
        DevicePtr a = pool.alloc(3000, Stream.DEFAULT); String site = here();
        DevicePtr b = pool.alloc(BIG, Stream.DEFAULT);
        PoolStats st = pool.stats();
        assertThat(st.kind()).isEqualTo(allocator());
        assertThat(st.liveBlocks()).isEqualTo(2);
        assertThat(st.requestedBytes()).isEqualTo(3000 + BIG);
        assertThat(st.allocatedBytes()).isGreaterThanOrEqualTo(3000 + BIG);
        assertThat(st.reservedBytes()).isGreaterThanOrEqualTo(st.allocatedBytes());
        assertThat(st.peakAllocatedBytes()).isGreaterThanOrEqualTo(st.allocatedBytes());
        assertThat(st.bySite()).containsKey(site);
        assertThat(st.driverAllocs()).isPositive();
        pool.free(b);
        assertThat(pool.stats().peakAllocatedBytes()).isGreaterThanOrEqualTo(st.allocatedBytes());
        PoolSnapshot snap = pool.snapshot();
        assertThat(snap.history()).extracting(PoolSnapshot.Event::action).contains("alloc", "free");
        String json = snap.toJson();
        assertThat(json).startsWith("{\"kind\":\"" + allocator() + "\"").contains("\"history\":[").contains(site)
                .endsWith("]}");
        assertThat(snap.toSvg()).startsWith("<svg").contains("reserved").contains("allocated").endsWith("</svg>\n");
        if (caching()) {
            assertThat(snap.chunks()).isNotEmpty();
            assertThat(snap.chunks()).allSatisfy(c -> assertThat(c.blocks().stream().mapToLong(PoolSnapshot.Block::bytes).sum())
                    .isEqualTo(c.bytes()));
            assertThat(snap.chunks().stream().flatMap(c -> c.blocks().stream()).filter(PoolSnapshot.Block::allocated))
                    .singleElement().satisfies(x -> {
                        assertThat(x.ptr()).isEqualTo(a.address());
                        assertThat(x.site()).isEqualTo(site);
                    });
        }
        pool.free(a);
    }

    /** {@link Gpu#freeMemory()} counts the pool's cached bytes as free, as it does arena slack. */
    @Test
    public void freeMemoryCountsTheCache() {
        assumeTrue(caching(), "the caching allocator's own cache");
        MemoryPool pool = pool();
        DevicePtr p = pool.alloc(BIG, Stream.DEFAULT);
        pool.free(p);
        assertThat(pool.stats().cachedBytes()).isEqualTo(BIG);
        assertThat(gpu.freeMemory() - gpu.deviceFreeMemory()).as("cached bytes counted as free")
                .isGreaterThanOrEqualTo(BIG - (2L << 20));
        pool.emptyCache();
        assertThat(pool.stats().cachedBytes()).isZero();
    }

    /** {@code emptyCache} returns every chunk without live blocks. */
    @Test
    public void emptyCacheReturnsFreeChunks() {
        MemoryPool pool = pool();
        DevicePtr keep = pool.alloc(1000, Stream.DEFAULT);
        DevicePtr drop = pool.alloc(BIG, Stream.DEFAULT);
        pool.free(drop);
        pool.emptyCache();
        PoolStats st = pool.stats();
        assertThat(st.cacheFlushes()).isEqualTo(1);
        if (caching()) {
            assertThat(st.chunks()).isEqualTo(1);
            assertThat(st.reservedBytes()).isLessThan(BIG);
            assertThat(st.driverFrees()).isEqualTo(1);
        }
        pool.free(keep);
        pool.emptyCache();
        if (caching()) {
            assertThat(pool.stats().reservedBytes()).isZero();
        }
    }

    /** Out of memory frees the cache, retries, then fails naming reserved, allocated and free bytes by site. */
    @Test
    public void outOfMemoryFreesTheCacheThenNamesTheSites() {
        MemoryPool pool = pool();
        DevicePtr held = pool.alloc(5000, Stream.DEFAULT); String site = here();
        DevicePtr cached = pool.alloc(BIG, Stream.DEFAULT);
        pool.free(cached);
        GpuException e = assertCuda(CudaError.OUT_OF_MEMORY, () -> pool.alloc(1L << 50, Stream.DEFAULT));
        assertThat(e.getMessage()).contains("reserves").contains("allocated").contains("by site").contains(site)
                .contains(String.valueOf(1L << 50));
        PoolStats st = pool.stats();
        assertThat(st.cacheFlushes()).isEqualTo(1);
        if (caching()) {
            assertThat(st.reservedBytes()).as("the cached chunk went back").isLessThan(BIG);
        }
        assertThat(gpu.liveAllocations()).singleElement().extracting(Allocation::ptr).isEqualTo(held);
        DevicePtr again = pool.alloc(BIG, Stream.DEFAULT);
        pool.free(again);
        pool.free(held);
    }

    /** Red zones work inside the pool: a kernel writing past a block is found and named. */
    @Test
    public void redZonesWorkInsideThePool() {
        reopen(b -> pooled(b).redZoneBytes(64));
        reopened = true;
        MemoryPool pool = gpu.pool();
        DevicePtr ok = pool.alloc(400, Stream.DEFAULT);
        DevicePtr bad = pool.alloc(400, Stream.DEFAULT); String site = here();
        assertThat(gpu.liveBytes()).isEqualTo(800);
        gpu.launch(kernel("write_past"), LaunchConfig.forElements(103, 64), Stream.DEFAULT, args.clear().ptr(ok).i32(100).i32(0));
        gpu.launch(kernel("write_past"), LaunchConfig.forElements(103, 64), Stream.DEFAULT, args.clear().ptr(bad).i32(100).i32(3));
        gpu.synchronize();
        List<RedZoneViolation> v = gpu.findRedzoneViolations();
        assertThat(v).singleElement().satisfies(r -> {
            assertThat(r.allocation().ptr()).isEqualTo(bad);
            assertThat(r.allocation().site()).isEqualTo(site);
        });
        pool.free(ok);
        pool.free(bad);
        DevicePtr reused = pool.alloc(400, Stream.DEFAULT);
        assertThat(gpu.findRedzoneViolations()).as("a reused block gets a fresh pad").isEmpty();
        pool.free(reused);
    }

    /** Allocating or freeing on a capturing stream is refused and leaves the capture valid. */
    @Test
    public void captureIsRefusedAndStaysValid() {
        MemoryPool pool = pool();
        Stream s = gpu.createStream();
        DevicePtr before = pool.alloc(4 * 64, s);
        DevicePtr warm = pool.alloc(256, Stream.DEFAULT);
        pool.free(warm);
        gpu.synchronize();
        gpu.beginCapture(s);
        assertLedgerUnchanged(() -> {
            GpuException e = assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(1024, s));
            assertThat(e.getMessage()).contains("capturing");
            assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(before, s));
        });
        if (caching()) {
            // The legacy stream is not capturing: a cached block is handed out and returned
            // without a driver call, so the capture is untouched.
            DevicePtr hit = pool.alloc(256, Stream.DEFAULT);
            assertThat(hit).isEqualTo(warm);
            pool.free(hit);
        }
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.ACTIVE);
        fill(before, 4f, 64, s);
        GraphHandle g = gpu.endCapture(s);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readFloats(before, 64)).containsOnly(4f);
        gpu.destroyGraph(g);
        pool.free(before, s);
        DevicePtr after = pool.alloc(1024, s);
        pool.free(after, s);
        gpu.synchronize(s);
        gpu.destroyStream(s);
    }

    /** Destroying a stream that owns blocks leaves them usable: freed later, they are reused elsewhere. */
    @Test
    public void blocksOutliveTheirStream() {
        MemoryPool pool = pool();
        Stream s = gpu.createStream(true);
        DevicePtr live = pool.alloc(BIG, s);
        DevicePtr cached = pool.alloc(BIG, s);
        fill(live, 1f, 64, s);
        pool.free(cached, s);
        gpu.destroyStream(s);
        Stream t = gpu.createStream(true);
        DevicePtr again = pool.alloc(BIG, t);
        if (caching()) {
            assertThat(again).as("a block freed on the destroyed stream, safe once it was waited for").isEqualTo(cached);
        }
        gpu.synchronize();
        assertThat(readFloats(live, 64)).containsOnly(1f);
        pool.free(live);
        pool.free(again, t);
        DevicePtr third = pool.alloc(BIG, t);
        pool.free(third, t);
        if (caching()) {
            assertThat(pool.stats().driverAllocs()).isEqualTo(2);
        }
        if (detectsRaces()) {
            assertThat(pool.races()).isEmpty();
        }
        gpu.synchronize();
        gpu.destroyStream(t);
    }

    /** With sampled sites, one allocation in N is walked and the others say they were not. */
    @Test
    public void sampledSitesSayWhatTheyLack() {
        reopen(b -> pooled(b).allocSites(true).allocSiteSample(4));
        reopened = true;
        MemoryPool pool = gpu.pool();
        DevicePtr[] ps = new DevicePtr[8];
        String site = null;
        for (int i = 0; i < ps.length; i++) {
            ps[i] = pool.alloc(1024, Stream.DEFAULT); String s = here();
            site = s;
        }
        List<String> sites = gpu.liveAllocations().stream().map(Allocation::site).toList();
        assertThat(sites).filteredOn(site::equals).hasSize(2);
        assertThat(sites).filteredOn(x -> x.startsWith("(unsampled")).hasSize(6)
                .allSatisfy(x -> assertThat(x).contains("1 in 4"));
        assertThat(gpu.allocReport(10, 0)).contains(site).contains("(unsampled");
        for (DevicePtr p : ps) {
            pool.free(p);
        }
    }

    /** Blocks left live at close are released with the runtime. */
    @Test
    public void closeReleasesLiveBlocks() {
        Gpu other = open(this::pooled);
        other.pool().alloc(BIG, Stream.DEFAULT);
        other.pool().alloc(100, Stream.DEFAULT);
        other.close();
        assertThat(other.isClosed()).isTrue();
        assertBackendReleased(other);
        assertThatThrownBy(() -> other.pool()).isInstanceOf(IllegalStateException.class);
    }
}
