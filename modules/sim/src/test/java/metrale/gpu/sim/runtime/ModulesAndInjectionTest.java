// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.SimKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Module replacement, and the runtime's answer to the simulator's injected failures. */
class ModulesAndInjectionTest {

    private static final String MODULE = "rt_modules";

    @BeforeAll
    static void kernels() {
        SimKernels.register(MODULE, "inc", l -> {
            IntView v = l.ints(0);
            l.forEachThread(t -> {
                if (t.globalX() < v.length()) {
                    v.set(t.globalX(), v.get(t.globalX()) + 1);
                }
            });
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "inc");
    }

    @Test
    void loadingANameAgainReplacesAndUnloadsTheOldModule() {
        try (Gpu gpu = sim().open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            KernelHandle old = gpu.kernel(MODULE, "inc");
            assertThat(gpu.kernelRegistry().modules()).containsEntry(MODULE, List.of("inc"));
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            assertThat(gpu.kernelRegistry().modules()).containsEntry(MODULE, List.of());
            DevicePtr p = gpu.alloc(16);
            gpu.memset(p, 0, 16);
            assertThatThrownBy(() -> gpu.launch(old, LaunchConfig.of(1, 4), Stream.DEFAULT, args.clear().ptr(p)))
                    .isInstanceOf(GpuException.class);
            KernelHandle fresh = gpu.kernel(MODULE, "inc");
            assertThat(fresh).isNotEqualTo(old);
            gpu.launch(fresh, LaunchConfig.of(1, 4), Stream.DEFAULT, args.clear().ptr(p));
            int[] out = new int[4];
            gpu.copyD2H(p, out);
            assertThat(out).containsExactly(1, 1, 1, 1);
            assertThat(gpu.fault()).isEmpty();
        }
    }

    @Test
    void aFailedLoadKeepsTheModuleItWouldHaveReplaced() {
        try (Gpu gpu = sim().open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            assertThatThrownBy(() -> gpu.loadModule(MODULE, new byte[] {1, 2, 3}))
                    .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_IMAGE));
            assertThat(gpu.hasModule(MODULE)).isTrue();
            DevicePtr p = gpu.alloc(16);
            gpu.memset(p, 0, 16);
            gpu.launch(gpu.kernel(MODULE, "inc"), LaunchConfig.of(1, 4), Stream.DEFAULT, args.clear().ptr(p));
            int[] out = new int[4];
            gpu.copyD2H(p, out);
            assertThat(out).as("the kept module's kernel runs").containsExactly(1, 1, 1, 1);
            gpu.free(p);
        }
    }

    @Test
    void anInjectedAllocationFailureIsOutOfMemoryAndNotSticky() {
        // An injected failure fails a cuMemAlloc: every allocation is one only with allocator=driver.
        try (Gpu gpu = sim().allocator("driver").open()) {
            gpu.unwrap(SimControls.class).orElseThrow().failAllocation(1);
            assertThatThrownBy(() -> gpu.alloc(4096)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
                assertThat(e.getMessage()).contains("requested 4096 bytes", "MiB free");
            });
            assertThat(gpu.liveAllocCount()).isZero();
            assertThat(gpu.fault()).isEmpty();
            DevicePtr p = gpu.alloc(4096);
            assertThat(gpu.liveAllocations()).singleElement().satisfies(a -> {
                assertThat(a.ptr()).isEqualTo(p);
                assertThat(a.bytes()).isEqualTo(4096);
            });
            gpu.copyH2D(new int[] {7, 8, 9}, p);
            int[] back = new int[3];
            gpu.copyD2H(p, back);
            assertThat(back).as("the allocation after the injected failure is usable").containsExactly(7, 8, 9);
        }
    }

    /** The queries by which a test kit tells an armed fault that never fired from one that did. */
    @Test
    void armedFaultsReportWhetherTheyFired() {
        try (Gpu gpu = sim().allocator("driver").open(); KernelArgs args = new KernelArgs()) {
            SimControls sim = gpu.unwrap(SimControls.class).orElseThrow();
            long before = sim.allocationAttempts();
            sim.failAllocation(2);
            DevicePtr p = gpu.alloc(16);
            assertThat(sim.allocationAttempts() - before).isEqualTo(1);
            assertThatThrownBy(() -> gpu.alloc(16)).isInstanceOf(GpuException.class);
            assertThat(sim.allocationAttempts() - before).as("the injected failure counts").isEqualTo(2);

            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            assertThat(sim.kernelFaultArmed(MODULE, "inc")).isFalse();
            sim.faultKernel(MODULE, "inc");
            assertThat(sim.kernelFaultArmed(MODULE, "inc")).isTrue();
            assertThat(sim.kernelFaultArmed(MODULE, "other")).isFalse();
            gpu.launch(gpu.kernel(MODULE, "inc"), LaunchConfig.of(1, 4), Stream.DEFAULT, args.clear().ptr(p));
            assertThat(sim.kernelFaultArmed(MODULE, "inc")).as("launched, not yet run").isTrue();
            assertThatThrownBy(gpu::synchronize).isInstanceOf(GpuException.class);
            assertThat(sim.kernelFaultArmed(MODULE, "inc")).as("the kernel ran into its fault").isFalse();
            gpu.close();
            assertThat(sim.allocationAttempts() - before).as("readable after close").isEqualTo(2);
        }
        try (Gpu gpu = sim().open()) {
            SimControls sim = gpu.unwrap(SimControls.class).orElseThrow();
            assertThat(sim.syncFailureArmed()).isEmpty();
            sim.failNextSync(CudaError.LAUNCH_FAILED);
            assertThat(sim.syncFailureArmed()).hasValue(CudaError.LAUNCH_FAILED);
            assertThatThrownBy(gpu::synchronize).isInstanceOf(GpuException.class);
            assertThat(sim.syncFailureArmed()).as("reported by the sync").isEmpty();
        }
    }

    @Test
    void anInjectedStickySyncFailureLatches() {
        try (Gpu gpu = sim().open()) {
            gpu.unwrap(SimControls.class).orElseThrow().failNextSync(CudaError.LAUNCH_FAILED);
            Stream s = gpu.createStream();
            assertThatThrownBy(() -> gpu.synchronize(s)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED));
            assertThatThrownBy(() -> gpu.alloc(8)).isInstanceOfSatisfying(StickyFaultException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED);
                assertThat(e.faultCall()).isEqualTo("synchronize " + s);
            });
        }
    }

    @Test
    void aKernelFaultSurfacingAtAnEventSyncNamesThatCall() {
        try (Gpu gpu = sim().open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            gpu.unwrap(SimControls.class).orElseThrow().faultKernel(MODULE, "inc");
            DevicePtr p = gpu.alloc(16);
            Stream s = gpu.createStream();
            Event e = gpu.createEvent();
            gpu.launch(gpu.kernel(MODULE, "inc"), LaunchConfig.of(1, 4), s, args.clear().ptr(p));
            gpu.recordEvent(e, s);
            assertThatThrownBy(() -> gpu.eventSynchronize(e)).isInstanceOf(GpuException.class); String site = here();
            assertThat(gpu.fault()).hasValueSatisfying(f -> {
                assertThat(f.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                assertThat(f.faultCall()).isEqualTo("eventSynchronize " + e);
                assertThat(f.faultSite()).isEqualTo(site);
            });
        }
    }
}
