// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract kernels run from their PTX with no twin, as a user who loads PTX and registers
 * nothing sees them: each gives the bytes {@code contract.cu} says.
 */
class ContractPtxTwinFreeTest {

    private Gpu gpu;
    private final KernelArgs args = new KernelArgs();

    @BeforeEach
    void open() {
        gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).open();
        GpuContract.loadContractModule(gpu);
    }

    @AfterEach
    void close() {
        gpu.close();
    }

    private KernelHandle k(String name) {
        return gpu.kernel(GpuContract.MODULE, name);
    }

    @Test
    void fillAxpyAndAddGiveWhatTheSourceSays() {
        int n = 1000;
        DevicePtr x = gpu.alloc(4L * n);
        DevicePtr y = gpu.alloc(4L * n);
        DevicePtr ints = gpu.alloc(4L * n);
        gpu.launch(k("fill_f32"), LaunchConfig.forElements(n, 128), gpu.defaultStream(), args.clear().ptr(x).f32(1.5f).i32(n));
        float[] ys = new float[n];
        for (int i = 0; i < n; i++) {
            ys[i] = i * 0.25f;
        }
        gpu.copyH2D(ys, y);
        gpu.launch(k("axpy_f32"), LaunchConfig.forElements(n, 96), gpu.defaultStream(), args.clear().f32(3f).ptr(x).ptr(y).i32(n));
        gpu.copyH2D(new int[n], ints);
        gpu.launch(k("add_i32"), LaunchConfig.forElements(n, 256), gpu.defaultStream(), args.clear().ptr(ints).i32(-7).i32(n));
        float[] out = new float[n];
        gpu.copyD2H(y, out);
        int[] io = new int[n];
        gpu.copyD2H(ints, io);
        for (int i = 0; i < n; i++) {
            assertThat(Float.floatToRawIntBits(out[i])).as("y[%d]", i).isEqualTo(Float.floatToRawIntBits(Math.fma(3f, 1.5f, i * 0.25f)));
            assertThat(io[i]).isEqualTo(-7);
        }
        gpu.free(x);
        gpu.free(y);
        gpu.free(ints);
    }

    @Test
    void blockSumUsesSharedMemoryAndABarrier() {
        int n = 1000;
        int block = 128;
        int blocks = (n + block - 1) / block;
        DevicePtr in = gpu.alloc(4L * n);
        DevicePtr out = gpu.alloc(4L * blocks);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (i % 17) * 0.5f - 3f;
        }
        gpu.copyH2D(v, in);
        gpu.launch(k("block_sum_f32"), new LaunchConfig(Dim3.of(blocks), Dim3.of(block), 4 * block), gpu.defaultStream(),
                args.clear().ptr(in).ptr(out).i32(n));
        float[] sums = new float[blocks];
        gpu.copyD2H(out, sums);
        for (int b = 0; b < blocks; b++) {
            float s = 0f;
            for (int t = 0; t < block; t++) {
                int i = b * block + t;
                s += i < n ? v[i] : 0f;
            }
            assertThat(sums[b]).as("block %d", b).isEqualTo(s);
        }
        gpu.free(in);
        gpu.free(out);
    }

    @Test
    void threadIdsCoverAThreeDimensionalGrid() {
        Dim3 grid = Dim3.of(3, 2, 2);
        Dim3 block = Dim3.of(4, 3, 2);
        int total = 12 * 24;
        DevicePtr out = gpu.alloc(4L * total);
        gpu.launch(k("thread_ids"), LaunchConfig.of(grid, block), gpu.defaultStream(), args.clear().ptr(out));
        int[] ids = new int[total];
        gpu.copyD2H(out, ids);
        for (int t = 0; t < total; t++) {
            assertThat(ids[t]).isEqualTo(t + 1);
        }
        gpu.free(out);
    }

    @Test
    void aWriteOnePastTheEndIsAnIllegalAddressNamingTheLineAndTheAllocation() {
        DevicePtr p = gpu.alloc(4L * 10);
        gpu.launch(k("write_past"), LaunchConfig.of(1, 32), gpu.defaultStream(), args.clear().ptr(p).i32(10).i32(1));
        assertThatThrownBy(() -> gpu.synchronize())
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS))
                .hasMessageContaining("write_past")
                .hasMessageContaining("thread (10,0,0) of block (0,0,0)")
                .hasMessageContaining("PTX line")
                .hasMessageContaining("st.global.f32");
    }

    @Test
    void aSpinOnTheGlobalTimerEndsAndTakesItsVirtualTime() {
        var a = gpu.createEvent();
        var b = gpu.createEvent();
        gpu.recordEvent(a, gpu.defaultStream());
        gpu.launch(k("spin"), LaunchConfig.of(1, 1), gpu.defaultStream(), args.clear().i64(5_000_000L));
        gpu.recordEvent(b, gpu.defaultStream());
        gpu.synchronize();
        assertThat(gpu.elapsedMillis(a, b)).isBetween(5f, 5.1f);
        gpu.destroyEvent(a);
        gpu.destroyEvent(b);
    }
}
