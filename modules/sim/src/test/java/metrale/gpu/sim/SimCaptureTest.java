// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

/** The stream-capture table of CUDA_SEMANTICS.md section 3, row by row. */
class SimCaptureTest {

    private static final int GLOBAL = 0;
    private static final int THREAD_LOCAL = 1;
    private static final int RELAXED = 2;

    @Test
    void beginAndEndRules() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            fails(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> dev.streamBeginCapture(0, GLOBAL));
            fails(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> dev.streamBeginCapture(1, GLOBAL));
            fails(CudaError.INVALID_VALUE, () -> dev.streamBeginCapture(s, 7));
            fails(CudaError.ILLEGAL_STATE, () -> dev.streamEndCapture(s)).hasMessageContaining("not capturing");
            dev.streamBeginCapture(s, GLOBAL);
            assertThat(dev.streamIsCapturing(s)).isEqualTo(1);
            fails(CudaError.ILLEGAL_STATE, () -> dev.streamBeginCapture(s, GLOBAL));
            long g = dev.streamEndCapture(s);
            assertThat(g).isNotZero();
            assertThat(dev.streamIsCapturing(s)).isZero();
            // The per-thread stream may capture.
            dev.streamBeginCapture(2, RELAXED);
            assertThat(dev.streamIsCapturing(2)).isEqualTo(1);
            dev.streamEndCapture(2);
        }
    }

    @Test
    void capturedWorkIsRecordedNotRun() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(4);
            long s = fx.dev.streamCreate(0);
            fx.dev.streamBeginCapture(s, GLOBAL);
            fx.add(s, p, 1, 4);
            fx.dev.memsetD8Async(p, 9, 4, s);
            assertThat(fx.dev.simControls().pendingOperations()).isZero();
            fx.dev.streamEndCapture(s);
            fx.dev.ctxSynchronize();
            assertThat(fx.ints(p, 4)).containsOnly(0);
        }
    }

    /** Begins a capture on a new blocking stream, runs {@code call}, expects {@code error} and the capture invalidated. */
    private static void invalidates(Fixture fx, int mode, CudaError error, CaptureCall call) {
        long s = fx.dev.streamCreate(0);
        long buf = fx.dev.memAlloc(4);
        fx.dev.streamBeginCapture(s, mode);
        fails(error, () -> call.run(fx.dev, s));
        assertThat(fx.dev.streamIsCapturing(s)).as("status after %s", error).isEqualTo(2);
        fails(CudaError.STREAM_CAPTURE_INVALIDATED, () -> fx.dev.memsetD8Async(buf, 0, 4, s));
        fails(CudaError.STREAM_CAPTURE_INVALIDATED, () -> fx.dev.streamEndCapture(s));
        assertThat(fx.dev.streamIsCapturing(s)).isZero();
        // The stream is reusable.
        fx.dev.streamBeginCapture(s, RELAXED);
        fx.dev.streamEndCapture(s);
    }

    /** Begins a capture on a new blocking stream, runs {@code call}, expects success and the capture intact. */
    private static void allowed(Fixture fx, int mode, CaptureCall call) {
        long s = fx.dev.streamCreate(0);
        fx.dev.streamBeginCapture(s, mode);
        call.run(fx.dev, s);
        assertThat(fx.dev.streamIsCapturing(s)).isEqualTo(1);
        assertThat(fx.dev.streamEndCapture(s)).isNotZero();
    }

    @FunctionalInterface
    private interface CaptureCall {
        void run(SimDevice dev, long capturing);
    }

    @Test
    void syncOrQueryOfTheCapturingStreamAndCtxSynchronizeAre900InEveryMode() {
        try (Fixture fx = new Fixture()) {
            for (int mode : new int[] {GLOBAL, THREAD_LOCAL, RELAXED}) {
                invalidates(fx, mode, CudaError.STREAM_CAPTURE_UNSUPPORTED, SimDevice::streamSynchronize);
                invalidates(fx, mode, CudaError.STREAM_CAPTURE_UNSUPPORTED, SimDevice::streamQuery);
                invalidates(fx, mode, CudaError.STREAM_CAPTURE_UNSUPPORTED, (d, s) -> d.ctxSynchronize());
            }
        }
    }

    @Test
    void syncOrQueryOfAnotherIdleStreamIs900UnderGlobalOnly() {
        try (Fixture fx = new Fixture()) {
            long other = fx.dev.streamCreate(0);
            invalidates(fx, GLOBAL, CudaError.STREAM_CAPTURE_UNSUPPORTED, (d, s) -> d.streamSynchronize(other));
            invalidates(fx, GLOBAL, CudaError.STREAM_CAPTURE_UNSUPPORTED, (d, s) -> d.streamQuery(other));
            allowed(fx, RELAXED, (d, s) -> d.streamSynchronize(other));
        }
    }

    @Test
    void allocationAndFreeAre900UnderGlobalAndThreadLocalButAllowedUnderRelaxed() {
        try (Fixture fx = new Fixture()) {
            long p = fx.dev.memAlloc(16);
            for (int mode : new int[] {GLOBAL, THREAD_LOCAL}) {
                invalidates(fx, mode, CudaError.STREAM_CAPTURE_UNSUPPORTED, (d, s) -> d.memAlloc(16));
                invalidates(fx, mode, CudaError.STREAM_CAPTURE_UNSUPPORTED, (d, s) -> d.memFree(0));
                invalidates(fx, mode, CudaError.STREAM_CAPTURE_UNSUPPORTED, (d, s) -> d.memHostAlloc(16, 0));
            }
            long before = fx.dev.memGetInfo().free();
            allowed(fx, RELAXED, (d, s) -> d.memFree(d.memAlloc(16)));
            allowed(fx, RELAXED, (d, s) -> d.memFreeHost(d.memHostAlloc(16, 0)));
            assertThat(fx.dev.memGetInfo().free()).isEqualTo(before);
            fx.dev.memFree(p);
        }
    }

    @Test
    void moduleLoadsAndStreamOrEventCreationAreAllowedInEveryMode() {
        try (Fixture fx = new Fixture()) {
            allowed(fx, GLOBAL, (d, s) -> {
                d.moduleLoadData("other", SimKernels.image("other"));
                d.streamCreate(0);
                d.eventCreate(0);
            });
        }
    }

    @Test
    void legacyWorkAndSynchronousCopiesAre906WhileABlockingStreamCaptures() {
        try (Fixture fx = new Fixture()) {
            long p = fx.dev.memAlloc(16);
            int[] host = new int[4];
            invalidates(fx, RELAXED, CudaError.STREAM_CAPTURE_IMPLICIT, (d, s) -> d.memsetD8Async(p, 0, 16, 0));
            invalidates(fx, RELAXED, CudaError.STREAM_CAPTURE_IMPLICIT,
                    (d, s) -> d.memcpyHtoD(p, java.lang.foreign.MemorySegment.ofArray(host), 16));
            invalidates(fx, RELAXED, CudaError.STREAM_CAPTURE_IMPLICIT,
                    (d, s) -> d.memcpyDtoH(java.lang.foreign.MemorySegment.ofArray(host), p, 16));
            invalidates(fx, GLOBAL, CudaError.STREAM_CAPTURE_IMPLICIT, (d, s) -> fx.add(0, p, 1, 4));
        }
    }

    @Test
    void aNonBlockingCaptureLetsLegacyWorkAndSynchronousCopiesThrough() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(4);
            long nb = fx.dev.streamCreate(1);
            fx.dev.streamBeginCapture(nb, GLOBAL);
            fx.dev.memsetD8Async(p, 0, 16, 0);
            SimTestSupport.writeInts(fx.dev, p, 1, 2, 3, 4);
            assertThat(fx.dev.streamIsCapturing(0)).isZero();
            assertThat(fx.dev.streamEndCapture(nb)).isNotZero();
            assertThat(fx.ints(p, 4)).containsExactly(1, 2, 3, 4);
        }
    }

    @Test
    void isCapturingOnLegacyIs906WithoutInvalidating() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, GLOBAL);
            fails(CudaError.STREAM_CAPTURE_IMPLICIT, () -> dev.streamIsCapturing(0));
            fails(CudaError.STREAM_CAPTURE_IMPLICIT, () -> dev.streamIsCapturing(1));
            assertThat(dev.streamIsCapturing(s)).isEqualTo(1);
            dev.streamEndCapture(s);
            assertThat(dev.streamIsCapturing(0)).isZero();
        }
    }

    @Test
    void aCapturedEventCannotBeQueriedOrSynchronized() {
        try (Fixture fx = new Fixture()) {
            long e = fx.dev.eventCreate(0);
            invalidates(fx, RELAXED, CudaError.CAPTURED_EVENT, (d, s) -> {
                d.eventRecord(e, s);
                d.eventQuery(e);
            });
            invalidates(fx, RELAXED, CudaError.CAPTURED_EVENT, (d, s) -> {
                d.eventRecord(e, s);
                d.eventSynchronize(e);
            });
            // After the capture ends the event is usable again.
            assertThat(fx.dev.eventQuery(e)).isTrue();
        }
    }

    @Test
    void waitingOnAnOutsideEventIs905UnlessExternal() {
        try (Fixture fx = new Fixture()) {
            long outside = fx.dev.eventCreate(0);
            long other = fx.dev.streamCreate(0);
            fx.dev.eventRecord(outside, other);
            invalidates(fx, RELAXED, CudaError.STREAM_CAPTURE_ISOLATION, (d, s) -> d.streamWaitEvent(s, outside, 0));
            allowed(fx, RELAXED, (d, s) -> d.streamWaitEvent(s, outside, 1));
        }
    }

    @Test
    void anInvalidLaunchConfigurationIs1AndInvalidates() {
        try (Fixture fx = new Fixture()) {
            long p = fx.dev.memAlloc(16);
            invalidates(fx, RELAXED, CudaError.INVALID_VALUE,
                    (d, s) -> fx.launch("add", LaunchConfig.of(1, 1025), s, a -> a.ptr(p).i32(1).i32(4)));
        }
    }

    @Test
    void forkAndJoinThroughEvents() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(1);
            long q = fx.zeros(1);
            long s = dev.streamCreate(0);
            long s2 = dev.streamCreate(0);
            long fork = dev.eventCreate(0);
            long join = dev.eventCreate(0);
            dev.streamBeginCapture(s, GLOBAL);
            fx.add(s, p, 1, 1);
            dev.eventRecord(fork, s);
            dev.streamWaitEvent(s2, fork, 0);
            assertThat(dev.streamIsCapturing(s2)).isEqualTo(1);
            fx.add(s2, q, 1, 1);
            dev.eventRecord(join, s2);
            dev.streamWaitEvent(s, join, 0);
            fails(CudaError.STREAM_CAPTURE_UNMATCHED, () -> dev.streamEndCapture(s2));
            assertThat(dev.streamIsCapturing(s)).isEqualTo(2);
            fails(CudaError.STREAM_CAPTURE_INVALIDATED, () -> dev.streamEndCapture(s));
            assertThat(dev.streamIsCapturing(s2)).isZero();

            dev.streamBeginCapture(s, GLOBAL);
            fx.add(s, p, 1, 1);
            dev.eventRecord(fork, s);
            dev.streamWaitEvent(s2, fork, 0);
            fx.add(s2, q, 1, 1);
            dev.eventRecord(join, s2);
            dev.streamWaitEvent(s, join, 0);
            long g = dev.streamEndCapture(s);
            assertThat(dev.streamIsCapturing(s2)).isZero();
            long x = dev.graphInstantiate(g);
            dev.graphLaunch(x, s);
            dev.streamSynchronize(s);
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
            assertThat(fx.ints(q, 1)[0]).isEqualTo(1);
        }
    }

    @Test
    void theLegacyStreamCannotJoinACapture() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long nb = dev.streamCreate(1);
            long e = dev.eventCreate(0);
            dev.streamBeginCapture(nb, RELAXED);
            dev.eventRecord(e, nb);
            fails(CudaError.STREAM_CAPTURE_IMPLICIT, () -> dev.streamWaitEvent(0, e, 0));
            assertThat(dev.streamIsCapturing(nb)).isEqualTo(2);
            fails(CudaError.STREAM_CAPTURE_INVALIDATED, () -> dev.streamEndCapture(nb));
        }
    }

    @Test
    void anUnjoinedForkIs904AndBothStreamsStopCapturing() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long q = fx.zeros(1);
            long s = dev.streamCreate(0);
            long s2 = dev.streamCreate(0);
            long fork = dev.eventCreate(0);
            dev.streamBeginCapture(s, GLOBAL);
            dev.eventRecord(fork, s);
            dev.streamWaitEvent(s2, fork, 0);
            fx.add(s2, q, 1, 1);
            fails(CudaError.STREAM_CAPTURE_UNJOINED, () -> dev.streamEndCapture(s)).hasMessageContaining("was not joined back");
            assertThat(dev.streamIsCapturing(s)).isZero();
            assertThat(dev.streamIsCapturing(s2)).isZero();
        }
    }

    @Test
    void globalCaptureInOneThreadForbidsUnsafeCallsInOthers() throws Exception {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            long mine = dev.streamCreate(0);
            dev.streamBeginCapture(s, GLOBAL);
            assertThat(inOtherThread(() -> dev.memAlloc(64))).isEqualTo(CudaError.STREAM_CAPTURE_UNSUPPORTED);
            assertThat(dev.streamIsCapturing(s)).isEqualTo(2);
            fails(CudaError.STREAM_CAPTURE_INVALIDATED, () -> dev.streamEndCapture(s));

            dev.streamBeginCapture(s, GLOBAL);
            assertThat(inOtherThread(() -> dev.streamSynchronize(mine))).isEqualTo(CudaError.STREAM_CAPTURE_UNSUPPORTED);
            fails(CudaError.STREAM_CAPTURE_INVALIDATED, () -> dev.streamEndCapture(s));
        }
    }

    @Test
    void threadLocalAndRelaxedCapturesLeaveOtherThreadsAlone() throws Exception {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            for (int mode : new int[] {THREAD_LOCAL, RELAXED}) {
                dev.streamBeginCapture(s, mode);
                assertThat(inOtherThread(() -> dev.memFree(dev.memAlloc(64)))).isEqualTo(CudaError.SUCCESS);
                assertThat(dev.streamIsCapturing(s)).isEqualTo(1);
                dev.streamEndCapture(s);
            }
        }
    }

    @Test
    void underThreadLocalAnotherThreadsEndIs908AndStillEndsTheCapture() throws Exception {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, THREAD_LOCAL);
            assertThat(inOtherThread(() -> dev.streamEndCapture(s))).isEqualTo(CudaError.STREAM_CAPTURE_WRONG_THREAD);
            assertThat(dev.streamIsCapturing(s)).isZero();
            fails(CudaError.ILLEGAL_STATE, () -> dev.streamEndCapture(s));
            // RELAXED captures may be ended by any thread.
            dev.streamBeginCapture(s, RELAXED);
            assertThat(inOtherThread(() -> dev.streamEndCapture(s))).isEqualTo(CudaError.SUCCESS);
        }
    }

    /** Runs {@code call} on another platform thread; {@return SUCCESS or the error it raised} */
    private static CudaError inOtherThread(Runnable call) throws InterruptedException {
        AtomicReference<CudaError> out = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                call.run();
                out.set(CudaError.SUCCESS);
            } catch (GpuException e) {
                out.set(e.error());
            }
        });
        t.join();
        return out.get();
    }
}
