// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import metrale.gpu.sim.contract.ContractKernels;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Every {@code .entry} of {@code contract.ptx} that computes something runs twin-free and gives the
 * bytes of its twin ({@link ContractKernels}), over random inputs, launch shapes, block orders and
 * seeds: once with {@code sim.twins=verify} (twin and PTX run on the same memory and the launch
 * fails at the first differing byte) and once with twins off, whose results must equal the
 * verified run's. Not here: {@code store_illegal} (a fault, PtxDetectorsTest's matter) and
 * {@code spin} (no output; ContractPtxTwinFreeTest times it).
 */
class ContractTwinsMatchPtxProperties {

    private static final String[] ORDERS = {"ordered", "shuffled", "parallel"};

    private static Gpu open(String twins, String order, long seed) {
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, twins).backendOption(SimOptions.BLOCKS, order)
                .backendOption(SimOptions.SEED, Long.toString(seed)).open();
    }

    /** Runs every kernel once on {@code gpu} from the same inputs and {@return every output's bytes, in order} */
    private static List<byte[]> runAll(Gpu gpu, float[] xs, int n, int block, float a, int v) {
        GpuContract.loadContractModule(gpu);
        List<byte[]> out = new ArrayList<>();
        try (KernelArgs args = new KernelArgs()) {
            DevicePtr x = gpu.alloc(4L * n);
            DevicePtr y = gpu.alloc(4L * n);
            DevicePtr ints = gpu.alloc(4L * n);
            gpu.copyH2D(xs, x);
            gpu.copyH2D(reverse(xs), y);
            gpu.copyH2D(new int[n], ints);
            LaunchConfig lc = LaunchConfig.forElements(n, block);
            gpu.launch(gpu.kernel(GpuContract.MODULE, "axpy_f32"), lc, gpu.defaultStream(), args.clear().f32(a).ptr(x).ptr(y).i32(n));
            gpu.launch(gpu.kernel(GpuContract.MODULE, "add_i32"), lc, gpu.defaultStream(), args.clear().ptr(ints).i32(v).i32(n));
            int blocks = (n + block - 1) / block;
            DevicePtr sums = gpu.alloc(4L * blocks);
            gpu.launch(gpu.kernel(GpuContract.MODULE, "block_sum_f32"), new LaunchConfig(Dim3.of(blocks), Dim3.of(block), 4 * block),
                    gpu.defaultStream(), args.clear().ptr(y).ptr(sums).i32(n));
            out.add(bytes(gpu, y, 4L * n));
            out.add(bytes(gpu, ints, 4L * n));
            out.add(bytes(gpu, sums, 4L * blocks));
            gpu.launch(gpu.kernel(GpuContract.MODULE, "fill_f32"), lc, gpu.defaultStream(), args.clear().ptr(x).f32(a).i32(n - 1));
            out.add(bytes(gpu, x, 4L * n));
            gpu.launch(gpu.kernel(GpuContract.MODULE, "write_past"), lc, gpu.defaultStream(), args.clear().ptr(x).i32(n).i32(0));
            out.add(bytes(gpu, x, 4L * n));
            Dim3 grid = Dim3.of(1 + n % 3, 1 + n % 2, 2);
            Dim3 blk = Dim3.of(1 + block % 5, 3, 1 + block % 2);
            DevicePtr ids = gpu.alloc(4L * grid.count() * blk.count());
            gpu.launch(gpu.kernel(GpuContract.MODULE, "thread_ids"), LaunchConfig.of(grid, blk), gpu.defaultStream(), args.clear().ptr(ids));
            out.add(bytes(gpu, ids, 4L * grid.count() * blk.count()));
            gpu.launch(gpu.kernel(GpuContract.MODULE, "noop"), LaunchConfig.of(1, 1), gpu.defaultStream(), args.clear());
            gpu.synchronize();
        }
        return out;
    }

    private static float[] reverse(float[] f) {
        float[] r = new float[f.length];
        for (int i = 0; i < f.length; i++) {
            r[i] = f[f.length - 1 - i];
        }
        return r;
    }

    private static byte[] bytes(Gpu gpu, DevicePtr p, long n) {
        byte[] b = new byte[(int) n];
        gpu.copyD2H(p, b);
        return b;
    }

    @Property(tries = 25)
    void everyContractKernelGivesItsTwinsBytes(@ForAll("inputs") float[] xs, @ForAll @IntRange(min = 1, max = 300) int block,
                                               @ForAll("orders") String order, @ForAll long seed, @ForAll("finite") float a,
                                               @ForAll int v) {
        ContractKernels.register();
        int n = xs.length;
        List<byte[]> verified;
        try (Gpu gpu = open(SimTwinMode.VERIFY.option(), order, seed)) {
            verified = runAll(gpu, xs, n, block, a, v);
        }
        List<byte[]> ptxOnly;
        try (Gpu gpu = open(SimTwinMode.OFF.option(), order, seed)) {
            ptxOnly = runAll(gpu, xs, n, block, a, v);
        }
        for (int k = 0; k < verified.size(); k++) {
            assertThat(ptxOnly.get(k)).as("output %d, twins off against verified", k).isEqualTo(verified.get(k));
        }
    }

    @Provide
    Arbitrary<float[]> inputs() {
        return finite().list().ofMinSize(2).ofMaxSize(700).map(l -> {
            float[] f = new float[l.size()];
            for (int i = 0; i < f.length; i++) {
                f[i] = l.get(i);
            }
            return f;
        });
    }

    /**
     * Floats whose products and sums here stay finite: a twin's NaN has Java's bits (0x7fc00000),
     * the GPU's and the engine's is 0x7fffffff, so a NaN result would differ in every twin.
     */
    @Provide
    Arbitrary<Float> finite() {
        return Arbitraries.floats().between(-1e15f, 1e15f);
    }

    @Provide
    Arbitrary<String> orders() {
        return Arbitraries.of(ORDERS);
    }
}
