// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.GpuOptions;
import metrale.gpu.GraphHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * The memory detectors on every stream kind and every allocator: a red-zone fill is complete
 * before its buffer is handed out, so an overflow by a non-blocking stream's kernel (of this
 * thread, of another thread, inside a captured graph) is found; every free scans, pool frees
 * included; freed memory waits in a quarantine, so a stale pointer is refused naming where it was
 * allocated and freed instead of landing in the buffer that reused its address.
 */
public abstract class MemoryDetectorContract extends GpuContract {

    /** Red-zone bytes after each buffer in these tests. */
    protected static final int PAD = 64;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected MemoryDetectorContract() {
    }

    /** Writes {@code p[i] = i + 1} for {@code i < n + extra} on {@code s}: {@code extra} floats past {@code n}. */
    private void writePast(DevicePtr p, int n, int extra, Stream s) {
        if (extra > 0) {
            assumeKernelsReachRedZones();
        }
        gpu.launch(kernel("write_past"), LaunchConfig.forElements(n + extra, 64), s, args.clear().ptr(p).i32(n).i32(extra));
    }

    /** The one violation found at free names the buffer, its site and the 16 bytes past its 400. */
    private void assertFoundAtFree(DevicePtr p, String site) {
        List<RedZoneViolation> v = gpu.freedRedzoneViolations();
        assertThat(v).as("damage found when the buffer was freed").singleElement().satisfies(r -> {
            assertThat(r.allocation().ptr()).isEqualTo(p);
            assertThat(r.allocation().bytes()).isEqualTo(400);
            assertThat(r.allocation().site()).isEqualTo(site);
            assertThat(r.firstBadOffset()).isZero();
            assertThat(r.spanBytes()).as("4 floats past the end").isEqualTo(16);
            assertThat(r.toString()).contains(p.toString()).contains("allocated at " + site)
                    .contains("16 byte(s), first at +400");
        });
    }

