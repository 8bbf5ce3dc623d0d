// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import metrale.gpu.Event;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimBlockOrder;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.SimTwins;
import org.junit.jupiter.api.BeforeEach;

/** The extension as an application's tests use it: what a run receives and which options it honours. */
class GpuTestUsageTest {

    @InjectGpu
    Gpu injected;

    private DevicePtr fromBeforeEach;

    @BeforeEach
    void allocateWithTheInjectedRuntime() {
        fromBeforeEach = injected.alloc(64);
    }

    @GpuTest(backends = Backend.SIM)
    void theParameterAndTheFieldAreTheSameFreshRuntime(Gpu gpu, Backend backend) {
        assertThat(gpu).isSameAs(injected);
        assertThat(backend).isEqualTo(Backend.SIM);
        assertThat(gpu.backendName()).isEqualTo("sim");
        assertThat(gpu.options().redZoneBytes()).isEqualTo(256);
        assertThat(gpu.liveAllocCount()).isEqualTo(1);
        gpu.free(fromBeforeEach);
    }

    @GpuTest(backends = Backend.SIM, redZoneBytes = 0)
    void freedMemoryIsQuarantinedEvenWithoutRedZones(Gpu gpu) {
        gpu.free(fromBeforeEach);
        assertThat(gpu.options().quarantineBytes()).isEqualTo(64L << 20);
        DevicePtr stale = gpu.alloc(256); int allocLine = KitKernels.line();
        gpu.free(stale); int freeLine = KitKernels.line();
        DevicePtr next = gpu.alloc(256);
        assertThat(next).as("the freed block is held back").isNotEqualTo(stale);
        assertThatThrownBy(() -> gpu.copyD2D(stale, next, 256)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.getMessage()).contains("freed memory").contains("allocated at GpuTestUsageTest.java:" + allocLine)
                    .contains("freed at GpuTestUsageTest.java:" + freeLine);
        });
        gpu.free(next);
    }

    @GpuTest(backends = Backend.SIM, capacity = 1 << 20)
    void capacityMakesOutOfMemoryTestable(Gpu gpu) {
        gpu.free(fromBeforeEach);
        assertThatThrownBy(() -> gpu.alloc(2 << 20))
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY));
        assertThat(gpu.fault()).isEmpty();
    }

    @GpuTest(backends = Backend.SIM)
    @FaultPlan(failAllocation = 2)
    void aFaultPlanFailsTheNthAllocationFromTheMethodsStart(Gpu gpu) {
        gpu.free(fromBeforeEach);
        DevicePtr first = gpu.alloc(16);
        assertThatThrownBy(() -> gpu.alloc(16))
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY));
        gpu.free(first);
    }

    @GpuTest(backends = Backend.SIM)
    void twinsRegisteredInTheRunsTableServeOnlyThisRun(Gpu gpu, SimTwins twins, SimControls controls) {
        gpu.free(fromBeforeEach);
        twins.register("local", "seven", l -> {
            FloatView out = l.floats(0);
            l.forEachThread(t -> out.set(t.globalX(), 7f));
        });
        gpu.loadModule("local", metrale.gpu.sim.SimKernels.image("local"));
        try (DeviceBuffer b = gpu.allocBuffer(16); KernelArgs args = new KernelArgs()) {
            gpu.launch(gpu.kernel("local", "seven"), LaunchConfig.of(1, 4), Stream.DEFAULT, args.ptr(b.ptr()));
            assertThat(controls.pendingOperations()).as("the launch waits for a sync").isPositive();
            float[] out = new float[4];
            b.copyTo(out);
            assertThat(out).containsOnly(7f);
        }
    }

    @GpuTest(backends = Backend.SIM)
    void aTwinOfAnotherRunIsNotFound(Gpu gpu) {
        gpu.free(fromBeforeEach);
        gpu.loadModule("local", metrale.gpu.sim.SimKernels.image("local"));
        assertThatThrownBy(() -> gpu.kernel("local", "seven"))
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.NOT_FOUND));
    }

    @GpuTest(backends = Backend.SIM, twins = KitKernels.class, redZoneBytes = 0, seed = 2)
    void theSeedOptionPicksTheSchedule(Gpu gpu) {
        gpu.free(fromBeforeEach);
        // Seed 2 is the smallest schedule on which the pipeline without its wait races (RaceDetectionTest).
        assertThat(TwoStreamPipeline.firstWrong(TwoStreamPipeline.run(gpu, false))).isEqualTo(0);
        assertThat(gpu.options().redZoneBytes()).isZero();
    }

    @GpuTest(backends = Backend.SIM, twins = KitKernels.class)
    @KernelDuration(kernel = "kit::fill", nanos = 5_000_000)
    void kernelDurationsDriveTheVirtualClock(Gpu gpu, SimControls sim) {
        gpu.free(fromBeforeEach);
        KitKernels.load(gpu);
        Stream s = gpu.createStream();
        Event start = gpu.createEvent();
        Event end = gpu.createEvent();
        try (DeviceBuffer b = gpu.allocBuffer(400)) {
            gpu.recordEvent(start, s);
            try (KernelArgs args = new KernelArgs()) {
                gpu.launch(gpu.kernel(KitKernels.MODULE, "fill"), LaunchConfig.forElements(100, 64), s,
                        args.ptr(b.ptr()).i32(100).f32(1f));
            }
            gpu.recordEvent(end, s);
            long before = sim.clockNanos();
            gpu.synchronize(s);
            assertThat(sim.clockNanos() - before).isGreaterThanOrEqualTo(5_000_000);
            assertThat(gpu.elapsedMillis(start, end)).isEqualTo(5f);
        } finally {
            gpu.destroyEvent(start);
            gpu.destroyEvent(end);
            gpu.destroyStream(s);
        }
    }

    @GpuTest(backends = Backend.SIM, blocks = SimBlockOrder.SHUFFLED, seed = 7)
    void theBlockOrderOptionShufflesBlocks(Gpu gpu, SimTwins twins) {
        gpu.free(fromBeforeEach);
        List<Integer> order = new ArrayList<>();
        twins.register("order", "record", l -> l.forEachBlock(blk -> order.add(blk.blockX())));
        gpu.loadModule("order", metrale.gpu.sim.SimKernels.image("order"));
        try (KernelArgs args = new KernelArgs()) {
            gpu.launch(gpu.kernel("order", "record"), LaunchConfig.of(16, 1), Stream.DEFAULT, args);
            gpu.synchronize();
        }
        assertThat(order).containsExactlyInAnyOrderElementsOf(IntStream.range(0, 16).boxed().toList())
                .isNotEqualTo(IntStream.range(0, 16).boxed().toList());
    }

    @GpuTest(backends = Backend.SIM)
    void theRedZoneScanAtEachFreeAddsNoSyncOrCopyToTheCounters(Gpu gpu) {
        gpu.free(fromBeforeEach);
        DevicePtr p = gpu.alloc(128);
        gpu.free(p);
        assertThat(gpu.telemetry().counters().streamSyncs()).isZero();
        assertThat(gpu.telemetry().counters().d2hCopies()).isZero();
    }

    @GpuTest(backends = Backend.SIM)
    @FaultPlan(failNextSync = CudaError.LAUNCH_FAILED)
    @ExpectFault(CudaError.LAUNCH_FAILED)
    void aFaultPlanCanFailTheNextSync(Gpu gpu) {
        // Not freed first: the free's own sync (before its red-zone scan) would report the error.
        assertThatThrownBy(gpu::synchronize)
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED));
        assertThat(gpu.fault()).isPresent();
    }
}
