package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.sim.FloatView;
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
            gpu.launch(gpu.kernel("local", "seven"), metrale.gpu.LaunchConfig.of(1, 4), metrale.gpu.Stream.DEFAULT, args.ptr(b.ptr()));
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
}