    private static float[] iotaFloats(int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = i + 1;
        }
        return f;
    }

    // ---- red zones ordered for every stream ------------------------------------------------------

    /** A kernel on a non-blocking stream overflowing a {@code Gpu.alloc} buffer is found at its free. */
    @Test
    public void nonBlockingOverflowIsFoundAtFree() {
        reopen(b -> b.redZoneBytes(PAD));
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(400); String site = here();
        writePast(p, 100, 4, s);
        gpu.synchronize(s);
        assertThat(readFloats(p, 100)).as("the buffer itself").containsExactly(iotaFloats(100));
        gpu.free(p);
        assertFoundAtFree(p, site);
        assertThat(gpu.findRedzoneViolations()).as("the freed buffer is off the ledger").isEmpty();
        gpu.destroyStream(s);
    }

    /** The same overflow, with {@code allocator=caching}: {@code alloc} is a pool block. */
    @Test
    public void nonBlockingOverflowOfACachingBlockIsFoundAtFree() {
        reopen(b -> b.redZoneBytes(PAD).allocator("caching"));
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(400); String site = here();
        writePast(p, 100, 4, s);
        gpu.synchronize(s);
        gpu.free(p);
        assertFoundAtFree(p, site);
        gpu.destroyStream(s);
    }

    /** A scan while the buffer is live sees a non-blocking stream's overflow once that stream is synchronized. */
    @Test
    public void nonBlockingOverflowIsFoundByALiveScan() {
        reopen(b -> b.redZoneBytes(PAD));
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(400);
        writePast(p, 100, 4, s);
        gpu.synchronize(s);
        assertThat(gpu.findRedzoneViolations()).extracting(r -> r.allocation().ptr()).containsExactly(p);
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /**
     * A non-blocking stream of another thread: allocated, overflowed and freed there, reported here.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void nonBlockingOverflowOnAnotherThreadIsFound() throws Exception {
        assumeKernelsReachRedZones();
        reopen(b -> b.redZoneBytes(PAD));
        AtomicReference<DevicePtr> ptr = new AtomicReference<>();
        AtomicReference<String> site = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                Stream s = gpu.createStream(true);
                DevicePtr p = gpu.alloc(400); site.set(here());
                ptr.set(p);
                writePast(p, 100, 4, s);
                gpu.synchronize(s);
                gpu.free(p);
                gpu.destroyStream(s);
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        t.join();
        assertThat(failed.get()).isNull();
        assertFoundAtFree(ptr.get(), site.get());
    }

    /** An overflow by a kernel inside a captured graph, replayed on a non-blocking stream, is found at the free. */
    @Test
    public void overflowInsideACapturedGraphIsFound() {
        reopen(b -> b.redZoneBytes(PAD));
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(400); String site = here();
        gpu.beginCapture(s);
        writePast(p, 100, 4, s);
        GraphHandle g = gpu.endCapture(s);
        assertThat(gpu.findRedzoneViolations()).as("captured work does not run").isEmpty();
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        gpu.free(p);
        assertFoundAtFree(p, site);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
    }

    /**
     * Threads allocate, write and free on non-blocking streams of their own at once, through
     * both allocators, with a small quarantine that evicts all the time: only the one overflow is
     * reported, and no free fails.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void concurrentFreesScanAndEvictSafely() throws Exception {
        reopen(b -> b.redZoneBytes(PAD).quarantineBytes(4096));
        int threads = 4;
        int rounds = 25;
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicReference<DevicePtr> bad = new AtomicReference<>();
        // Looked up once: the contract's kernel cache is not for concurrent use.
        assumeKernelsReachRedZones();
        metrale.gpu.KernelHandle writePast = kernel("write_past");
        List<Thread> ts = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(new Thread(() -> {
                try (metrale.gpu.KernelArgs a = new metrale.gpu.KernelArgs()) {
                    Stream s = gpu.createStream(true);
                    for (int r = 0; r < rounds; r++) {
                        boolean pooled = r % 2 == 1;
                        DevicePtr p = pooled ? gpu.pool().alloc(400, s) : gpu.alloc(400);
                        int extra = id == 0 && r == rounds / 2 ? 4 : 0;
                        if (extra > 0) {
                            bad.set(p);
                        }
                        gpu.launch(writePast, LaunchConfig.forElements(100 + extra, 64), s,
                                a.clear().ptr(p).i32(100).i32(extra));
                        if (pooled) {
                            gpu.pool().free(p, s);
                        } else {
                            gpu.synchronize(s);
                            gpu.free(p);
                        }
                    }
                    gpu.synchronize(s);
                    gpu.destroyStream(s);
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }));
        }
        ts.forEach(Thread::start);
        for (Thread t : ts) {
            t.join();
        }
        assertThat(failed.get()).isNull();
        assertThat(gpu.freedRedzoneViolations()).extracting(r -> r.allocation().ptr()).containsExactly(bad.get());
        assertThat(gpu.liveAllocCount()).isZero();
    }

    /**
     * A buffer freed while another stream captures is scanned once the capture has ended, and
     * the capture is not broken by it.
     */
    @Test
    public void aFreeDuringACaptureIsScannedAfterIt() {
        reopen(b -> b.redZoneBytes(PAD));
        Stream s = gpu.createStream(true);
        Stream c = gpu.createStream(true);
        DevicePtr p = gpu.alloc(400); String site = here();
        DevicePtr q = gpu.alloc(400);
        gpu.memset(q, 0, 400);
        writePast(p, 100, 4, s);
        gpu.synchronize(s);
        gpu.beginCapture(c, metrale.gpu.CaptureMode.RELAXED);
        addI32(q, 1, 100, c);
        gpu.free(p);
        GraphHandle g = gpu.endCapture(c);
        assertFoundAtFree(p, site);
        gpu.launchGraph(g, c);
        gpu.synchronize(c);
        assertThat(readInts(q, 1)).containsExactly(1);
        gpu.destroyGraph(g);
        gpu.free(q);
        gpu.destroyStream(s);
        gpu.destroyStream(c);
    }

    // ---- scans at every free: the pool ----------------------------------------------------------

    private void poolBlockOverflowIsFoundAtItsFree(String allocator, boolean streamOrdered) {
        reopen(b -> b.redZoneBytes(PAD).allocator(allocator));
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.pool().alloc(400, s); String site = here();
        writePast(p, 100, 4, s);
        if (streamOrdered) {
            gpu.pool().free(p, s);
        } else {
            gpu.synchronize(s);
            gpu.pool().free(p);
        }
        assertFoundAtFree(p, site);
        gpu.synchronize(s);
        gpu.destroyStream(s);
    }

    /** {@code pool().free(p, s)} of the caching pool, with the overflowing kernel still in flight on {@code s}. */
    @Test
    public void cachingPoolStreamOrderedFreeScans() {
        poolBlockOverflowIsFoundAtItsFree("caching", true);
    }

    /** {@code pool().free(p)} of the caching pool. */
    @Test
    public void cachingPoolFreeScans() {
        poolBlockOverflowIsFoundAtItsFree("caching", false);
    }

    /** {@code pool().free(p, s)} of the pool over {@code cuMemAllocAsync}. */
    @Test
    public void asyncPoolStreamOrderedFreeScans() {
        poolBlockOverflowIsFoundAtItsFree("cuda", true);
    }

    /** {@code pool().free(p)} of the pool over {@code cuMemAllocAsync}. */
    @Test
    public void asyncPoolFreeScans() {
        poolBlockOverflowIsFoundAtItsFree("cuda", false);
    }

    // ---- the quarantine -------------------------------------------------------------------------

    /**
     * {@return whether this backend holds freed memory back by default} The simulator does (64 MiB):
     * it exists to find bugs. CUDA does not, unless red zones are on.
     */
    protected boolean quarantinesByDefault() {
        return false;
    }

    /**
     * The quarantine is 64 MiB on the simulator and, elsewhere, when red zones are on and nothing
     * else is said, else off; a given size wins.
     */
    @Test
    public void quarantineDefaults() {
        assertThat(gpu.options().quarantineBytes()).isEqualTo(quarantinesByDefault() ? 64L << 20 : 0);
        reopen(b -> b.redZoneBytes(PAD));
        assertThat(gpu.options().quarantineBytes()).isEqualTo(GpuOptions.DEFAULT_QUARANTINE_BYTES).isEqualTo(64L << 20);
        reopen(b -> b.redZoneBytes(PAD).quarantineBytes(4096));
        assertThat(gpu.options().quarantineBytes()).isEqualTo(4096);
    }

    /**
     * The use after free: a freed 256-byte buffer, the next 256-byte allocation, then a
     * copy from the stale pointer: refused, naming where it was allocated and freed.
     */
    private void staleCopyIsRefused(String allocator) {
        reopen(b -> b.quarantineBytes(1 << 20).allocator(allocator).leakDetection(LeakDetection.ALL));
        Stream s = gpu.createStream(true);
        DevicePtr a = gpu.alloc(256); String allocSite = here();
        gpu.free(a); String freeSite = here();
        DevicePtr b = gpu.alloc(256);
        DevicePtr dst = gpu.alloc(256);
        assertThat(b).as("the freed address is held back").isNotEqualTo(a);
        assertThat(gpu.liveBytes()).as("quarantined memory is not live").isEqualTo(512);
        assertThat(gpu.quarantinedBytes()).isEqualTo(256);
        GpuException e = assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2DAsync(a, dst, 256, s));
        assertThat(e.getMessage()).contains("copyD2DAsync").contains("src").contains("freed memory")
                .contains(a.toString()).contains("allocated at " + allocSite)
                .contains("freed at " + freeSite);
        GpuException m = assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(a.plus(16), 0, 16));
        assertThat(m.getMessage()).contains("+16 into it").contains("allocated at " + allocSite);
        gpu.synchronize(s);
        gpu.free(b);
        gpu.free(dst);
        gpu.destroyStream(s);
    }

    /** Use after free with {@code cuMemAlloc} per buffer. */
    @Test
    public void staleCopyIsRefusedWithTheDriverAllocator() {
        staleCopyIsRefused("driver");
    }

    /** Use after free with the caching pool, which reuses a freed block's address at once without the quarantine. */
    @Test
    public void staleCopyIsRefusedWithTheCachingPool() {
        staleCopyIsRefused("caching");
    }

    /** Use after free with the pool over {@code cuMemAllocAsync}. */
    @Test
    public void staleCopyIsRefusedWithTheAsyncPool() {
        staleCopyIsRefused("cuda");
    }

    /** A checked launch argument pointing into quarantined memory is refused, naming the argument and the free. */
    @Test
    public void staleLaunchArgumentIsRefused() {
        reopen(b -> b.quarantineBytes(1 << 20).checkPointers(true).leakDetection(LeakDetection.ALL));
        DevicePtr a = gpu.alloc(400); String allocSite = here();
        gpu.free(a); String freeSite = here();
        GpuException e = assertCuda(CudaError.INVALID_VALUE, () -> writePast(a, 100, 0, Stream.DEFAULT));
        assertThat(e.getMessage()).contains("freed memory").contains("allocated at " + allocSite)
                .contains("freed at " + freeSite);
    }

    /** Held ranges are given back oldest first once more than the limit is held; close gives back the rest. */
    @Test
    public void quarantineEvictsOldestFirst() {
        reopen(b -> b.quarantineBytes(1024));
        DevicePtr[] p = new DevicePtr[4];
        for (int i = 0; i < 4; i++) {
            p[i] = gpu.alloc(512);
        }
        gpu.free(p[0]);
        gpu.free(p[1]);
        assertThat(gpu.quarantinedBytes()).isEqualTo(1024);
        gpu.free(p[2]);
        assertThat(gpu.quarantinedBytes()).as("the oldest went back").isEqualTo(1024);
        assertThat(assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(p[1], 0, 4)).getMessage())
                .contains("held in the quarantine");
        assertThat(assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(p[2], 0, 4)).getMessage())
                .contains("held in the quarantine");
        assertThat(assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(p[0], 0, 4)).getMessage())
                .as("given back: still freed memory, no longer held").doesNotContain("held in the quarantine");
        assertThat(gpu.liveBytes()).isEqualTo(512);
        gpu.free(p[3]);
    }

    /** A sweep gives the quarantine back too. */
    @Test
    public void sweepEmptiesTheQuarantine() {
        reopen(b -> b.quarantineBytes(1 << 20));
        DevicePtr a = gpu.alloc(512);
        gpu.alloc(512);
        gpu.free(a);
        assertThat(gpu.quarantinedBytes()).isEqualTo(512);
        assertThat(gpu.sweepUnreleased()).isEqualTo(1);
        assertThat(gpu.quarantinedBytes()).isZero();
        assertThat(gpu.liveAllocCount()).isZero();
    }

    /** A pool block held in the quarantine on a stream being destroyed goes back to the pool first. */
    @Test
    public void destroyingAStreamGivesBackItsHeldBlocks() {
        reopen(b -> b.quarantineBytes(1 << 20));
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.pool().alloc(512, s);
        gpu.pool().free(p, s);
        assertThat(gpu.quarantinedBytes()).isEqualTo(512);
        gpu.destroyStream(s);
        assertThat(gpu.quarantinedBytes()).isZero();
    }
}
