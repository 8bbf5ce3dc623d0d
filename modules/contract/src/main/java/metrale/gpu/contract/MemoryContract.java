// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Device memory and the allocation ledger: alloc and free, ledger entries with the caller's
 * site, the allocation report, the teardown sweep, arena chunks, managed and page-locked memory,
 * and device memory queries.
 */
public abstract class MemoryContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected MemoryContract() {
    }

    /** An allocation is one ledger entry with the bytes asked for and the caller's site. */
    @Test
    public void allocRecordsLedgerEntryWithCallerSite() {
        DevicePtr p = gpu.alloc(1000); String site = here();
        assertThat(p.isNull()).isFalse();
        assertThat(gpu.liveAllocCount()).isEqualTo(1);
        assertThat(gpu.liveBytes()).isEqualTo(1000);
        Allocation a = gpu.liveAllocations().getFirst();
        assertThat(a.ptr()).isEqualTo(p);
        assertThat(a.bytes()).isEqualTo(1000);
        assertThat(a.site()).isEqualTo(site);
        assertThat(a.managed()).isFalse();
        gpu.free(p);
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.liveBytes()).isZero();
        assertThat(gpu.liveAllocations()).isEmpty();
    }

    /** The ledger lists entries oldest first; creation indices count from 0 in a fresh runtime. */
    @Test
    public void ledgerIsOldestFirstWithIncreasingIndices() {
        List<DevicePtr> ptrs = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            ptrs.add(gpu.alloc(100L * i));
        }
        List<Allocation> live = gpu.liveAllocations();
        assertThat(live).extracting(Allocation::ptr).containsExactlyElementsOf(ptrs);
        assertThat(live).extracting(Allocation::bytes).containsExactly(100L, 200L, 300L, 400L, 500L);
        for (int i = 0; i < live.size(); i++) {
            assertThat(live.get(i).index()).as("creation index of the allocation made %d-th", i).isEqualTo(i);
        }
        assertThat(gpu.liveBytes()).isEqualTo(1500);
        ptrs.forEach(gpu::free);
    }

    /** Freeing one entry leaves the others, in order, and their indices do not change. */
    @Test
    public void freeRemovesOnlyThatEntry() {
        DevicePtr a = gpu.alloc(64);
        DevicePtr b = gpu.alloc(128);
        DevicePtr c = gpu.alloc(256);
        List<Allocation> before = gpu.liveAllocations();
        gpu.free(b);
        assertThat(gpu.liveAllocations()).containsExactly(before.get(0), before.get(2));
        assertThat(gpu.liveBytes()).isEqualTo(320);
        gpu.free(a);
        gpu.free(c);
    }

    /** Pointers are aligned to at least 256 bytes and allocations never overlap. */
    @Test
    public void allocationsAreAlignedAndDisjoint() {
        long[] sizes = {1, 3, 255, 256, 257, 1000, 4096, 65537};
        List<DevicePtr> ptrs = new ArrayList<>();
        for (long s : sizes) {
            DevicePtr p = gpu.alloc(s);
            assertThat(p.address() % 256).as("alignment of %s (%d bytes)", p, s).isZero();
            ptrs.add(p);
        }
        for (int i = 0; i < sizes.length; i++) {
            for (int j = i + 1; j < sizes.length; j++) {
                long ai = ptrs.get(i).address();
                long aj = ptrs.get(j).address();
                boolean disjoint = ai + sizes[i] <= aj || aj + sizes[j] <= ai;
                assertThat(disjoint).as("%s+%d and %s+%d overlap", ptrs.get(i), sizes[i], ptrs.get(j), sizes[j]).isTrue();
            }
        }
        ptrs.forEach(gpu::free);
    }

    /** Each allocation holds its own data: writing one does not touch another. */
    @Test
    public void allocationsHoldIndependentData() {
        DevicePtr a = gpu.alloc(400);
        DevicePtr b = gpu.alloc(400);
        gpu.copyH2D(iota(100, 0), a);
        gpu.copyH2D(iota(100, 1000), b);
        assertThat(readInts(a, 100)).containsExactly(iota(100, 0));
        assertThat(readInts(b, 100)).containsExactly(iota(100, 1000));
        gpu.free(a);
        gpu.free(b);
    }

    /** Freeing {@link DevicePtr#NULL} does nothing. */
    @Test
    public void freeNullIsNoOp() {
        DevicePtr p = gpu.alloc(16);
        gpu.free(DevicePtr.NULL);
        assertThat(gpu.liveAllocCount()).isEqualTo(1);
        gpu.free(p);
    }

    /** A freed pointer is no longer on the ledger: freeing it again is INVALID_VALUE. */
    @Test
    public void doubleFreeIsInvalidValue() {
        DevicePtr p = gpu.alloc(16);
        gpu.free(p);
        assertLedgerUnchanged(() -> assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(p)));
    }

    /** {@link DeviceBuffer}: on the ledger with the caller's site, usable, freed on close, closed after. */
    @Test
    public void deviceBufferIsOnLedgerAndFreedOnClose() {
        DeviceBuffer buf;
        try (DeviceBuffer b = gpu.allocBuffer(64)) { String site = here();
            buf = b;
            assertThat(b.bytes()).isEqualTo(64);
            assertThat(gpu.liveAllocations()).singleElement().satisfies(a -> {
                assertThat(a.ptr()).isEqualTo(b.ptr());
                assertThat(a.bytes()).isEqualTo(64);
                assertThat(a.site()).isEqualTo(site);
            });
            b.copyFrom(iota(16, 7));
            int[] out = new int[16];
            b.copyTo(out);
            assertThat(out).containsExactly(iota(16, 7));
            b.fill(0);
            b.copyTo(out);
            assertThat(out).containsOnly(0);
            assertThat(b.at(16)).isEqualTo(b.ptr().plus(16));
        }
        assertThat(buf.isClosed()).isTrue();
        assertThat(gpu.liveAllocCount()).isZero();
        buf.close();
        assertThat(gpu.liveAllocCount()).isZero();
        assertThatThrownBy(buf::ptr).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> buf.copyFrom(new int[1])).isInstanceOf(IllegalStateException.class);
    }

    /** {@link DeviceBuffer} copies are bounds-checked before they reach the device. */
    @Test
    public void deviceBufferChecksBoundsBeforeTheDevice() {
        try (DeviceBuffer b = gpu.allocBuffer(64)) {
            b.copyFrom(ints(16, 5));
            assertLedgerUnchanged(() -> {
                assertThatThrownBy(() -> b.copyFrom(new int[17])).isInstanceOf(IndexOutOfBoundsException.class)
                        .hasMessageContaining("64");
                assertThatThrownBy(() -> b.copyTo(new float[17])).isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> b.at(65)).isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> b.at(-1)).isInstanceOf(IndexOutOfBoundsException.class);
            });
            int[] out = new int[16];
            b.copyTo(out);
            assertThat(out).as("contents after refused copies").containsOnly(5);
        }
    }

    /** Managed memory is on the ledger, marked managed, and usable by copies and kernels. */
    @Test
    public void managedMemoryIsOnLedgerAndUsable() {
        DevicePtr m = gpu.allocManaged(400); String site = here();
        assertThat(gpu.liveAllocations()).singleElement().satisfies(a -> {
            assertThat(a.ptr()).isEqualTo(m);
            assertThat(a.managed()).isTrue();
            assertThat(a.bytes()).isEqualTo(400);
            assertThat(a.site()).isEqualTo(site);
        });
        gpu.copyH2D(iota(100, 1), m);
        addI32(m, 10, 100, Stream.DEFAULT);
        gpu.synchronize();
        assertThat(readInts(m, 100)).containsExactly(iota(100, 11));
        gpu.memset(m, 0, 400);
        gpu.synchronize();
        assertThat(readInts(m, 100)).containsOnly(0);
        gpu.free(m);
        assertThat(gpu.liveAllocCount()).isZero();
    }

    /** The report groups live bytes by site, largest first, and honours topN and minMb. */
    @Test
    public void allocReportGroupsBySiteLargestFirst() {
        long mib = 1L << 20;
        List<DevicePtr> small = new ArrayList<>();
        String smallSite = null;
        for (int i = 0; i < 3; i++) {
            small.add(gpu.alloc(mib)); smallSite = here();
        }
        DevicePtr big = gpu.alloc(5 * mib); String bigSite = here();

        String all = gpu.allocReport(10, 0);
        assertThat(all).contains(smallSite).contains(bigSite);
        assertThat(all.indexOf(bigSite)).as("the larger site first in:%n%s", all).isLessThan(all.indexOf(smallSite));

        String top1 = gpu.allocReport(1, 0);
        assertThat(top1).contains(bigSite).doesNotContain(smallSite);

        String over4 = gpu.allocReport(10, 4);
        assertThat(over4).contains(bigSite).doesNotContain(smallSite);

        String over6 = gpu.allocReport(10, 6);
        assertThat(over6).doesNotContain(bigSite).doesNotContain(smallSite);

        small.forEach(gpu::free);
        gpu.free(big);
        assertThat(gpu.allocReport(10, 0)).doesNotContain(bigSite).doesNotContain(smallSite);
    }

    /** The teardown sweep frees every ledger entry, managed ones included, and counts them. */
    @Test
    public void sweepUnreleasedFreesEveryEntry() {
        DevicePtr a = gpu.alloc(64);
        DevicePtr b = gpu.alloc(1 << 20);
        DevicePtr m = gpu.allocManaged(128);
        DevicePtr chunk = gpu.allocArena(4096);
        assertThat(gpu.sweepUnreleased()).isEqualTo(3);
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.liveBytes()).isZero();
        assertThat(gpu.sweepUnreleased()).isZero();
        for (DevicePtr p : List.of(a, b, m)) {
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(p));
        }
        gpu.copyH2D(ints(16, 9), chunk);
        assertThat(readInts(chunk, 16)).as("the arena chunk survives the sweep").containsOnly(9);
        gpu.freeArena(chunk);
    }

    /**
     * Closing the runtime frees what the ledger still holds, and every arena chunk, page-locked
     * block, stream, event, graph and module it made: the backend sees nothing left. Close is
     * idempotent.
     */
    @Test
    public void closeFreesWhatTheLedgerHolds() {
        CountingDriver driver = counted();
        allowLeaks();
        gpu.alloc(64);
        gpu.allocManaged(64);
        gpu.allocArena(4096);
        gpu.allocHostPinned(4096);
        Stream s = gpu.createStream();
        gpu.createEvent();
        gpu.beginCapture(s);
        noop(s);
        gpu.endCapture(s);
        assertThat(gpu.liveAllocCount()).isEqualTo(2);
        int before = driver.callsInOrder().size();
        gpu.close();
        assertThat(gpu.isClosed()).isTrue();
        assertBackendReleased(gpu);
        List<String> closing = driver.callsInOrder().subList(before, driver.callsInOrder().size());
        // Capture queries may come first (close ends a capture a refused call left open); then the
        // context sync, before any release.
        int sync = closing.indexOf("ctxSynchronize");
        assertThat(sync).as("close waits for pending work before releasing (%s)", closing).isNotNegative();
        assertThat(closing.subList(0, sync)).as("before the sync (%s)", closing)
                .allMatch(c -> c.equals("supportsCaptureQuery") || c.equals("streamIsCapturing"));
        assertThat(closing.getLast()).as("close releases everything before closing the driver (%s)", closing).isEqualTo("close");
        assertThat(closing).as("releases at close").contains("memFree", "memFreeHost", "eventDestroy", "streamDestroy",
                "graphDestroy", "moduleUnload");
        assertThat(closing.stream().filter("memFree"::equals).count()).as("device, managed and arena blocks freed").isEqualTo(3);
        gpu.close();
        assertThat(gpu.isClosed()).isTrue();
        assertThat(driver.callsInOrder()).as("a second close makes no driver call").hasSize(before + closing.size());
    }

    /**
     * When filling a new buffer's red zone fails, alloc reports it, frees the block it got, and
     * leaves the ledger as it was.
     */
    @Test
    @DriverAllocator("counts the cuMemFree of a buffer whose red-zone fill failed")
    public void aFailedRedZoneFillFreesTheBlock() {
        reopen(b -> CountingDriver.over(b.redZoneBytes(64)));
        CountingDriver driver = CountingDriver.of(gpu);
        long frees = driver.calls("memFree");
        driver.failNext("memsetD8", CudaError.INVALID_VALUE);
        assertLedgerUnchanged(() -> assertCuda(CudaError.INVALID_VALUE, () -> gpu.alloc(256)));
        assertThat(driver.calls("memFree") - frees).as("the block freed again").isEqualTo(1);
        assertThat(gpu.fault()).isEmpty();
        DevicePtr p = gpu.alloc(256);
        assertThat(gpu.scanRedzones()).isZero();
        gpu.free(p);
    }

    /** Arena chunks are raw: not on the ledger, usable, and counted for slack as noted. */
    @Test
    public void arenaChunksAreOffTheLedgerAndTrackSlack() {
        DevicePtr chunk = gpu.allocArena(4096);
        assertThat(chunk.isNull()).isFalse();
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.liveBytes()).isZero();
        gpu.copyH2D(iota(1024, 0), chunk);
        assertThat(readInts(chunk, 1024)).containsExactly(iota(1024, 0));

        gpu.noteArenaUse(chunk, 1000);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(3096);
        gpu.noteArenaUse(chunk, 4096);
        assertThat(gpu.chunkSlackBytes()).isZero();
        gpu.noteArenaUse(chunk, 0);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(4096);

        DevicePtr other = gpu.allocArena(1024);
        gpu.noteArenaUse(other, 24);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(4096 + 1000);
        gpu.freeArena(chunk);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(1000);
        gpu.freeArena(other);
        assertThat(gpu.chunkSlackBytes()).isZero();
    }

    /** Ledger and arena pointers are not interchangeable: each free refuses the other's, freeing nothing. */
    @Test
    public void ledgerAndArenaFreesRefuseEachOthersPointers() {
        DevicePtr p = gpu.alloc(256);
        DevicePtr chunk = gpu.allocArena(256);
        assertLedgerUnchanged(() -> {
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(chunk));
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.freeArena(p));
        });
        gpu.copyH2D(ints(64, 1), chunk);
        gpu.copyH2D(ints(64, 2), p);
        assertThat(readInts(chunk, 64)).containsOnly(1);
        assertThat(readInts(p, 64)).containsOnly(2);
        gpu.freeArena(chunk);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.freeArena(chunk));
        gpu.free(p);
    }

    /** Device memory queries: free at most total, total fixed, and the device record agrees. */
    @Test
    public void memoryQueriesAreConsistent() {
        long total = gpu.totalMemory();
        assertThat(total).isPositive();
        assertThat(gpu.deviceFreeMemory()).isBetween(0L, total);
        assertThat(gpu.freeMemory()).isGreaterThanOrEqualTo(0L);
        assertThat(gpu.device().totalMemory()).isEqualTo(total);
        assertThat(gpu.smCount()).isPositive().isEqualTo(gpu.device().smCount());
        assertThat(gpu.device().backend()).isEqualTo(gpu.backendName());
        assertThat(gpu.device().name()).isNotBlank();
        DevicePtr p = gpu.alloc(64L << 20);
        assertThat(gpu.totalMemory()).as("total is fixed").isEqualTo(total);
        assertThat(gpu.deviceFreeMemory()).isLessThanOrEqualTo(total);
        gpu.free(p);
    }

    /** Arena slack counts towards what the runtime can still use. */
    @Test
    public void freeMemoryIncludesArenaSlack() {
        DevicePtr chunk = gpu.allocArena(8L << 20);
        gpu.noteArenaUse(chunk, 0);
        long slack = gpu.chunkSlackBytes();
        assertThat(slack).isEqualTo(8L << 20);
        assertThat(gpu.freeMemory()).isGreaterThanOrEqualTo(slack);
        gpu.freeArena(chunk);
    }

    /** Page-locked memory: registered (slices too), mapped to the device, and unregistered when freed. */
    @Test
    public void pinnedMemoryIsRegisteredAndMapped() {
        MemorySegment host = gpu.allocHostPinned(4096);
        assertThat(host.byteSize()).isEqualTo(4096);
        assertThat(host.isNative()).isTrue();
        assertThat(gpu.isPinned(host)).isTrue();
        assertThat(gpu.isPinned(host.asSlice(100, 200))).isTrue();
        assertThat(gpu.isPinned(host.asSlice(4095, 1))).as("the last byte").isTrue();
        assertThat(gpu.isPinned(MemorySegment.ofAddress(host.address() + 4000).reinterpret(97)))
                .as("a range running one byte past the end").isFalse();
        assertThat(gpu.isPinned(MemorySegment.ofAddress(host.address()).reinterpret(4097)))
                .as("the whole block and one byte more").isFalse();
        assertThat(gpu.liveAllocCount()).as("pinned memory is not a device allocation").isZero();
        try (Arena arena = Arena.ofConfined()) {
            assertThat(gpu.isPinned(arena.allocate(64))).isFalse();
        }
        assertThat(gpu.isPinned(MemorySegment.ofArray(new byte[64]))).isFalse();

        DevicePtr d = gpu.hostPtrToDevice(host);
        assertThat(d.isNull()).isFalse();
        assertThat(gpu.hostPtrToDevice(host.asSlice(100))).isEqualTo(d.plus(100));

        host.fill((byte) 0);
        gpu.freeHostPinned(host);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment again = MemorySegment.ofAddress(host.address()).reinterpret(4096, arena, null);
            assertThat(gpu.isPinned(again)).as("freed pinned memory is unregistered").isFalse();
        }
    }

    /** A kernel writes host-visible page-locked memory through its device pointer. */
    @Test
    public void kernelWritesThroughPinnedDevicePointerAreVisibleOnHost() {
        MemorySegment host = gpu.allocHostPinned(256);
        host.fill((byte) 0);
        fill(gpu.hostPtrToDevice(host), 2.5f, 64, Stream.DEFAULT);
        gpu.synchronize();
        for (int i = 0; i < 64; i++) {
            assertThat(host.getAtIndex(ValueLayout.JAVA_FLOAT, i)).isEqualTo(2.5f);
        }
        gpu.freeHostPinned(host);
    }

    /** Page-locked memory works as the source and destination of blocking copies. */
    @Test
    public void pinnedMemoryRoundTrips() {
        MemorySegment host = gpu.allocHostPinned(1024);
        for (int i = 0; i < 256; i++) {
            host.setAtIndex(ValueLayout.JAVA_INT, i, i * 3);
        }
        DevicePtr p = gpu.alloc(1024);
        gpu.copyH2D(host, p);
        host.fill((byte) 0);
        gpu.copyD2H(p, host);
        for (int i = 0; i < 256; i++) {
            assertThat(host.getAtIndex(ValueLayout.JAVA_INT, i)).isEqualTo(i * 3);
        }
        gpu.free(p);
        gpu.freeHostPinned(host);
    }

    /**
     * Closing the runtime while another thread allocates and frees: each of that thread's calls
     * either works or, once closed, throws {@link IllegalStateException} (a free of a pointer the
     * close swept may also be INVALID_VALUE); nothing else, and no crash.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void closeWhileAnotherThreadAllocates() throws Exception {
        allowLeaks();
        AtomicReference<Throwable> unexpected = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread worker = Thread.ofVirtual().start(() -> {
            try {
                int n = 0;
                while (true) {
                    DevicePtr p = gpu.alloc(256);
                    gpu.copyH2D(ints(64, n), p);
                    try {
                        gpu.free(p);
                    } catch (GpuException e) {
                        if (e.error() != CudaError.INVALID_VALUE) {
                            throw e;
                        }
                    }
                    if (++n == 20) {
                        started.countDown();
                    }
                }
            } catch (IllegalStateException expected) {
                started.countDown();
            } catch (Throwable t) {
                unexpected.set(t);
                started.countDown();
            }
        });
        started.await();
        gpu.close();
        worker.join(30_000);
        assertThat(worker.isAlive()).as("the worker ended after close").isFalse();
        assertThat(unexpected.get()).as("what the worker threw").isNull();
    }

    /**
     * Allocations from many virtual threads get distinct pointers and all reach the ledger.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void concurrentAllocationsAreAllRecorded() throws Exception {
        int threads = 16;
        int each = 20;
        List<Thread> workers = new ArrayList<>();
        List<DevicePtr> all = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < each; i++) {
                        DevicePtr p = gpu.alloc(64 + id);
                        gpu.copyH2D(ints(16, id), p);
                        all.add(p);
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(all).doesNotHaveDuplicates().hasSize(threads * each);
        assertThat(gpu.liveAllocCount()).isEqualTo(threads * each);
        assertThat(gpu.liveAllocations()).extracting(Allocation::index).doesNotHaveDuplicates();
        all.forEach(gpu::free);
    }
}
