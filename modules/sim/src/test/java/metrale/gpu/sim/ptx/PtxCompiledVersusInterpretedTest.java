// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.api.Test;

/**
 * {@code sim.ptx=compiled} and {@code sim.ptx=interpreted} through the public API, twins off: the
 * contract kernels give the same bytes, and a store past an allocation the same error and message.
 */
class PtxCompiledVersusInterpretedTest {

    /** What one runtime computed: axpy's y, block_sum's sums, thread_ids' ids, and write_past's error. */
    private record Results(float[] axpy, float[] sums, int[] ids, String fault) {
    }

    private static Results run(String ptxMode, long seed) {
        Random rnd = new Random(seed);
        // Every site walked: a sampled level draws which allocations name their site at random, and the fault names one.
        try (Gpu gpu = Gpu.builder().backend("sim").leakDetection(metrale.gpu.LeakDetection.ALL)
                .backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).backendOption(SimOptions.PTX, ptxMode)
                .backendOption(SimOptions.BLOCKS, "parallel").open()) {
            GpuContract.loadContractModule(gpu);
            KernelArgs args = new KernelArgs();
            int n = 3000;
            float[] xs = new float[n];
            float[] ys = new float[n];
            for (int i = 0; i < n; i++) {
                xs[i] = rnd.nextFloat() * 100 - 50;
                ys[i] = rnd.nextFloat() * 100 - 50;
            }
            DevicePtr x = gpu.alloc(4L * n);
            DevicePtr y = gpu.alloc(4L * n);
            gpu.copyH2D(xs, x);
            gpu.copyH2D(ys, y);
            gpu.launch(gpu.kernel(GpuContract.MODULE, "axpy_f32"), LaunchConfig.forElements(n, 128), gpu.defaultStream(),
                    args.clear().f32(rnd.nextFloat() * 4 - 2).ptr(x).ptr(y).i32(n));
            float[] axpy = new float[n];
            gpu.copyD2H(y, axpy);
            int block = 64;
            int blocks = (n + block - 1) / block;
            DevicePtr sums = gpu.alloc(4L * blocks);
            gpu.launch(gpu.kernel(GpuContract.MODULE, "block_sum_f32"), new LaunchConfig(Dim3.of(blocks), Dim3.of(block),
                    4 * block), gpu.defaultStream(), args.clear().ptr(x).ptr(sums).i32(n));
            float[] s = new float[blocks];
            gpu.copyD2H(sums, s);
            DevicePtr ids = gpu.alloc(4L * 12 * 24);
            gpu.launch(gpu.kernel(GpuContract.MODULE, "thread_ids"), LaunchConfig.of(Dim3.of(3, 2, 2), Dim3.of(4, 3, 2)),
                    gpu.defaultStream(), args.clear().ptr(ids));
            int[] id = new int[12 * 24];
            gpu.copyD2H(ids, id);
            DevicePtr small = gpu.alloc(4L * 10);
            String fault;
            try {
                gpu.launch(gpu.kernel(GpuContract.MODULE, "write_past"), LaunchConfig.of(1, 32), gpu.defaultStream(),
                        args.clear().ptr(small).i32(10).i32(1));
                gpu.synchronize();
                fault = null;
            } catch (GpuException e) {
                fault = e.error() + " " + e.getMessage();
            }
            return new Results(axpy, s, id, fault);
        }
    }

    @Test
    void compiledAndInterpretedGiveTheSameBytesAndTheSameFault() {
        for (long seed = 1; seed <= 2; seed++) {
            Results c = run(SimOptions.PTX_COMPILED, seed);
            Results i = run(SimOptions.PTX_INTERPRETED, seed);
            assertThat(c.axpy()).isEqualTo(i.axpy());
            assertThat(c.sums()).isEqualTo(i.sums());
            assertThat(c.ids()).isEqualTo(i.ids());
            assertThat(i.fault()).contains("ILLEGAL_ADDRESS").contains("thread (10,0,0) of block (0,0,0)")
                    .contains("st.global.f32");
            // Allocation addresses differ between runtimes; the rest of the message does not.
            assertThat(c.fault().replaceAll("0x[0-9a-f]+", "ADDR")).isEqualTo(i.fault().replaceAll("0x[0-9a-f]+", "ADDR"));
        }
    }
}
