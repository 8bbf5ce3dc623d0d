// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

/** The virtual clock: declared durations, NOT_READY until they pass, waiting calls that advance it. */
class SimClockTest {

    private static final long MS = 1_000_000;

    @Test
    void aQueryIsNotReadyUntilTheDeclaredTimeHasPassed() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            dev.simControls().setKernelDuration(Fixture.MODULE, "add", 5 * MS);
            long s = dev.streamCreate(0);
            long p = fx.zeros(16);
            fx.add(s, p, 1, 16);
            assertThat(dev.simControls().clockNanos()).isZero();
            // The first query lets the kernel execute; it still runs on the virtual clock.
            assertThat(dev.streamQuery(s)).isFalse();
            assertThat(dev.simControls().pendingOperations()).isZero();
            assertThat(dev.simControls().clockNanos()).isZero();
            // The second finds it running and stands for the host's wait: the clock moves to its end.
            assertThat(dev.streamQuery(s)).isFalse();
            assertThat(dev.simControls().clockNanos()).isEqualTo(5 * MS);
            assertThat(dev.streamQuery(s)).isTrue();
        }
    }

    @Test
    void advancingTheClockCompletesRunningWork() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            dev.simControls().setKernelDuration(Fixture.MODULE, "add", 5 * MS);
            long s = dev.streamCreate(0);
            long e = dev.eventCreate(0);
            long p = fx.zeros(16);
            fx.add(s, p, 1, 16);
            dev.eventRecord(e, s);
            assertThat(dev.eventQuery(e)).isFalse();
            assertThat(dev.eventQuery(e)).isFalse();
            // Two steps: the kernel and the marker; the marker ends with the kernel, 5 ms out.
            assertThat(dev.simControls().clockNanos()).isLessThanOrEqualTo(5 * MS);
            dev.simControls().advanceClock(5 * MS);
            assertThat(dev.eventQuery(e)).isTrue();
            assertThatThrownBy(() -> dev.simControls().advanceClock(-1)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void waitingCallsAdvanceTheClockAndStreamsRunInParallel() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            dev.simControls().setKernelDuration(Fixture.MODULE, "add", 10 * MS);
            long a = dev.streamCreate(1);
            long b = dev.streamCreate(1);
            long p = fx.zeros(16);
            long q = fx.zeros(16);
            fx.add(a, p, 1, 16);
            fx.add(a, p, 1, 16);
            fx.add(b, q, 1, 16);
            dev.streamSynchronize(b);
            assertThat(dev.simControls().clockNanos()).as("b's one kernel").isEqualTo(10 * MS);
            dev.ctxSynchronize();
            // a's two kernels ran one after the other, beside b's: 20 ms, not 30.
            assertThat(dev.simControls().clockNanos()).isEqualTo(20 * MS);
            assertThat(fx.ints(p, 16)).containsOnly(2);
        }
    }

    @Test
    void aStreamWaitingOnARunningEventStartsAfterItsEnd() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            dev.simControls().setKernelDuration(Fixture.MODULE, "add", 10 * MS);
            long a = dev.streamCreate(1);
            long b = dev.streamCreate(1);
            long e = dev.eventCreate(0);
            long done = dev.eventCreate(0);
            long p = fx.zeros(16);
            fx.add(a, p, 1, 16);
            dev.eventRecord(e, a);
            // Execute a's work without letting the clock pass its end.
            assertThat(dev.eventQuery(e)).isFalse();
            assertThat(dev.eventQuery(e)).isFalse();
            dev.streamWaitEvent(b, e, 0);
            fx.add(b, p, 1, 16);
            dev.eventRecord(done, b);
            dev.eventSynchronize(done);
            assertThat(dev.simControls().clockNanos()).isEqualTo(20 * MS);
        }
    }

    @Test
    void aTwinDeclaresItsOwnDurationOverThePerKernelOne() {
        SimTwins twins = new SimTwins().register("clock", "k", l -> l.runsFor(l.i64(0)));
        try (Gpu gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, twins).open(); KernelArgs args = new KernelArgs()) {
            SimControls sim = gpu.unwrap(SimControls.class).orElseThrow();
            sim.setKernelDuration("clock", "k", 50 * MS);
            gpu.loadModule("clock", SimKernels.image("clock"));
            var a = gpu.createEvent();
            var b = gpu.createEvent();
            gpu.recordEvent(a, Stream.DEFAULT);
            gpu.launch(gpu.kernel("clock", "k"), LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().i64(3 * MS));
            gpu.recordEvent(b, Stream.DEFAULT);
            gpu.synchronize();
            assertThat(gpu.elapsedMillis(a, b)).isEqualTo(3f);
            assertThat(sim.clockNanos()).isEqualTo(3 * MS);
        }
    }

    @Test
    void elapsedTimeIsNotReadyWhileTheEndIsStillRunning() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            dev.simControls().setKernelDuration(Fixture.MODULE, "add", 10 * MS);
            long s = dev.streamCreate(0);
            long a = dev.eventCreate(0);
            long b = dev.eventCreate(0);
            long p = fx.zeros(16);
            dev.eventRecord(a, s);
            fx.add(s, p, 1, 16);
            dev.eventRecord(b, s);
            // Queries execute the work one operation at a time; none of them lets time pass.
            while (dev.simControls().pendingOperations() > 0) {
                assertThat(dev.streamQuery(s)).isFalse();
            }
            assertThat(dev.simControls().clockNanos()).isZero();
            fails(CudaError.NOT_READY, () -> dev.eventElapsedTime(a, b)).hasMessageContaining("virtual time 0 ns");
            dev.streamSynchronize(s);
            assertThat(dev.eventElapsedTime(a, b)).isEqualTo(10f);
        }
    }
}
