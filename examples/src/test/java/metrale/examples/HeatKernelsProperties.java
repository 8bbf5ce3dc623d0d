// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** The kernels' Java twins, through the whole runtime on the simulator, against plain Java. */
class HeatKernelsProperties {

    @BeforeContainer
    static void registerTwins() {
        HeatKernels.registerTwins();
    }

    @AfterContainer
    static void unregisterTwins() {
        HeatKernels.unregisterTwins();
    }

    @Property(tries = 40)
    void jacobiStepsEqualTheReference(@ForAll @IntRange(min = 3, max = 70) int n,
                                      @ForAll @IntRange(min = 1, max = 6) int steps) {
        float[] initial = HeatReference.initialGrid(n);
        float alpha = 0.2f;
        try (Gpu gpu = Gpu.open("sim"); KernelArgs args = new KernelArgs();
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
                gpu.launch(k, cfg, Stream.DEFAULT, args.clear().ptr(in.ptr()).ptr(out.ptr()).i32(n).f32(alpha));
                DeviceBuffer t = in;
                in = out;
                out = t;
            }
            float[] got = new float[n * n];
            in.copyTo(got);
            assertThat(got).containsExactly(HeatReference.run(initial, n, alpha, steps));
        }
    }

    @Property(tries = 40)
    void residualReduceIsTheMaxAbsDifference(@ForAll @IntRange(min = 1, max = 20_000) int len, @ForAll long seed) {
        Random rnd = new Random(seed);
        float[] x = new float[len];
        float[] y = new float[len];
        for (int k = 0; k < len; k++) {
            x[k] = (rnd.nextFloat() - 0.5f) * 100f;
            y[k] = rnd.nextInt(4) == 0 ? x[k] : (rnd.nextFloat() - 0.5f) * 100f;
        }
        int blocks = HeatKernels.reduceBlocks(len);
        try (Gpu gpu = Gpu.open("sim"); KernelArgs args = new KernelArgs();
             DeviceBuffer a = gpu.allocBuffer(4L * len); DeviceBuffer b = gpu.allocBuffer(4L * len);
             DeviceBuffer partial = gpu.allocBuffer(4L * blocks)) {
            gpu.loadModule(HeatKernels.MODULE, HeatKernels.ptx());
            KernelHandle k = gpu.kernel(HeatKernels.MODULE, HeatKernels.RESIDUAL);
            a.copyFrom(x);
            b.copyFrom(y);
            LaunchConfig cfg = LaunchConfig.of(blocks, HeatKernels.REDUCE_THREADS).withSharedMem(4 * HeatKernels.REDUCE_THREADS);
            gpu.launch(k, cfg, Stream.DEFAULT, args.clear().ptr(a.ptr()).ptr(b.ptr()).ptr(partial.ptr()).i32(len));
            float[] partials = new float[blocks];
            partial.copyTo(partials);
            float got = 0f;
            for (float p : partials) {
                got = Math.max(got, p);
            }
            assertThat(got).isEqualTo(HeatReference.maxAbsDiff(x, y));
        }
    }

    @Property(tries = 20)
    void fmaxfIgnoresOneNaN(@ForAll float v) {
        assertThat(HeatKernels.fmaxf(Float.NaN, v)).isEqualTo(v);
        assertThat(HeatKernels.fmaxf(v, Float.NaN)).isEqualTo(v);
    }
}
