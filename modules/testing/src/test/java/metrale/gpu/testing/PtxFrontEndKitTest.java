// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimTwinMode;

/**
 * The kernels of {@code frontend.cu} as a user tests them: built by nvcc with its default flags
 * and with {@code -lineinfo}, run from their PTX (no twins) through the kit, on the simulator and,
 * where a GPU is, on CUDA. {@code -lineinfo} writes {@code .loc} directives with no {@code ;},
 * which the engine once glued to the next instruction and dropped with it; inline PTX declares
 * registers in nested scopes with names that have no {@code %}.
 */
class PtxFrontEndKitTest {

    private static final String MODULE = "frontend";
    private static final int N = 37;

    static byte[] ptx(String name) {
        try (InputStream in = PtxFrontEndKitTest.class.getResourceAsStream("/ptx/" + name)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void transposeRuns(Gpu gpu, String file) {
        gpu.loadModule(MODULE, ptx(file));
        float[] a = new float[N * N];
        for (int i = 0; i < a.length; i++) {
            a[i] = i * 0.5f - 7f;
        }
        try (KernelArgs args = new KernelArgs()) {
            DevicePtr in = gpu.alloc(4L * a.length);
            DevicePtr out = gpu.alloc(4L * a.length);
            gpu.copyH2D(a, in);
            int blocks = (N + 15) / 16;
            gpu.launch(gpu.kernel(MODULE, "transpose_tiled"), LaunchConfig.of(Dim3.of(blocks, blocks), Dim3.of(16, 16)),
                    Stream.DEFAULT, args.clear().ptr(out).ptr(in).i32(N));
            float[] t = new float[a.length];
            gpu.copyD2H(out, t);
            for (int y = 0; y < N; y++) {
                for (int x = 0; x < N; x++) {
                    assertThat(t[y * N + x]).as("%s: out[%d][%d]", file, y, x).isEqualTo(a[x * N + y]);
                }
            }
            gpu.free(in);
            gpu.free(out);
        }
    }

    @GpuTest(twinMode = SimTwinMode.OFF)
    void aTiledTransposeBuiltWithDefaultFlagsRuns(Gpu gpu) {
        transposeRuns(gpu, "frontend.ptx");
    }

    @GpuTest(twinMode = SimTwinMode.OFF)
    void theSameTransposeBuiltWithLineinfoRuns(Gpu gpu) {
        transposeRuns(gpu, "frontend_lineinfo.ptx");
    }

    @GpuTest(twinMode = SimTwinMode.OFF)
    void registersOfNestedInlinePtxScopesAreTheirOwn(Gpu gpu) {
        for (String file : new String[] {"frontend.ptx", "frontend_lineinfo.ptx"}) {
            gpu.loadModule(MODULE, ptx(file));
            int[] v = new int[100];
            for (int i = 0; i < v.length; i++) {
                v[i] = i * 7 - 300;
            }
            try (KernelArgs args = new KernelArgs()) {
                DevicePtr p = gpu.alloc(4L * v.length);
                gpu.copyH2D(v, p);
                gpu.launch(gpu.kernel(MODULE, "scoped_regs"), LaunchConfig.forElements(v.length, 32), Stream.DEFAULT,
                        args.clear().ptr(p).i32(v.length));
                int[] r = new int[v.length];
                gpu.copyD2H(p, r);
                for (int i = 0; i < v.length; i++) {
                    assertThat(r[i]).as("%s: p[%d]", file, i).isEqualTo(3 * v[i] + 1);
                }
                gpu.free(p);
            }
        }
    }

    private static GpuException storeOnePast(Gpu gpu) {
        gpu.loadModule(MODULE, ptx("frontend_lineinfo.ptx"));
        DevicePtr p = gpu.allocBuffer(4L * 64).ptr();
        try (KernelArgs args = new KernelArgs()) {
            gpu.launch(gpu.kernel(MODULE, "store_one_past"), LaunchConfig.forElements(65, 32), Stream.DEFAULT,
                    args.clear().ptr(p).i32(64));
        }
        GpuException[] caught = new GpuException[1];
        assertThatThrownBy(gpu::synchronize).isInstanceOfSatisfying(GpuException.class, e -> caught[0] = e);
        assertThat(caught[0].error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        // frontend.cu line 43 is the store p[i] = (float) i; the thread at i = 64 is thread 0 of block 2.
        assertThat(caught[0].getMessage()).contains("thread (0,0,0) of block (2,0,0)", "(frontend.cu:43)", "st.global.f32",
                "allocated at PtxFrontEndKitTest.java:");
        return caught[0];
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF, redZoneBytes = 0)
    @ExpectFault(CudaError.ILLEGAL_ADDRESS)
    void aFaultInAKernelBuiltWithLineinfoNamesItsCudaLine(Gpu gpu) {
        storeOnePast(gpu);
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    @ExpectFault(CudaError.ILLEGAL_ADDRESS)
    void theKitsRedZoneIsOutOfBoundsForTheEngineSoTheStoreFaultsAtTheAccess(Gpu gpu) {
        assertThat(gpu.options().redZoneBytes()).as("the kit's default").isPositive();
        assertThat(storeOnePast(gpu).getMessage()).contains("runs 4 bytes past the end of the 256-byte buffer",
                "into the red zone after it");
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    @ExpectFault(CudaError.LAUNCH_FAILED)
    void aShuffleReadingALaneOutsideItsMaskIsReportedWithBothLanesAndTheLine(Gpu gpu) {
        gpu.loadModule(MODULE, ptx("frontend_lineinfo.ptx"));
        DevicePtr out = gpu.allocBuffer(4L * 32).ptr();
        try (KernelArgs args = new KernelArgs()) {
            gpu.launch(gpu.kernel(MODULE, "shfl_outside_mask"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(out));
        }
        assertThatThrownBy(gpu::synchronize).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.LAUNCH_FAILED);
            // frontend.cu line 85 is the __shfl_down_sync.
            assertThat(e.getMessage()).contains("shfl.sync in lane 8 reads lane 16, which is not in the member mask 0xffff",
                    "(frontend.cu:85 via sm_30_intrinsics.hpp:", "thread (8,0,0) of block (0,0,0)");
        });
    }

    private static String unsupported(Gpu gpu, String kernel) {
        gpu.loadModule(MODULE, ptx("frontend_lineinfo.ptx"));
        GpuException[] caught = new GpuException[1];
        assertThatThrownBy(() -> gpu.kernel(MODULE, kernel)).isInstanceOfSatisfying(GpuException.class, e -> caught[0] = e);
        assertThat(caught[0].error()).isEqualTo(CudaError.NOT_SUPPORTED);
        return caught[0].getMessage();
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    void whatTheEngineDoesNotRunIsNamedWithWhatToDo(Gpu gpu) {
        assertThat(unsupported(gpu, "widen_bf16")).contains(".bf16 (bfloat16) is not run by the engine",
                "register a Java twin", "frontend.cu:158");
        assertThat(unsupported(gpu, "add_half2")).contains(".f16x2 (packed half precision) is not run by the engine",
                "frontend.cu:162");
        assertThat(unsupported(gpu, "asserts_positive")).contains("the engine does not place module variables",
                "build with -DNDEBUG to leave asserts out");
    }
}
