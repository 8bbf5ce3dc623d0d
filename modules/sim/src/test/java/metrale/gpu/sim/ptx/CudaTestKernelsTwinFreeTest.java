// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The CUDA backend's test kernels ({@code modules/cuda/src/test/resources/ptx/kernels.ptx}, built
 * from {@code modules/cuda/src/test/cuda/kernels.cu}), which have no twins, run on the simulator
 * from their PTX: each gives what the CUDA C says, computed here in Java.
 */
class CudaTestKernelsTwinFreeTest {

    /** From modules/sim, where the tests run. */
    private static final Path PTX = Path.of("../cuda/src/test/resources/ptx/kernels.ptx");

    private Gpu gpu;
    private final KernelArgs args = new KernelArgs();

    @BeforeEach
    void open() throws IOException {
        gpu = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).backendOption(SimOptions.BLOCKS, "shuffled").open();
        gpu.loadModule("kernels", Files.readAllBytes(PTX));
    }

    @AfterEach
    void close() {
        args.close();
        gpu.close();
    }

    @Test
    void saxpyIsOneFmaPerElement() {
        int n = 1000;
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.1f - 7;
            y[i] = 1f / (i + 1);
        }
        DevicePtr dx = gpu.alloc(4L * n);
        DevicePtr dy = gpu.alloc(4L * n);
        gpu.copyH2D(x, dx);
        gpu.copyH2D(y, dy);
        gpu.launch(gpu.kernel("kernels", "saxpy"), LaunchConfig.forElements(n, 128), gpu.defaultStream(),
                args.clear().f32(1.7f).ptr(dx).ptr(dy).i32(n));
        float[] out = new float[n];
        gpu.copyD2H(dy, out);
        for (int i = 0; i < n; i++) {
            // nvcc contracts a * x[i] + y[i] into fma.rn.f32.
            assertThat(Float.floatToRawIntBits(out[i])).as("y[%d]", i).isEqualTo(Float.floatToRawIntBits(Math.fma(1.7f, x[i], y[i])));
        }
    }

    @Test
    void addOneAndFillOverrunWithinBounds() {
        int n = 777;
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i * 31 - 5000;
        }
        DevicePtr dp = gpu.alloc(4L * n);
        gpu.copyH2D(p, dp);
        gpu.launch(gpu.kernel("kernels", "add_one"), LaunchConfig.forElements(n, 64), gpu.defaultStream(), args.clear().ptr(dp).i32(n));
        int[] out = new int[n];
        gpu.copyD2H(dp, out);
        for (int i = 0; i < n; i++) {
            assertThat(out[i]).isEqualTo(i * 31 - 5000 + 1);
        }
        gpu.launch(gpu.kernel("kernels", "fill_overrun"), LaunchConfig.forElements(n, 64), gpu.defaultStream(),
                args.clear().ptr(dp).i32(n - 10).i32(5).i32(-9));
        gpu.copyD2H(dp, out);
        for (int i = 0; i < n; i++) {
            assertThat(out[i]).as("p[%d]", i).isEqualTo(i < n - 5 ? -9 : i * 31 - 5000 + 1);
        }
    }

    @Test
    void storeToWritesTheAddressGivenAndAWildOneFaults() {
        DevicePtr p = gpu.alloc(16);
        gpu.launch(gpu.kernel("kernels", "store_to"), LaunchConfig.of(1, 1), gpu.defaultStream(), args.clear().i64(p.address() + 8).i32(42));
        int[] out = new int[4];
        gpu.copyD2H(p, out);
        assertThat(out[2]).isEqualTo(42);
        gpu.launch(gpu.kernel("kernels", "store_to"), LaunchConfig.of(1, 1), gpu.defaultStream(), args.clear().i64(0x40).i32(1));
        assertThatThrownBy(() -> gpu.synchronize())
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS))
                .hasMessageContaining("kernels::store_to");
    }

    @Test
    void spinWaitsItsTimeAndSetsDone() {
        DevicePtr done = gpu.alloc(4);
        gpu.memset(done, 0, 4);
        var a = gpu.createEvent();
        var b = gpu.createEvent();
        gpu.recordEvent(a, gpu.defaultStream());
        gpu.launch(gpu.kernel("kernels", "spin"), LaunchConfig.of(2, 32), gpu.defaultStream(), args.clear().i64(2_000_000L).ptr(done));
        gpu.recordEvent(b, gpu.defaultStream());
        gpu.synchronize();
        int[] d = new int[1];
        gpu.copyD2H(done, d);
        assertThat(d[0]).isEqualTo(1);
        assertThat(gpu.elapsedMillis(a, b)).isBetween(2f, 2.1f);
        gpu.destroyEvent(a);
        gpu.destroyEvent(b);
    }

    @Test
    void structArgIsPassedByValue() {
        DevicePtr out = gpu.alloc(16);
        ByteBuffer s = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        s.putFloat(0, 2.75f).putFloat(4, -7.5f).putLong(8, 0x1234_5678_9abc_def0L);
        gpu.launch(gpu.kernel("kernels", "struct_arg"), LaunchConfig.of(1, 1), gpu.defaultStream(), args.clear().bytes(s.array()).ptr(out));
        long[] got = new long[2];
        gpu.copyD2H(out, got);
        assertThat(got).containsExactly((long) (2.75f + -7.5f), 0x1234_5678_9abc_def0L);
    }

    @Test
    void reverseBlockReversesEachBlockThroughSharedMemory() {
        int block = 96;
        int blocks = 5;
        int[] p = new int[block * blocks];
        for (int i = 0; i < p.length; i++) {
            p[i] = i * i;
        }
        DevicePtr dp = gpu.alloc(4L * p.length);
        gpu.copyH2D(p, dp);
        gpu.launch(gpu.kernel("kernels", "reverse_block"), new LaunchConfig(Dim3.of(blocks), Dim3.of(block), 4 * block),
                gpu.defaultStream(), args.clear().ptr(dp));
        gpu.launch(gpu.kernel("kernels", "empty"), LaunchConfig.of(3, 7), gpu.defaultStream(), args.clear());
        int[] out = new int[p.length];
        gpu.copyD2H(dp, out);
        for (int b = 0; b < blocks; b++) {
            for (int t = 0; t < block; t++) {
                assertThat(out[b * block + t]).isEqualTo(p[b * block + block - 1 - t]);
            }
        }
    }
}
