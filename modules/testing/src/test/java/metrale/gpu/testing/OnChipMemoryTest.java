// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimTwinMode;
import metrale.gpu.testing.fixtures.OnChipInitCheckFixture;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/**
 * A block's shared memory and a thread's local memory start as garbage on the simulator, as on a
 * GPU (the simulator's fill byte, not zeros), and the initcheck reports a read of either before it
 * was written, naming the kernel, the instruction and the memory.
 */
class OnChipMemoryTest {

    private static Events run(String method) {
        OnChipInitCheckFixture.ptx = PtxFrontEndKitTest.ptx("frontend.ptx");
        return EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(OnChipInitCheckFixture.class, method, Gpu.class.getName())).execute().testEvents();
    }

    private static String failureMessage(Events events) {
        List<Event> failed = events.failed().list();
        assertThat(failed).hasSize(1);
        return failed.getFirst().getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class)
                .getThrowable().orElseThrow().getMessage();
    }

    @Test
    void anUnloadedSharedHaloIsAnUninitializedRead() {
        assertThat(failureMessage(run("stencilReadsItsUnloadedHalo")))
                .contains("uninitialized read: kernel frontend::stencil_unloaded_halo at PTX line")
                .contains("ld.shared.f32")
                .contains("of the shared memory of block (0,0,0) (136 bytes)");
    }

    @Test
    void aLocalArrayReadPastWhatWasWrittenIsAnUninitializedRead() {
        assertThat(failureMessage(run("threadsReadTheirArrayPastWhatTheyWrote")))
                .contains("uninitialized read: kernel frontend::local_partly_written at PTX line")
                .contains("ld.local")
                .contains("of the local memory of thread (0,0,0) of block (0,0,0)");
    }

    @Test
    void anArrayReadOnlyWhereWrittenPasses() {
        assertThat(run("threadsReadOnlyWhatTheyWrote").failed().count()).isZero();
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    @ExpectFault(metrale.gpu.CudaError.ILLEGAL_ADDRESS)
    void aKernelsBlocksHoldOnlyItsOwnSharedArrays(Gpu gpu) {
        // The module's other kernels declare 1,224 bytes of shared arrays; this one 256.
        gpu.loadModule("frontend", PtxFrontEndKitTest.ptx("frontend_lineinfo.ptx"));
        try (KernelArgs args = new KernelArgs()) {
            DevicePtr out = gpu.allocBuffer(4L * 64).ptr();
            gpu.launch(gpu.kernel("frontend", "read_past_own_tile"), LaunchConfig.of(1, 64), Stream.DEFAULT,
                    args.clear().ptr(out));
            org.assertj.core.api.Assertions.assertThatThrownBy(gpu::synchronize)
                    .isInstanceOfSatisfying(metrale.gpu.GpuException.class, e -> assertThat(e.getMessage())
                            .contains("lies outside the block's 256 bytes of shared memory", "(frontend.cu:"));
        }
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF, redZoneBytes = 0)
    void unwrittenSharedAndLocalMemoryHoldTheFillPatternNotZeros(Gpu gpu) {
        gpu.loadModule("frontend", PtxFrontEndKitTest.ptx("frontend.ptx"));
        float garbage = Float.intBitsToFloat(0xABABABAB);
        try (KernelArgs args = new KernelArgs()) {
            int n = 32;
            DevicePtr in = gpu.alloc(4L * n);
            DevicePtr out = gpu.alloc(4L * n);
            gpu.copyH2D(new float[n], in);
            gpu.launch(gpu.kernel("frontend", "stencil_unloaded_halo"), LaunchConfig.of(1, 32), Stream.DEFAULT,
                    args.clear().ptr(out).ptr(in).i32(n));
            float[] o = new float[n];
            gpu.copyD2H(out, o);
            assertThat(o[0]).as("the halo's garbage, not 0").isEqualTo(garbage);
            assertThat(o[5]).isZero();
            int[] r = new int[n];
            gpu.launch(gpu.kernel("frontend", "local_partly_written"), LaunchConfig.of(1, 32), Stream.DEFAULT,
                    args.clear().ptr(out).i32(4).i32(9));
            gpu.copyD2H(out, r);
            assertThat(r[0]).as("a[9], never written").isEqualTo(0xABABABAB);
            gpu.launch(gpu.kernel("frontend", "local_partly_written"), LaunchConfig.of(1, 32), Stream.DEFAULT,
                    args.clear().ptr(out).i32(4).i32(2));
            gpu.copyD2H(out, r);
            assertThat(r[0]).isEqualTo(7);
            gpu.free(in);
            gpu.free(out);
        }
    }

    @GpuTest(twinMode = SimTwinMode.OFF, initCheck = true)
    void eightByteStoresAndSixteenByteLoadsOfADoubleArrayAreExactForTheInitcheck(Gpu gpu) {
        gpu.loadModule("frontend", PtxFrontEndKitTest.ptx("frontend.ptx"));
        int n = 64;
        try (KernelArgs args = new KernelArgs()) {
            DevicePtr p = gpu.alloc(8L * n);
            DevicePtr out = gpu.alloc(8L * n / 2);
            gpu.launch(gpu.kernel("frontend", "doubles_written_then_read"), LaunchConfig.of(1, n), Stream.DEFAULT,
                    args.clear().ptr(out).ptr(p).i32(n));
            double[] o = new double[n / 2];
            gpu.copyD2H(out, o);
            for (int i = 0; i < n / 2; i++) {
                assertThat(o[i]).as("out[%d]", i).isEqualTo(4.0 * i + 1);
            }
            gpu.free(p);
            gpu.free(out);
        }
    }
}
