// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.MemoryPool;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * The memory pool ({@link Gpu#pool()}) as an allocator: blocks on the ledger with their sites,
 * reuse and coalescing, red zones inside the pool, out of memory after freeing the cache, blocks
 * that outlive their stream, statistics and the snapshot. {@link PoolStreamOrderContract} covers
 * reuse across streams and capture.
 *
 * <p>A backend's subclass runs it for one allocator, see {@link AbstractPoolContract}.
 */
public abstract class PoolContract extends AbstractPoolContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected PoolContract() {
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
        assumeKernelsReachRedZones();
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

    /**
     * A stream marked with {@code recordStream} and destroyed while the block is still live: the
     * destroy waits for its work, so the later free records on no dead handle (400) and the block
     * is reused without a race.
     */
    @Test
    public void aLiveBlocksMarkedStreamMayBeDestroyedBeforeTheFree() {
        MemoryPool pool = pool();
        Stream a = gpu.createStream(true);
        Stream u = gpu.createStream(true);
        DevicePtr p = pool.alloc(4096, a);
        gpu.memsetAsync(p, 0, 64, a);
        gpu.synchronize(a);
        addI32(p, 1, 16, u);
        pool.recordStream(p, u);
        gpu.destroyStream(u);
        pool.free(p, a);
        DevicePtr q = pool.alloc(4096, a);
        gpu.synchronize();
        if (caching()) {
            assertThat(q).as("reused once the destroyed stream's work was done").isEqualTo(p);
        }
        if (detectsRaces()) {
            assertThat(pool.races()).isEmpty();
        }
        pool.free(q, a);
        gpu.synchronize();
        gpu.destroyStream(a);
    }

    /**
     * Sizes no device has fail as {@code cuMemAlloc} fails them: {@code OUT_OF_MEMORY}, not a
     * Java exception about red zones, with or without them, through the pool and the default
     * allocator routed to it; nothing lands on the ledger.
     */
    @Test
    public void hugeSizesAreOutOfMemoryAsWithTheDriverAllocator() {
        MemoryPool pool = pool();
        for (long bytes : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 4096, (1L << 62) + 1}) {
            assertLedgerUnchanged(() -> {
                GpuException e = assertCuda(CudaError.OUT_OF_MEMORY, () -> pool.alloc(bytes, Stream.DEFAULT));
                assertThat(e.getMessage()).contains(String.valueOf(bytes));
                assertCuda(CudaError.OUT_OF_MEMORY, () -> gpu.alloc(bytes));
            });
        }
        assertCuda(CudaError.INVALID_VALUE, () -> pool.alloc(0, Stream.DEFAULT));
        try (Gpu zoned = open(b -> pooled(b).redZoneBytes(64)); Gpu plain = open(b -> b.allocator("driver"));
             Gpu plainZoned = open(b -> b.allocator("driver").redZoneBytes(64))) {
            for (Gpu g : List.of(zoned, plain, plainZoned)) {
                GpuException e = assertCuda(CudaError.OUT_OF_MEMORY, () -> g.alloc(Long.MAX_VALUE));
                assertThat(e.getMessage()).contains(String.valueOf(Long.MAX_VALUE));
                assertThat(g.liveAllocations()).isEmpty();
            }
            assertCuda(CudaError.OUT_OF_MEMORY, () -> zoned.pool().alloc(Long.MAX_VALUE - 10, Stream.DEFAULT));
        }
        DevicePtr ok = pool.alloc(100, Stream.DEFAULT);
        pool.free(ok);
    }

    /**
     * With {@code allocator=cuda}, memory freed stays reserved by CUDA's pool across a
     * synchronization (the pool raises its release threshold) and is given back to the device by
     * {@code emptyCache}.
     */
    @Test
    public void freedMemoryStaysCachedUntilEmptyCache() {
        assumeTrue(!caching(), "CUDA's pool and its release threshold");
        MemoryPool pool = pool();
        pool.emptyCache();
        long before = gpu.deviceFreeMemory();
        DevicePtr p = pool.alloc(BIG, Stream.DEFAULT);
        pool.free(p);
        gpu.synchronize();
        long cachedFree = gpu.deviceFreeMemory();
        assertThat(cachedFree).as("freed memory stays cached past a sync").isLessThanOrEqualTo(before - BIG);
        assertThat(pool.stats().reservedBytes()).isGreaterThanOrEqualTo(BIG);
        assertThat(pool.stats().cachedBytes()).isGreaterThanOrEqualTo(BIG);
        pool.emptyCache();
        assertThat(gpu.deviceFreeMemory()).as("emptyCache gives it back").isGreaterThanOrEqualTo(cachedFree + BIG);
        assertThat(pool.stats().reservedBytes()).isZero();
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

    /**
     * With sampled sites, about one allocation in N, drawn at random, is walked; the others say they
     * were not, and the report says how many.
     */
    @Test
    public void sampledSitesSayWhatTheyLack() {
        reopen(b -> pooled(b).leakDetection(LeakDetection.SAMPLED).leakDetectionSample(4));
        reopened = true;
        MemoryPool pool = gpu.pool();
        DevicePtr[] ps = new DevicePtr[400];
        String site = null;
        for (int i = 0; i < ps.length; i++) {
            ps[i] = pool.alloc(1024, Stream.DEFAULT); String s = here();
            site = s;
        }
        String line = site;
        List<String> sites = gpu.liveAllocations().stream().map(Allocation::site).toList();
        long named = sites.stream().filter(line::equals).count();
        // Binomial(400, 1/4): mean 100, sd 8.7; the bounds are 6 sd away.
        assertThat(named).isBetween(48L, 152L);
        assertThat(sites).filteredOn(x -> !x.equals(line)).hasSize(400 - (int) named)
                .containsOnly(LeakDetection.UNSAMPLED_SITE);
        assertThat(gpu.allocReport(10, 0)).contains(site).contains(LeakDetection.UNSAMPLED_SITE)
                .contains(named + " of 400 live allocations have their site; " + (400 - named)
                        + " unsampled (leakDetection=sampled, 1 in 4)");
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
