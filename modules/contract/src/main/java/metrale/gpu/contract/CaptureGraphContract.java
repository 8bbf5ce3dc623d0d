// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import metrale.gpu.CaptureMode;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Event;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Stream capture and graphs: captured work is recorded, not run; a graph replays with the
 * argument values it captured; capture status and the capture errors a runtime meets (unsupported
 * calls invalidate the capture, the legacy stream's implicit dependency, captured events, fork
 * and join).
 */
public abstract class CaptureGraphContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected CaptureGraphContract() {
    }

    /** Captured work does not run; each replay runs it once more. */
    @Test
    public void capturedWorkRunsOnlyWhenReplayed() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * 100);
        gpu.memset(p, 0, 400);
        gpu.synchronize();
        gpu.beginCapture(s);
        assertThat(gpu.streamIsCapturing(s)).isTrue();
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.ACTIVE);
        addI32(p, 5, 100, s);
        GraphHandle g = gpu.endCapture(s);
        assertThat(gpu.streamIsCapturing(s)).isFalse();
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        assertThat(readInts(p, 100)).as("nothing ran during the capture").containsOnly(0);
        for (int i = 1; i <= 3; i++) {
            gpu.launchGraph(g, s);
            gpu.synchronize(s);
            assertThat(readInts(p, 100)).as("after replay %d", i).containsOnly(5 * i);
        }
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** A graph replays the argument values it captured, whatever the argument buffer holds later. */
    @Test
    public void replayUsesCapturedArgumentValues() {
        Stream s = gpu.createStream(true);
        DevicePtr a = gpu.alloc(64);
        DevicePtr b = gpu.alloc(64);
        gpu.memset(a, 0, 64);
        gpu.memset(b, 0, 64);
        gpu.synchronize();
        gpu.beginCapture(s);
        gpu.launch(kernel("add_i32"), LaunchConfig.of(1, 16), s, args.clear().ptr(a).i32(7).i32(16));
        args.clear().ptr(b).i32(100).i32(16);
        GraphHandle g = gpu.endCapture(s);
        args.clear().ptr(b).i32(1000).i32(16);
        gpu.launchGraph(g, s);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readInts(a, 16)).containsOnly(14);
        assertThat(readInts(b, 16)).containsOnly(0);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
        gpu.free(a);
        gpu.free(b);
    }

    /** Memsets, device-to-device copies and kernels are captured in order. */
    @Test
    public void capturesMemsetCopyAndKernelsInOrder() {
        Stream s = gpu.createStream();
        DevicePtr src = gpu.alloc(4 * 32);
        DevicePtr dst = gpu.alloc(4 * 32);
        gpu.copyH2D(iota(32, 0), src);
        gpu.copyH2D(ints(32, -1), dst);
        gpu.beginCapture(s);
        gpu.memsetAsync(dst, 0, 4 * 32, s);
        gpu.copyD2DAsync(src, dst, 4 * 16, s);
        addI32(dst, 100, 32, s);
        GraphHandle g = gpu.endCapture(s);
        assertThat(readInts(dst, 32)).containsOnly(-1);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        int[] out = readInts(dst, 32);
        for (int i = 0; i < 32; i++) {
            assertThat(out[i]).as("int %d", i).isEqualTo(i < 16 ? 100 + i : 100);
        }
        gpu.copyH2D(iota(32, 50), src);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readInts(dst, 16)).as("a replay reads the source as it is then").containsExactly(iota(16, 150));
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
        gpu.free(src);
        gpu.free(dst);
    }

    /**
     * An empty capture is a valid graph that does nothing: replaying it leaves memory as it was,
     * and work enqueued after it on the stream runs.
     */
    @Test
    public void emptyCaptureIsAValidGraph() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 5), p);
        gpu.beginCapture(s);
        GraphHandle g = gpu.endCapture(s);
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        gpu.launchGraph(g, s);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readInts(p, 16)).as("after two replays of the empty graph").containsOnly(5);
        gpu.launchGraph(g, s);
        addI32(p, 1, 16, s);
        gpu.synchronize(s);
        assertThat(gpu.streamQuery(s)).isTrue();
        assertThat(readInts(p, 16)).as("work after the replay ran").containsOnly(6);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** A replay follows earlier work on its stream, and a later stream can wait for it through an event. */
    @Test
    public void replayIsStreamOrdered() {
        Stream cap = gpu.createStream(true);
        Stream run = gpu.createStream(true);
        Stream after = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        gpu.beginCapture(cap);
        addI32(p, 3, 16, cap);
        GraphHandle g = gpu.endCapture(cap);
        gpu.memsetAsync(p, 0, 64, run);
        gpu.launchGraph(g, run);
        Event e = gpu.createEvent();
        gpu.recordEvent(e, run);
        gpu.streamWaitEvent(after, e);
        addI32(p, 1, 16, after);
        gpu.synchronize(after);
        assertThat(readInts(p, 16)).containsOnly(4);
        gpu.destroyEvent(e);
        gpu.destroyGraph(g);
        gpu.destroyStream(cap);
        gpu.destroyStream(run);
        gpu.destroyStream(after);
        gpu.free(p);
    }

    /** Destroying a graph right after launching it: the replay still completes. */
    @Test
    public void destroyingALaunchedGraphLetsItComplete() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        gpu.beginCapture(s);
        spin(50, s);
        addI32(p, 2, 16, s);
        GraphHandle g = gpu.endCapture(s);
        gpu.launchGraph(g, s);
        gpu.destroyGraph(g);
        gpu.synchronize(s);
        assertThat(readInts(p, 16)).containsOnly(2);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Fork and join: a second stream joins the capture through an event and its work is in the graph. */
    @Test
    public void forkAndJoinAreCaptured() {
        Stream s = gpu.createStream();
        Stream side = gpu.createStream();
        Event fork = gpu.createEvent();
        Event join = gpu.createEvent();
        DevicePtr a = gpu.alloc(64);
        DevicePtr b = gpu.alloc(64);
        gpu.memset(a, 0, 64);
        gpu.memset(b, 0, 64);
        gpu.synchronize();
        gpu.beginCapture(s);
        addI32(a, 1, 16, s);
        gpu.recordEvent(fork, s);
        gpu.streamWaitEvent(side, fork);
        assertThat(gpu.streamIsCapturing(side)).as("the joined stream captures too").isTrue();
        addI32(b, 2, 16, side);
        gpu.recordEvent(join, side);
        gpu.streamWaitEvent(s, join);
        GraphHandle g = gpu.endCapture(s);
        assertThat(gpu.captureStatus(side)).isEqualTo(CaptureStatus.NONE);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readInts(a, 16)).containsOnly(1);
        assertThat(readInts(b, 16)).containsOnly(2);
        gpu.destroyGraph(g);
        gpu.destroyEvent(fork);
        gpu.destroyEvent(join);
        gpu.destroyStream(s);
        gpu.destroyStream(side);
        gpu.free(a);
        gpu.free(b);
    }

    /** A fork that is not joined back: ending is STREAM_CAPTURE_UNJOINED and both streams stop capturing. */
    @Test
    public void unjoinedForkIsRefused() {
        Stream s = gpu.createStream();
        Stream side = gpu.createStream();
        Event fork = gpu.createEvent();
        DevicePtr p = gpu.alloc(64);
        gpu.beginCapture(s);
        gpu.recordEvent(fork, s);
        gpu.streamWaitEvent(side, fork);
        addI32(p, 1, 16, side);
        assertCuda(CudaError.STREAM_CAPTURE_UNJOINED, () -> gpu.endCapture(s));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        assertThat(gpu.captureStatus(side)).isEqualTo(CaptureStatus.NONE);
        gpu.destroyEvent(fork);
        gpu.destroyStream(s);
        gpu.destroyStream(side);
        gpu.free(p);
        assertStillWorks();
    }

    /** Capture cannot begin on the legacy stream (case 25). */
    @Test
    public void captureOnLegacyStreamIsUnsupported() {
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.beginCapture(Stream.DEFAULT));
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.beginCapture(Stream.LEGACY));
        assertStillWorks();
    }

    /** Beginning twice is ILLEGAL_STATE; ending a stream that is not capturing is ILLEGAL_STATE (case 25). */
    @Test
    public void beginTwiceAndEndIdleAreIllegalState() {
        Stream s = gpu.createStream();
        assertCuda(CudaError.ILLEGAL_STATE, () -> gpu.endCapture(s));
        gpu.beginCapture(s);
        assertCuda(CudaError.ILLEGAL_STATE, () -> gpu.beginCapture(s));
        GraphHandle g = gpu.endCapture(s);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
    }

    /** Synchronizing the capturing stream is unsupported, invalidates the capture, and the stream is usable after End. */
    @Test
    public void syncDuringCaptureInvalidatesIt() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        gpu.beginCapture(s);
        addI32(p, 1, 16, s);
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.synchronize(s));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.INVALIDATED);
        assertThat(gpu.streamIsCapturing(s)).isTrue();
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> addI32(p, 1, 16, s));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        addI32(p, 2, 16, s);
        gpu.synchronize(s);
        assertThat(readInts(p, 16)).as("only the work after the failed capture ran").containsOnly(2);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /**
     * Once a capture is invalidated, every kind of work enqueued on its stream is
     * STREAM_CAPTURE_INVALIDATED (901) and none of it runs: async copies each way, device to
     * device, 2D, memset, launch and event record; a graph launch is 900 (as the H200 answers); End is 901.
     */
    @Test
    public void everyEnqueueOnAnInvalidatedCaptureIsRefused() {
        Stream s = gpu.createStream();
        Stream other = gpu.createStream();
        DevicePtr a = gpu.alloc(256);
        DevicePtr b = gpu.alloc(256);
        MemorySegment host = gpu.allocHostPinned(256);
        host.fill((byte) 5);
        Event e = gpu.createEvent();
        gpu.beginCapture(other);
        addI32(b, 1, 64, other);
        GraphHandle g = gpu.endCapture(other);
        gpu.memset(a, 7, 256);
        gpu.memset(b, 0, 256);
        gpu.synchronize();

        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.synchronize(s));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.INVALIDATED);
        Map<String, ThrowingCallable> enqueues = new LinkedHashMap<>();
        enqueues.put("copyH2DAsync", () -> gpu.copyH2DAsync(host, b, s));
        enqueues.put("copyH2DAsyncRetained", () -> gpu.copyH2DAsyncRetained(host, b, s));
        enqueues.put("copyD2HAsync", () -> gpu.copyD2HAsync(a, host, s));
        enqueues.put("copyD2DAsync", () -> gpu.copyD2DAsync(a, b, 256, s));
        enqueues.put("copyD2D2DAsync", () -> gpu.copyD2D2DAsync(a, 64, b, 64, 32, 4, s));
        enqueues.put("memsetAsync", () -> gpu.memsetAsync(b, 9, 256, s));
        enqueues.put("launch", () -> addI32(b, 3, 64, s));
        enqueues.put("recordEvent", () -> gpu.recordEvent(e, s));
        for (var c : enqueues.entrySet()) {
            GpuException x = assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, c.getValue());
            assertThat(x.getMessage()).as("%s on the invalidated capture", c.getKey()).isNotBlank();
            assertThat(gpu.captureStatus(s)).as("after %s", c.getKey()).isEqualTo(CaptureStatus.INVALIDATED);
        }
        // A graph launch is the exception: the H200 (driver 580) answers it with 900.
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.launchGraph(g, s));
        assertThat(gpu.captureStatus(s)).as("after launchGraph").isEqualTo(CaptureStatus.INVALIDATED);
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        gpu.synchronize();
        assertThat(readBytes(b, 256)).as("nothing refused ran").containsOnly((byte) 0);
        assertThat(readBytes(a, 256)).containsOnly((byte) 7);
        assertThat(host.toArray(ValueLayout.JAVA_BYTE)).as("the host buffer").containsOnly((byte) 5);
        assertThat(gpu.eventQuery(e)).as("an event never recorded is complete").isTrue();
        gpu.destroyGraph(g);
        gpu.destroyEvent(e);
        gpu.freeHostPinned(host);
        gpu.destroyStream(other);
        gpu.destroyStream(s);
        gpu.free(a);
        gpu.free(b);
    }

    /** When instantiating a captured graph fails, endCapture reports it and destroys the graph: nothing is left. */
    @Test
    public void aFailedInstantiateDestroysTheCapturedGraph() {
        CountingDriver driver = counted();
        Stream s = gpu.createStream();
        gpu.beginCapture(s);
        noop(s);
        driver.failNext("graphInstantiate", CudaError.OUT_OF_MEMORY);
        long destroys = driver.calls("graphDestroy");
        assertCuda(CudaError.OUT_OF_MEMORY, () -> gpu.endCapture(s));
        assertThat(driver.calls("graphDestroy") - destroys).as("the captured graph destroyed").isEqualTo(1);
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        GraphHandle g;
        gpu.beginCapture(s);
        noop(s);
        g = gpu.endCapture(s);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
    }

    /** Querying the capturing stream or synchronizing the device is unsupported too. */
    @Test
    public void queryAndDeviceSyncDuringCaptureAreUnsupported() {
        Stream s = gpu.createStream();
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.streamQuery(s));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.synchronize());
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.destroyStream(s);
        assertStillWorks();
    }

    /** A GLOBAL capture makes alloc and free unsupported (invalidating it); the ledger is untouched. */
    @Test
    @DriverAllocator("cuMemAlloc and cuMemFree invalidate a GLOBAL capture; the pool refuses and leaves it valid (PoolContract)")
    public void allocAndFreeDuringGlobalCaptureAreUnsupported() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.beginCapture(s, CaptureMode.GLOBAL);
        assertLedgerUnchanged(() -> assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.alloc(64)));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));

        gpu.beginCapture(s, CaptureMode.GLOBAL);
        assertLedgerUnchanged(() -> assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.free(p)));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.copyH2D(ints(16, 4), p);
        assertThat(readInts(p, 16)).as("the buffer survived the refused free").containsOnly(4);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** A RELAXED capture allows alloc and free; the capture still ends cleanly. */
    @Test
    public void allocDuringRelaxedCaptureIsAllowed() {
        Stream s = gpu.createStream();
        gpu.beginCapture(s, CaptureMode.RELAXED);
        DevicePtr p = gpu.alloc(64);
        addI32(p, 1, 16, s);
        GraphHandle g = gpu.endCapture(s);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readInts(p, 16)).containsOnly(1);
        gpu.destroyGraph(g);
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /**
     * While a blocking stream captures, legacy-stream work and a synchronous H2D are
     * STREAM_CAPTURE_IMPLICIT and invalidate it (case 26).
     */
    @Test
    public void legacyWorkDuringBlockingCaptureIsImplicit() {
        Stream s = gpu.createStream(false);
        DevicePtr p = gpu.alloc(64);

        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_IMPLICIT, () -> gpu.memsetAsync(p, 0, 64, Stream.DEFAULT));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));

        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_IMPLICIT, () -> gpu.copyH2D(ints(16, 1), p));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));

        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_IMPLICIT, () -> noop(Stream.DEFAULT));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));

        gpu.destroyStream(s);
        gpu.free(p);
        assertStillWorks();
    }

    /** Asking about the legacy stream during a blocking capture fails but does not invalidate (case 26). */
    @Test
    public void legacyCaptureQueryDuringBlockingCapture() {
        Stream s = gpu.createStream(false);
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_IMPLICIT, () -> gpu.captureStatus(Stream.LEGACY));
        assertThat(gpu.streamIsCapturing(Stream.LEGACY)).as("a failed query counts as capturing").isTrue();
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.ACTIVE);
        GraphHandle g = gpu.endCapture(s);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
    }

    /** With a non-blocking stream capturing, legacy work and a synchronous H2D are allowed (case 26). */
    @Test
    public void legacyWorkDuringNonBlockingCaptureIsAllowed() {
        Stream nb = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        gpu.beginCapture(nb);
        gpu.memsetAsync(p, 0, 64, Stream.DEFAULT);
        gpu.copyH2D(ints(16, 3), p);
        addI32(p, 1, 16, nb);
        GraphHandle g = gpu.endCapture(nb);
        assertThat(readInts(p, 16)).as("legacy work ran; captured work did not").containsOnly(3);
        gpu.launchGraph(g, nb);
        gpu.synchronize(nb);
        assertThat(readInts(p, 16)).containsOnly(4);
        gpu.destroyGraph(g);
        gpu.destroyStream(nb);
        gpu.free(p);
    }

    /** Querying an event recorded in the capture is CAPTURED_EVENT and invalidates it (case 27). */
    @Test
    public void queryOfCapturedEventIsRefused() {
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        gpu.beginCapture(s);
        noop(s);
        gpu.recordEvent(e, s);
        assertCuda(CudaError.CAPTURED_EVENT, () -> gpu.eventQuery(e));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
        assertStillWorks();
    }

    /** Waiting on an event recorded outside the capture is STREAM_CAPTURE_ISOLATION (case 27). */
    @Test
    public void waitOnOutsideEventIsIsolation() {
        Stream s = gpu.createStream();
        Stream other = gpu.createStream();
        Event outside = gpu.createEvent();
        noop(other);
        gpu.recordEvent(outside, other);
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_ISOLATION, () -> gpu.streamWaitEvent(s, outside));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.destroyEvent(outside);
        gpu.destroyStream(s);
        gpu.destroyStream(other);
        assertStillWorks();
    }

    /** A launch with an invalid configuration during capture is INVALID_VALUE and invalidates the capture. */
    @Test
    public void invalidLaunchDuringCaptureInvalidatesIt() {
        Stream s = gpu.createStream();
        gpu.beginCapture(s);
        assertCuda(CudaError.INVALID_VALUE,
                () -> gpu.launch(kernel("noop"), LaunchConfig.of(Dim3.of(1), Dim3.of(1025)), s, args.clear()));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.destroyStream(s);
        assertStillWorks();
    }

    /** abortCaptureIfActive ends a live or invalidated capture without throwing, and is a no-op otherwise. */
    @Test
    public void abortCaptureIfActiveCleansUp() {
        Stream s = gpu.createStream();
        gpu.abortCaptureIfActive(s);
        gpu.beginCapture(s);
        noop(s);
        gpu.abortCaptureIfActive(s);
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.synchronize(s));
        gpu.abortCaptureIfActive(s);
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        assertThat(gpu.streamIsCapturing(s)).isFalse();
        gpu.synchronize(s);
        gpu.destroyStream(s);
    }

    /** Every capture mode records and replays. */
    @Test
    public void everyModeCaptures() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        for (CaptureMode mode : CaptureMode.values()) {
            gpu.beginCapture(s, mode);
            addI32(p, 1, 16, s);
            GraphHandle g = gpu.endCapture(s);
            gpu.launchGraph(g, s);
            gpu.synchronize(s);
            gpu.destroyGraph(g);
        }
        assertThat(readInts(p, 16)).containsOnly(CaptureMode.values().length);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** One graph launched on two streams, ordered by an event, runs twice. */
    @Test
    public void oneGraphOnTwoStreams() {
        Stream cap = gpu.createStream();
        Stream a = gpu.createStream(true);
        Stream b = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        gpu.beginCapture(cap);
        addI32(p, 10, 16, cap);
        GraphHandle g = gpu.endCapture(cap);
        gpu.launchGraph(g, a);
        Event e = gpu.createEvent();
        gpu.recordEvent(e, a);
        gpu.streamWaitEvent(b, e);
        gpu.launchGraph(g, b);
        gpu.synchronize(b);
        assertThat(readInts(p, 16)).containsOnly(20);
        gpu.destroyEvent(e);
        gpu.destroyGraph(g);
        for (Stream x : new Stream[] {cap, a, b}) {
            gpu.destroyStream(x);
        }
        gpu.free(p);
    }

    private static Throwable onAnotherThread(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) throws InterruptedException {
        // A platform thread: CUDA's THREAD_LOCAL capture mode is about OS threads.
        Throwable[] out = new Throwable[1];
        Thread t = Thread.ofPlatform().start(() -> out[0] = org.assertj.core.api.Assertions.catchThrowable(call));
        t.join();
        return out[0];
    }

    /**
     * A GLOBAL capture makes another thread's alloc STREAM_CAPTURE_UNSUPPORTED and invalidates the capture (case 28).
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    @DriverAllocator("cuMemAlloc on another thread invalidates a GLOBAL capture; the pool refuses and leaves it valid (PoolContract)")
    public void globalCaptureForbidsUnsafeCallsOnOtherThreads() throws Exception {
        Stream s = gpu.createStream();
        gpu.beginCapture(s, CaptureMode.GLOBAL);
        Throwable t = onAnotherThread(() -> gpu.alloc(64));
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> {
            if (t != null) {
                throw t;
            }
        });
        assertThat(gpu.liveAllocCount()).isZero();
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.destroyStream(s);
        assertStillWorks();
    }

    /**
     * A THREAD_LOCAL capture leaves another thread's alloc alone (case 28).
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void threadLocalCaptureAllowsOtherThreadsToAllocate() throws Exception {
        Stream s = gpu.createStream();
        DevicePtr[] p = new DevicePtr[1];
        gpu.beginCapture(s, CaptureMode.THREAD_LOCAL);
        Throwable t = onAnotherThread(() -> p[0] = gpu.alloc(64));
        assertThat(t).as("another thread's alloc during a THREAD_LOCAL capture").isNull();
        GraphHandle g = gpu.endCapture(s);
        gpu.destroyGraph(g);
        gpu.free(p[0]);
        gpu.destroyStream(s);
    }

    /**
     * Another thread ending a THREAD_LOCAL capture is STREAM_CAPTURE_WRONG_THREAD but ends it; ending again is ILLEGAL_STATE (case 28).
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void threadLocalCaptureEndedByAnotherThread() throws Exception {
        Stream s = gpu.createStream();
        gpu.beginCapture(s, CaptureMode.THREAD_LOCAL);
        noop(s);
        Throwable t = onAnotherThread(() -> gpu.endCapture(s));
        assertCuda(CudaError.STREAM_CAPTURE_WRONG_THREAD, () -> {
            if (t != null) {
                throw t;
            }
        });
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.NONE);
        assertCuda(CudaError.ILLEGAL_STATE, () -> gpu.endCapture(s));
        gpu.destroyStream(s);
        assertStillWorks();
    }
}
