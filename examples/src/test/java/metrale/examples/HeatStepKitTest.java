// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.DeviceBuffer;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimBlockOrder;
import metrale.gpu.sim.SimTwins;
import metrale.gpu.testing.Backend;
import metrale.gpu.testing.GpuTest;
import metrale.gpu.testing.Twins;

/**
 * The demo's Jacobi step through the test kit: on the simulator and on CUDA where a driver loads,
 * each run checked for leaks, red-zone damage and faults; on the simulator also for reads of
 * memory never written and with its blocks on several threads.
 */
class HeatStepKitTest {

    /** The demo's twins, in each run's own table. */
    static final class HeatTwins implements Twins {
        @Override
        public void register(SimTwins twins) {
            HeatKernels.registerTwins(twins);
        }
    }

    private static float[] steps(Gpu gpu, int n, int steps) {
        float[] initial = HeatReference.initialGrid(n);
        try (KernelArgs args = new KernelArgs();
             DeviceBuffer a = gpu.allocBuffer(4L * n * n); DeviceBuffer b = gpu.allocBuffer(4L * n * n)) {
            gpu.loadModule(HeatKernels.MODULE, HeatKernels.ptx());
            KernelHandle k = gpu.kernel(HeatKernels.MODULE, HeatKernels.JACOBI);
            a.copyFrom(initial);
            b.copyFrom(initial);
            int tiles = (n + HeatKernels.TILE - 1) / HeatKernels.TILE;
            LaunchConfig cfg = LaunchConfig.of(Dim3.of(tiles, tiles), Dim3.of(HeatKernels.TILE, HeatKernels.TILE));
            DeviceBuffer in = a;
            DeviceBuffer out = b;
            for (int s = 0; s < steps; s++) {
                gpu.launch(k, cfg, Stream.DEFAULT, args.clear().ptr(in.ptr()).ptr(out.ptr()).i32(n).f32(0.2f));
                DeviceBuffer t = in;
                in = out;
                out = t;
            }
            float[] got = new float[n * n];
            in.copyTo(got);
            return got;
        }
    }

    @GpuTest(twins = HeatTwins.class)
    void jacobiStepsEqualTheReference(Gpu gpu) {
        assertThat(steps(gpu, 37, 5)).containsExactly(HeatReference.run(HeatReference.initialGrid(37), 37, 0.2f, 5));
    }

    @GpuTest(backends = Backend.SIM, twins = HeatTwins.class, initCheck = true, blocks = SimBlockOrder.PARALLEL)
    void jacobiStepsReadOnlyWrittenMemoryWhateverTheBlockOrder(Gpu gpu) {
        assertThat(steps(gpu, 40, 3)).containsExactly(HeatReference.run(HeatReference.initialGrid(40), 40, 0.2f, 3));
    }
}
