// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

class SimEventTest {

    @Test
    void eventCreateFlags() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            fails(CudaError.INVALID_VALUE, () -> dev.eventCreate(4)).hasMessageContaining("requires DISABLE_TIMING");
            fails(CudaError.INVALID_VALUE, () -> dev.eventCreate(8));
            assertThat(dev.eventCreate(0)).isNotZero();
            assertThat(dev.eventCreate(1)).isNotZero();
            assertThat(dev.eventCreate(2 | 4)).isNotZero();
        }
    }

    @Test
    void aNeverRecordedEventIsCompleteAndWaitingOnItIsANoOp() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long e = dev.eventCreate(0);
            assertThat(dev.eventQuery(e)).isTrue();
            dev.eventSynchronize(e);
            long s = dev.streamCreate(0);
            dev.streamWaitEvent(s, e, 0);
            assertThat(dev.simControls().pendingOperations()).isZero();
        }
    }

    @Test
    void eventQueryReportsNotReadyUntilTheWorkBeforeTheRecordIsDone() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            long s = fx.dev.streamCreate(0);
            fx.add(s, p, 1, 1);
            long e = fx.dev.eventCreate(0);
            fx.dev.eventRecord(e, s);
            fx.add(s, p, 1, 1);
            assertThat(fx.dev.eventQuery(e)).isFalse();
            fx.dev.eventSynchronize(e);
            assertThat(fx.dev.eventQuery(e)).isTrue();
            // Only the work before the record ran.
            assertThat(fx.dev.streamQuery(s)).isFalse();
            fx.dev.streamSynchronize(s);
            assertThat(fx.ints(p, 1)[0]).isEqualTo(2);
        }
    }

    @Test
    void elapsedTimeRules() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long a = dev.eventCreate(0);
            long b = dev.eventCreate(0);
            long noTiming = dev.eventCreate(2);
            fails(CudaError.INVALID_HANDLE, () -> dev.eventElapsedTime(a, b)).hasMessageContaining("never been recorded");
            long s = dev.streamCreate(0);
            long p = fx.zeros(1 << 16);
            // Elapsed time is virtual: what the kernels between the records declare.
            dev.simControls().setKernelDuration(Fixture.MODULE, "add", 2_500_000);
            dev.eventRecord(a, s);
            fx.add(s, p, 1, 1 << 16);
            dev.eventRecord(b, s);
            dev.eventRecord(noTiming, s);
            fails(CudaError.NOT_READY, () -> dev.eventElapsedTime(a, b));
            dev.streamSynchronize(s);
            float ms = dev.eventElapsedTime(a, b);
            assertThat(ms).isEqualTo(2.5f);
            assertThat(dev.eventElapsedTime(b, a)).isEqualTo(-ms);
            fails(CudaError.INVALID_HANDLE, () -> dev.eventElapsedTime(a, noTiming)).hasMessageContaining("DISABLE_TIMING");
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void reRecordingOverwritesTheEvent() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            long s1 = fx.dev.streamCreate(1);
            long s2 = fx.dev.streamCreate(1);
            long e = fx.dev.eventCreate(0);
            fx.dev.eventRecord(e, s1);
            fx.dev.streamSynchronize(s1);
            fx.add(s2, p, 1, 1);
            fx.dev.eventRecord(e, s2);
            assertThat(fx.dev.eventQuery(e)).isFalse();
            fx.dev.eventSynchronize(e);
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
        }
    }

    @Test
    void waitExternalOutsideACaptureIsIllegalState() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            long e = dev.eventCreate(0);
            dev.eventRecord(e, s);
            fails(CudaError.ILLEGAL_STATE, () -> dev.streamWaitEvent(s, e, 1));
            fails(CudaError.INVALID_VALUE, () -> dev.streamWaitEvent(s, e, 2));
        }
    }

    @Test
    void destroyedEventsAreInvalidHandlesAndDestroyDoesNotBlock() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            long s = fx.dev.streamCreate(0);
            long e = fx.dev.eventCreate(0);
            fx.add(s, p, 1, 1);
            fx.dev.eventRecord(e, s);
            fx.dev.eventDestroy(e);
            assertThat(fx.dev.simControls().pendingOperations()).isEqualTo(2);
            fails(CudaError.INVALID_HANDLE, () -> fx.dev.eventQuery(e));
            fails(CudaError.INVALID_HANDLE, () -> fx.dev.eventDestroy(e));
            fx.dev.streamSynchronize(s);
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
        }
    }
}
