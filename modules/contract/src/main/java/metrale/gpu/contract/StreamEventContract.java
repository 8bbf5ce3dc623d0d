// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.GraphHandle;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Streams and events: creation, ordering within a stream and across streams through events, the
 * legacy default stream's implicit synchronization with blocking streams, queries, destruction
 * with pending work, and elapsed time.
 */
public abstract class StreamEventContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected StreamEventContract() {
    }

    /** The default stream is {@link Stream#DEFAULT}; created streams are distinct and not legacy. */
    @Test
    public void createdStreamsAreDistinct() {
        assertThat(gpu.defaultStream()).isEqualTo(Stream.DEFAULT);
        Stream a = gpu.createStream();
        Stream b = gpu.createStream(true);
        Stream c = gpu.createStream(false);
        assertThat(a).isNotEqualTo(b).isNotEqualTo(c);
        assertThat(b).isNotEqualTo(c);
        for (Stream s : new Stream[] {a, b, c}) {
            assertThat(s.isLegacyDefault()).isFalse();
            assertThat(gpu.streamQuery(s)).as("a new stream is idle").isTrue();
        }
        gpu.destroyStream(a);
        gpu.destroyStream(b);
        gpu.destroyStream(c);
    }

    /** After a synchronize the stream's work is done and its query says so. */
    @Test
    public void synchronizeCompletesTheStream() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4096);
        fill(p, 1f, 1024, s);
        gpu.synchronize(s);
        assertThat(gpu.streamQuery(s)).isTrue();
        assertThat(readFloats(p, 1024)).containsOnly(1f);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** A stream query eventually reports the work done, without a synchronize. */
    @Test
    public void streamQueryEventuallyReportsDone() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        fill(p, 2f, 16, s);
        if (observableAsync()) {
            assertThat(gpu.streamQuery(s)).as("a query while the fill is pending").isFalse();
        }
        assertThat(pollUntil(() -> gpu.streamQuery(s))).as("the stream became idle").isTrue();
        assertThat(readFloats(p, 16)).containsOnly(2f);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** An event wait orders one stream's work after another's. */
    @Test
    public void streamWaitEventOrdersAcrossStreams() {
        Stream producer = gpu.createStream(true);
        Stream consumer = gpu.createStream(true);
        Event e = gpu.createEvent();
        DevicePtr p = gpu.alloc(4 * 256);
        gpu.memsetAsync(p, 0, 4 * 256, producer);
        addI32(p, 10, 256, producer);
        gpu.recordEvent(e, producer);
        gpu.streamWaitEvent(consumer, e);
        addI32(p, 1, 256, consumer);
        gpu.synchronize(consumer);
        assertThat(readInts(p, 256)).containsOnly(11);
        gpu.destroyEvent(e);
        gpu.destroyStream(producer);
        gpu.destroyStream(consumer);
        gpu.free(p);
    }

    /** A chain across three streams through two events keeps the program order. */
    @Test
    public void eventChainsAcrossThreeStreams() {
        Stream[] s = {gpu.createStream(true), gpu.createStream(true), gpu.createStream()};
        Event e1 = gpu.createEvent();
        Event e2 = gpu.createEvent();
        DevicePtr p = gpu.alloc(4 * 64);
        fill(p, 0f, 64, s[0]);
        addI32(p, 1, 64, s[0]);
        gpu.recordEvent(e1, s[0]);
        gpu.streamWaitEvent(s[1], e1);
        addI32(p, 2, 64, s[1]);
        gpu.recordEvent(e2, s[1]);
        gpu.streamWaitEvent(s[2], e2);
        addI32(p, 4, 64, s[2]);
        gpu.eventSynchronize(e2);
        gpu.synchronize(s[2]);
        assertThat(readInts(p, 64)).containsOnly(7);
        for (Stream x : s) {
            gpu.destroyStream(x);
        }
        gpu.destroyEvent(e1);
        gpu.destroyEvent(e2);
        gpu.free(p);
    }

    /** eventSynchronize waits for the work recorded before the event. */
    @Test
    public void eventSynchronizeWaitsForRecordedWork() {
        Stream s = gpu.createStream(true);
        Event e = gpu.createEvent();
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 0), p);
        addI32(p, 3, 16, s);
        gpu.recordEvent(e, s);
        gpu.eventSynchronize(e);
        assertThat(gpu.eventQuery(e)).isTrue();
        int[] out = new int[16];
        gpu.copyD2HOnStream(p, java.lang.foreign.MemorySegment.ofArray(out), s);
        assertThat(out).containsOnly(3);
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** An event query eventually reports the recorded work done. */
    @Test
    public void eventQueryEventuallyReportsDone() {
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        noop(s);
        gpu.recordEvent(e, s);
        if (observableAsync()) {
            assertThat(gpu.eventQuery(e)).as("a query while the recorded work is pending").isFalse();
        }
        assertThat(pollUntil(() -> gpu.eventQuery(e))).isTrue();
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
    }

    /** A never-recorded event is complete: query true, sync returns, waiting on it is a no-op (case 19). */
    @Test
    public void neverRecordedEventIsComplete() {
        Event e = gpu.createEvent();
        assertThat(gpu.eventQuery(e)).isTrue();
        gpu.eventSynchronize(e);
        Stream s = gpu.createStream();
        gpu.streamWaitEvent(s, e);
        DevicePtr p = gpu.alloc(64);
        fill(p, 1f, 16, s);
        gpu.synchronize(s);
        assertThat(readFloats(p, 16)).containsOnly(1f);
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Recording an event again moves it to the later point of the stream. */
    @Test
    public void reRecordingMovesTheEvent() {
        Stream s = gpu.createStream(true);
        Stream other = gpu.createStream(true);
        Event e = gpu.createEvent();
        DevicePtr p = gpu.alloc(64);
        gpu.memsetAsync(p, 0, 64, s);
        gpu.recordEvent(e, s);
        addI32(p, 5, 16, s);
        gpu.recordEvent(e, s);
        gpu.streamWaitEvent(other, e);
        addI32(p, 1, 16, other);
        gpu.synchronize(other);
        assertThat(readInts(p, 16)).containsOnly(6);
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
        gpu.destroyStream(other);
        gpu.free(p);
    }

    /** Work on the legacy default stream waits for earlier work on blocking streams. */
    @Test
    public void legacyStreamWaitsForBlockingStreams() {
        Stream s = gpu.createStream(false);
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        addI32(p, 4, 16, s);
        addI32(p, 1, 16, Stream.DEFAULT);
        gpu.synchronize(Stream.DEFAULT);
        assertThat(readInts(p, 16)).containsOnly(5);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Work on a blocking stream waits for earlier work on the legacy default stream. */
    @Test
    public void blockingStreamsWaitForLegacyStream() {
        Stream s = gpu.createStream(false);
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        addI32(p, 4, 16, Stream.DEFAULT);
        addI32(p, 1, 16, s);
        gpu.synchronize(s);
        int[] out = new int[16];
        gpu.copyD2HOnStream(p, java.lang.foreign.MemorySegment.ofArray(out), s);
        assertThat(out).containsOnly(5);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Synchronizing the device completes every stream. */
    @Test
    public void deviceSynchronizeCompletesEveryStream() {
        Stream a = gpu.createStream(true);
        Stream b = gpu.createStream(true);
        DevicePtr pa = gpu.alloc(64);
        DevicePtr pb = gpu.alloc(64);
        fill(pa, 1f, 16, a);
        fill(pb, 2f, 16, b);
        gpu.synchronize();
        assertThat(gpu.streamQuery(a)).isTrue();
        assertThat(gpu.streamQuery(b)).isTrue();
        assertThat(readFloats(pa, 16)).containsOnly(1f);
        assertThat(readFloats(pb, 16)).containsOnly(2f);
        gpu.destroyStream(a);
        gpu.destroyStream(b);
        gpu.free(pa);
        gpu.free(pb);
    }

    /** Destroying a stream with pending work returns at once and the work still completes (case 21). */
    @Test
    public void destroyedStreamsPendingWorkCompletes() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 0), p);
        spin(100, s);
        addI32(p, 1, 16, s);
        gpu.destroyStream(s);
        gpu.synchronize();
        assertThat(readInts(p, 16)).containsOnly(1);
        gpu.free(p);
    }

    /** Elapsed time between two completed events is not negative; reversed, it is the negation (case 20). */
    @Test
    public void elapsedTimeHasASign() {
        Stream s = gpu.createStream();
        Event start = gpu.createEvent();
        Event end = gpu.createEvent();
        gpu.recordEvent(start, s);
        spin(5, s);
        gpu.recordEvent(end, s);
        gpu.synchronize(s);
        float forward = gpu.elapsedMillis(start, end);
        float backward = gpu.elapsedMillis(end, start);
        assertThat(forward).isGreaterThanOrEqualTo(0f);
        assertThat(backward).isLessThanOrEqualTo(0f);
        assertThat(backward).isCloseTo(-forward, org.assertj.core.api.Assertions.within(0.01f));
        gpu.destroyEvent(start);
        gpu.destroyEvent(end);
        gpu.destroyStream(s);
    }

    /** Elapsed time needs two recorded, timed events: otherwise INVALID_HANDLE (case 20). */
    @Test
    public void elapsedTimeNeedsRecordedTimedEvents() {
        Stream s = gpu.createStream();
        Event a = gpu.createEvent();
        Event b = gpu.createEvent();
        Event untimed = gpu.createEvent(2);
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(a, b));
        gpu.recordEvent(a, s);
        gpu.recordEvent(untimed, s);
        gpu.synchronize(s);
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(a, b));
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(a, untimed));
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(untimed, a));
        gpu.recordEvent(b, s);
        gpu.synchronize(s);
        assertThat(gpu.elapsedMillis(a, b)).isGreaterThanOrEqualTo(0f);
        gpu.destroyEvent(a);
        gpu.destroyEvent(b);
        gpu.destroyEvent(untimed);
        gpu.destroyStream(s);
    }

    /** Elapsed time before the end event completes is NOT_READY (case 20). */
    @Test
    public void elapsedTimeOfIncompleteEventIsNotReady() {
        Stream s = gpu.createStream();
        Event start = gpu.createEvent();
        Event end = gpu.createEvent();
        gpu.recordEvent(start, s);
        spin(300, s);
        gpu.recordEvent(end, s);
        assertCuda(CudaError.NOT_READY, () -> gpu.elapsedMillis(start, end));
        gpu.synchronize(s);
        assertThat(gpu.elapsedMillis(start, end)).isGreaterThanOrEqualTo(0f);
        gpu.destroyEvent(start);
        gpu.destroyEvent(end);
        gpu.destroyStream(s);
    }

    /** Event flags: blocking sync and disable timing are accepted; interprocess alone or unknown bits are INVALID_VALUE (case 17). */
    @Test
    public void eventFlags() {
        Event blocking = gpu.createEvent(1);
        Event untimed = gpu.createEvent(2);
        Event both = gpu.createEvent(3);
        Stream s = gpu.createStream();
        for (Event e : new Event[] {blocking, untimed, both}) {
            gpu.recordEvent(e, s);
            gpu.eventSynchronize(e);
            assertThat(gpu.eventQuery(e)).isTrue();
            gpu.destroyEvent(e);
        }
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.createEvent(4));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.createEvent(8));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.createEvent(-1));
        gpu.destroyStream(s);
        assertStillWorks();
    }

    /** Stream and device synchronizations tick the stream-sync counter, once each. */
    @Test
    public void synchronizationsAreCounted() {
        var c = gpu.telemetry().counters();
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        gpu.recordEvent(e, s);
        long before = c.streamSyncs();
        gpu.synchronize(s);
        assertThat(c.streamSyncs() - before).isEqualTo(1);
        gpu.synchronize();
        assertThat(c.streamSyncs() - before).isEqualTo(2);
        gpu.eventSynchronize(e);
        assertThat(c.streamSyncs() - before).isEqualTo(3);
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
    }

    /** Work may be enqueued on the per-thread default stream and completes with a device sync. */
    @Test
    public void perThreadDefaultStreamRunsWork() {
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        addI32(p, 9, 16, Stream.PER_THREAD);
        gpu.synchronize(Stream.PER_THREAD);
        assertThat(readInts(p, 16)).containsOnly(9);
        gpu.free(p);
    }

    /**
     * A destroy or free the driver reports as torn down (its context already gone) counts as done;
     * any other failure is reported; the handle is gone either way. A graph's
     * destroy still destroys its graph when its exec's destroy failed.
     */
    @Test
    public void aFailedReleaseIsReportedUnlessTheContextIsGone() {
        CountingDriver driver = counted();
        Stream quiet = gpu.createStream();
        Stream loud = gpu.createStream();
        Event e1 = gpu.createEvent();
        Event e2 = gpu.createEvent();
        MemorySegment h1 = gpu.allocHostPinned(4096);
        MemorySegment h2 = gpu.allocHostPinned(4096);
        driver.failNext("streamDestroy", CudaError.CONTEXT_IS_DESTROYED);
        gpu.destroyStream(quiet);
        driver.failNext("streamDestroy", CudaError.INVALID_VALUE);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.destroyStream(loud));
        driver.failNext("eventDestroy", CudaError.DEINITIALIZED);
        gpu.destroyEvent(e1);
        driver.failNext("eventDestroy", CudaError.INVALID_VALUE);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.destroyEvent(e2));
        driver.failNext("memFreeHost", CudaError.INVALID_CONTEXT);
        gpu.freeHostPinned(h1);
        driver.failNext("memFreeHost", CudaError.INVALID_VALUE);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.freeHostPinned(h2));
        for (Stream s : List.of(quiet, loud)) {
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.synchronize(s));
        }
        for (Event e : List.of(e1, e2)) {
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.eventQuery(e));
        }
        assertThat(gpu.isPinned(h1)).isFalse();
        assertThat(gpu.isPinned(h2)).isFalse();

        Stream s = gpu.createStream();
        gpu.beginCapture(s);
        noop(s);
        GraphHandle g = gpu.endCapture(s);
        long destroys = driver.calls("graphDestroy");
        driver.failNext("graphExecDestroy", CudaError.INVALID_VALUE);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.destroyGraph(g));
        assertThat(driver.calls("graphDestroy") - destroys).as("the graph destroyed after its exec failed").isEqualTo(1);
        assertCudaOneOf(() -> gpu.launchGraph(g, s), CudaError.INVALID_HANDLE, CudaError.INVALID_VALUE);
        gpu.destroyStream(s);
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }
}
