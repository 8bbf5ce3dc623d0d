// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Every {@code .entry} of {@code heat.ptx} and {@code dataparallel.ptx} runs twin-free and gives
 * the bytes of its twin ({@link HeatKernels}, {@link DataParallelStep}), over random inputs, sizes,
 * block orders and seeds: under {@code sim.twins=verify} (the launch fails at the first byte the
 * twin and the PTX disagree on), and with twins off, whose results must equal the verified run's.
 */
class ExampleTwinsMatchPtxProperties {

    private static Gpu open(String twins, String order, long seed) {
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, twins).backendOption(SimOptions.BLOCKS, order)
                .backendOption(SimOptions.SEED, Long.toString(seed)).open();
    }

    private static byte[] bytes(Gpu gpu, DevicePtr p, long n) {
        byte[] b = new byte[(int) n];
        gpu.copyD2H(p, b);
        return b;
    }

    private static byte[] dataparallelPtx() {
        try {
            return Files.readAllBytes(Path.of("src/main/resources/metrale/examples/dataparallel.ptx"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static List<byte[]> runAll(Gpu gpu, float[] v, int n, float alpha, int m, int d) {
        List<byte[]> out = new ArrayList<>();
        gpu.loadModule(HeatKernels.MODULE, HeatKernels.ptx());
        gpu.loadModule(DataParallelStep.MODULE, dataparallelPtx());
        try (KernelArgs args = new KernelArgs()) {
            int cells = n * n;
            DevicePtr a = gpu.alloc(4L * cells);
            DevicePtr b = gpu.alloc(4L * cells);
            float[] grid = new float[cells];
            for (int i = 0; i < cells; i++) {
                grid[i] = v[i % v.length];
            }
            gpu.copyH2D(grid, a);
            gpu.launch(gpu.kernel(HeatKernels.MODULE, HeatKernels.FILL), LaunchConfig.forElements(cells, 128), gpu.defaultStream(),
                    args.clear().ptr(b).i32(cells).f32(alpha));
            out.add(bytes(gpu, b, 4L * cells));
            int t = HeatKernels.TILE;
            gpu.launch(gpu.kernel(HeatKernels.MODULE, HeatKernels.JACOBI),
                    LaunchConfig.of(Dim3.of((n + t - 1) / t, (n + t - 1) / t), Dim3.of(t, t)), gpu.defaultStream(),
                    args.clear().ptr(a).ptr(b).i32(n).f32(alpha));
            out.add(bytes(gpu, b, 4L * cells));
            int blocks = HeatKernels.reduceBlocks(cells);
            DevicePtr partial = gpu.alloc(4L * blocks);
            int r = HeatKernels.REDUCE_THREADS;
            gpu.launch(gpu.kernel(HeatKernels.MODULE, HeatKernels.RESIDUAL), new LaunchConfig(Dim3.of(blocks), Dim3.of(r), 4 * r),
                    gpu.defaultStream(), args.clear().ptr(a).ptr(b).ptr(partial).i32(cells));
            out.add(bytes(gpu, partial, 4L * blocks));
            DevicePtr x = gpu.alloc(4L * m * d);
            DevicePtr y = gpu.alloc(4L * m);
            DevicePtr w = gpu.alloc(4L * d);
            DevicePtr g = gpu.alloc(4L * d);
            float[] xs = new float[m * d];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = v[(i * 7) % v.length];
            }
            float[] ys = new float[m];
            for (int i = 0; i < m; i++) {
                ys[i] = v[(i * 3 + 1) % v.length];
            }
            float[] ws = new float[d];
            for (int i = 0; i < d; i++) {
                ws[i] = v[(i * 5 + 2) % v.length] * 0.01f;
            }
            gpu.copyH2D(xs, x);
            gpu.copyH2D(ys, y);
            gpu.copyH2D(ws, w);
            gpu.launch(gpu.kernel(DataParallelStep.MODULE, "grad_linear"), LaunchConfig.forElements(d, 32), gpu.defaultStream(),
                    args.clear().ptr(x).ptr(y).ptr(w).ptr(g).i32(m).i32(d).f32(1f / m));
            out.add(bytes(gpu, g, 4L * d));
            gpu.launch(gpu.kernel(DataParallelStep.MODULE, "sgd_update"), LaunchConfig.forElements(d, 32), gpu.defaultStream(),
                    args.clear().ptr(w).ptr(g).f32(alpha).i32(d));
            out.add(bytes(gpu, w, 4L * d));
            gpu.synchronize();
            for (DevicePtr p : new DevicePtr[] {a, b, partial, x, y, w, g}) {
                gpu.free(p);
            }
        }
        return out;
    }

    @Property(tries = 20)
    void everyExampleKernelGivesItsTwinsBytes(@ForAll("values") float[] v, @ForAll @IntRange(min = 1, max = 70) int n,
                                              @ForAll("orders") String order, @ForAll long seed,
                                              @ForAll @IntRange(min = 1, max = 20) int m, @ForAll @IntRange(min = 1, max = 70) int d) {
        HeatKernels.registerTwins();
        DataParallelStep.registerTwins();
        float alpha = v[0] * 1e-3f;
        List<byte[]> verified;
        try (Gpu gpu = open(SimTwinMode.VERIFY.option(), order, seed)) {
            verified = runAll(gpu, v, n, alpha, m, d);
        }
        List<byte[]> ptxOnly;
        try (Gpu gpu = open(SimTwinMode.OFF.option(), order, seed)) {
            ptxOnly = runAll(gpu, v, n, alpha, m, d);
        }
        for (int k = 0; k < verified.size(); k++) {
            assertThat(ptxOnly.get(k)).as("output %d, twins off against verified", k).isEqualTo(verified.get(k));
        }
    }

    /** Finite values whose sums stay finite: a twin's NaN has Java's bits, the engine's the GPU's canonical ones. */
    @Provide
    Arbitrary<float[]> values() {
        return Arbitraries.floats().between(-1e6f, 1e6f).list().ofMinSize(1).ofMaxSize(300).map(l -> {
            float[] f = new float[l.size()];
            for (int i = 0; i < f.length; i++) {
                f[i] = l.get(i);
            }
            return f;
        });
    }

    @Provide
    Arbitrary<String> orders() {
        return Arbitraries.of("ordered", "shuffled", "parallel");
    }
}
