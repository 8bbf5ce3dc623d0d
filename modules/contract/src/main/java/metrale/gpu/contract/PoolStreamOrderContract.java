// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import metrale.gpu.CaptureMode;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.MemoryPool;
import metrale.gpu.PoolRace;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * The memory pool ({@link Gpu#pool()}) across streams: stream-ordered reuse, {@code recordStream}
 * and event waits, the races the backend reports, and allocations and frees during capture.
 * {@link PoolContract} covers the pool as an allocator.
 *
 * <p>A backend's subclass runs it for one allocator, see {@link AbstractPoolContract}.
 */
public abstract class PoolStreamOrderContract extends AbstractPoolContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected PoolStreamOrderContract() {
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

    /**
     * Under a GLOBAL capture the pool refuses every allocation and free, on any stream and any
     * thread, as {@code cuMemAlloc}/{@code cuMemFree} do (900), the default allocator routed to it
     * included, but leaves the capture valid (the driver's would be invalidated) and the ledger
     * unchanged.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void globalCaptureRefusesEveryAllocAndFreeAndStaysValid() throws Exception {
        MemoryPool pool = pool();
        Stream s = gpu.createStream(true);
        Stream idle = gpu.createStream(true);
        DevicePtr before = pool.alloc(4 * 64, s);
        DevicePtr warm = pool.alloc(256, Stream.DEFAULT);
        gpu.synchronize();
        gpu.beginCapture(s, CaptureMode.GLOBAL);
        assertLedgerUnchanged(() -> {
            GpuException e = assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(1024, s));
            assertThat(e.getMessage()).contains("GLOBAL").contains("still valid");
            assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(before, s));
            GpuException other = assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(1024, idle));
            assertThat(other.getMessage()).contains(s.toString()).contains("GLOBAL");
            assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(warm));
            assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.alloc(1024));
            assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.free(warm));
            Throwable[] onOther = new Throwable[1];
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    pool.alloc(1024, idle);
                } catch (Throwable x) {
                    onOther[0] = x;
                }
            });
            try {
                t.join();
            } catch (InterruptedException x) {
                throw new AssertionError(x);
            }
            assertThat(onOther[0]).as("GLOBAL forbids every thread").isInstanceOf(GpuException.class)
                    .satisfies(x -> assertThat(((GpuException) x).error()).isEqualTo(CudaError.STREAM_CAPTURE_UNSUPPORTED));
        });
        assertThat(gpu.captureStatus(s)).as("the pool refused without touching the driver").isEqualTo(CaptureStatus.ACTIVE);
        fill(before, 4f, 64, s);
        GraphHandle g = gpu.endCapture(s);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readFloats(before, 64)).containsOnly(4f);
        gpu.destroyGraph(g);
        pool.free(before, s);
        pool.free(warm);
        DevicePtr after = pool.alloc(1024, idle);
        pool.free(after, idle);
        gpu.synchronize();
        gpu.destroyStream(s);
        gpu.destroyStream(idle);
    }

    /**
     * Under THREAD_LOCAL only the capturing thread is refused (900, capture valid); under RELAXED
     * nothing is, except an allocation or free on the capturing stream itself.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void threadLocalAndRelaxedCapturesRefuseAsTheDriverDoes() throws Exception {
        MemoryPool pool = pool();
        Stream s = gpu.createStream(true);
        Stream idle = gpu.createStream(true);
        DevicePtr buf = pool.alloc(4 * 64, s);
        gpu.synchronize();
        gpu.beginCapture(s, CaptureMode.THREAD_LOCAL);
        assertLedgerUnchanged(() -> assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(1024, idle)));
        DevicePtr[] fromOther = new DevicePtr[1];
        Throwable[] failed = new Throwable[1];
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                fromOther[0] = pool.alloc(1024, idle);
                pool.free(fromOther[0], idle);
            } catch (Throwable x) {
                failed[0] = x;
            }
        });
        t.join();
        assertThat(failed[0]).as("THREAD_LOCAL leaves other threads alone").isNull();
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.ACTIVE);
        fill(buf, 1f, 64, s);
        gpu.destroyGraph(gpu.endCapture(s));

        gpu.beginCapture(s, CaptureMode.RELAXED);
        DevicePtr q = pool.alloc(1024, idle);
        pool.free(q, idle);
        assertLedgerUnchanged(() -> assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(1024, s)));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.ACTIVE);
        fill(buf, 2f, 64, s);
        GraphHandle g = gpu.endCapture(s);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readFloats(buf, 64)).containsOnly(2f);
        gpu.destroyGraph(g);
        pool.free(buf, s);
        gpu.synchronize();
        gpu.destroyStream(s);
        gpu.destroyStream(idle);
    }

    /**
     * A block marked {@code recordStream(b)} and freed on another stream while {@code b} captures
     * in RELAXED mode: no call reports an error the caller did not make, {@code b}'s capture stays
     * valid and its graph runs, and the block is reused once {@code b}'s work before the free is done.
     */
    @Test
    public void aFreeDuringAnotherStreamsRelaxedCaptureLeavesItValid() {
        MemoryPool pool = pool();
        Stream a = gpu.createStream(true);
        Stream b = gpu.createStream(true);
        Stream c = gpu.createStream(true);
        DevicePtr p = pool.alloc(4096, a);
        DevicePtr graphBuf = pool.alloc(4 * 64, b);
        addI32(p, 1, 16, b);
        pool.recordStream(p, b);
        gpu.synchronize();
        gpu.beginCapture(b, CaptureMode.RELAXED);
        fill(graphBuf, 3f, 64, b);
        pool.free(p, a);
        DevicePtr q = pool.alloc(1024, c);
        assertThat(q).as("not the block b may still use").isNotEqualTo(p);
        pool.free(q, c);
        assertThat(gpu.captureStatus(b)).isEqualTo(CaptureStatus.ACTIVE);
        GraphHandle g = gpu.endCapture(b);
        gpu.launchGraph(g, b);
        gpu.synchronize();
        assertThat(readFloats(graphBuf, 64)).containsOnly(3f);
        gpu.destroyGraph(g);
        if (caching()) {
            // The first allocation after the capture records the deferred event; once it completed, p is reused.
            pool.free(pool.alloc(1024, c), c);
            gpu.synchronize();
            DevicePtr again = pool.alloc(4096, a);
            assertThat(again).as("reused once b's work before the free was seen done").isEqualTo(p);
            pool.free(again, a);
        }
        if (detectsRaces()) {
            assertThat(pool.races()).isEmpty();
        }
        pool.free(graphBuf, b);
        gpu.synchronize();
        gpu.destroyStream(a);
        gpu.destroyStream(b);
        gpu.destroyStream(c);
    }

    /**
     * A free deferred past a capture, of a block marked for a stream that is destroyed before the
     * capture ends: the destroyed stream's work is still ordered before any reuse, and nothing
     * fails later on its dead handle.
     */
    @Test
    public void aDeferredFreeOutlivesItsMarkedStream() {
        MemoryPool pool = pool();
        Stream a = gpu.createStream(true);
        Stream u = gpu.createStream(true);
        Stream s = gpu.createStream(true);
        DevicePtr p = pool.alloc(4096, a);
        DevicePtr graphBuf = pool.alloc(4 * 64, s);
        gpu.memsetAsync(p, 0, 64, a);
        gpu.synchronize(a);
        addI32(p, 1, 16, u);
        pool.recordStream(p, u);
        gpu.beginCapture(s, CaptureMode.RELAXED);
        fill(graphBuf, 5f, 64, s);
        pool.free(p, a);
        gpu.destroyStream(u);
        GraphHandle g = gpu.endCapture(s);
        gpu.launchGraph(g, s);
        DevicePtr q = pool.alloc(4096, a);
        gpu.synchronize();
        assertThat(readFloats(graphBuf, 64)).containsOnly(5f);
        if (caching()) {
            DevicePtr again = pool.alloc(4096, a);
            assertThat(List.of(q, again)).as("reused once the destroyed stream's work was done").contains(p);
            pool.free(again, a);
        }
        if (detectsRaces()) {
            assertThat(pool.races()).isEmpty();
        }
        pool.free(q, a);
        pool.free(graphBuf, s);
        gpu.destroyGraph(g);
        gpu.synchronize();
        gpu.destroyStream(a);
        gpu.destroyStream(s);
    }

    /**
     * The same free while {@code b} captures in GLOBAL mode is the caller's error by CUDA's rules
     * (as {@code cuMemFree} would be): 900, the block still live, and the capture still valid.
     */
    @Test
    public void aFreeDuringAnotherStreamsGlobalCaptureIsRefusedAndLeavesItValid() {
        MemoryPool pool = pool();
        Stream a = gpu.createStream(true);
        Stream b = gpu.createStream(true);
        Stream c = gpu.createStream(true);
        DevicePtr p = pool.alloc(4096, a);
        DevicePtr graphBuf = pool.alloc(4 * 64, b);
        gpu.memsetAsync(p, 0, 64, b);
        addI32(p, 1, 16, b);
        pool.recordStream(p, b);
        gpu.synchronize();
        gpu.beginCapture(b, CaptureMode.GLOBAL);
        fill(graphBuf, 3f, 64, b);
        assertLedgerUnchanged(() -> {
            GpuException e = assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.free(p, a));
            assertThat(e.getMessage()).contains(b.toString()).contains("GLOBAL").contains("nothing was freed");
            assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> pool.alloc(1024, c));
        });
        assertThat(gpu.captureStatus(b)).isEqualTo(CaptureStatus.ACTIVE);
        GraphHandle g = gpu.endCapture(b);
        gpu.launchGraph(g, b);
        gpu.synchronize();
        assertThat(readFloats(graphBuf, 64)).containsOnly(3f);
        assertThat(readInts(p, 16)).as("the refused free left the block intact").containsOnly(1);
        gpu.destroyGraph(g);
        pool.free(p, a);
        pool.free(graphBuf, b);
        gpu.synchronize();
        gpu.destroyStream(a);
        gpu.destroyStream(b);
        gpu.destroyStream(c);
    }

    /**
     * A kernel on {@code b} still writes a 4 KiB block freed on {@code c} without
     * {@code recordStream(b)}; a 512-byte block split off its interior, at no pointer the kernel
     * was given, is handed to {@code c}: the kernel can reach it through its pointer to the old
     * block, so that reuse is a race naming both sites too.
     */
    @Test
    public void aRaceOnPartOfASplitBlockIsReported() {
        assumeTrue(caching(), "the caching allocator's own reuse decisions");
        MemoryPool pool = pool();
        Stream b = gpu.createStream(true);
        Stream c = gpu.createStream(true);
        DevicePtr old = pool.alloc(4096, c); String first = here();
        gpu.memsetAsync(old, 0, 4096, c);
        gpu.synchronize(c);
        spin(300, b);
        addI32(old, 1, 1024, b);
        pool.free(old, c); String freed = here();
        DevicePtr head = pool.alloc(512, c);
        DevicePtr inner = pool.alloc(512, c); String second = here();
        assertThat(head).isEqualTo(old);
        assertThat(inner.address()).as("split off the old block's interior").isEqualTo(old.address() + 512);
        if (detectsRaces()) {
            assertThat(pool.races()).filteredOn(r -> r.ptr().equals(inner)).singleElement().satisfies(r -> {
                assertThat(r.site()).isEqualTo(second);
                assertThat(r.stream()).isEqualTo(c);
                assertThat(r.previous()).contains(first).contains(freed);
                assertThat(r.unorderedWith()).contains("add_i32");
            });
        } else {
            assertThat(pool.races()).isEmpty();
        }
        gpu.synchronize();
        pool.free(head, c);
        pool.free(inner, c);
        gpu.destroyStream(b);
        gpu.destroyStream(c);
    }
}
