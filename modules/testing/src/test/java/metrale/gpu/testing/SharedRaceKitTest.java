// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimTwinMode;

/**
 * The engine's shared-memory race check on the kernels of {@code frontend.cu}, as a user meets it:
 * byte by byte (threads that each own a byte of a word do not race), a second writer of a byte
 * (write after write), a read of what another warp just wrote (read after write), and
 * {@code __syncwarp} ordering only the lanes of its own warp. Each racy kernel fails its launch
 * naming both threads, both lines and the byte.
 */
class SharedRaceKitTest {

    private static final String MODULE = "frontend";

    private static int[] run(Gpu gpu, String kernel, int threads) {
        gpu.loadModule(MODULE, PtxFrontEndKitTest.ptx("frontend_lineinfo.ptx"));
        DevicePtr out = gpu.alloc(4L * threads);
        gpu.memset(out, 0, 4L * threads);
        try (KernelArgs args = new KernelArgs()) {
            gpu.launch(gpu.kernel(MODULE, kernel), LaunchConfig.of(1, threads), Stream.DEFAULT, args.clear().ptr(out));
        }
        int[] r = new int[threads];
        gpu.copyD2H(out, r);
        gpu.free(out);
        return r;
    }

    private static String raceOf(Gpu gpu, String kernel) {
        GpuException[] caught = new GpuException[1];
        assertThatThrownBy(() -> run(gpu, kernel, 64)).isInstanceOfSatisfying(GpuException.class, e -> caught[0] = e);
        assertThat(caught[0].error()).isEqualTo(CudaError.LAUNCH_FAILED);
        return caught[0].getMessage();
    }

    @GpuTest(twinMode = SimTwinMode.OFF)
    void threadsOwningOneByteOfAWordEachDoNotRace(Gpu gpu) {
        assertThat(run(gpu, "bytes_of_a_word", 64)[0]).isEqualTo(0x04030201);
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    @ExpectFault(CudaError.LAUNCH_FAILED)
    void aSecondWriterOfAByteWithNoBarrierRaces(Gpu gpu) {
        assertThat(raceOf(gpu, "racy_write_after_write")).contains("shared-memory race on byte 0 of block (0,0,0)",
                "thread (0,0,0) of block (0,0,0) wrote it at", "thread (32,0,0) of block (0,0,0) writes it at",
                "(frontend.cu:105)");
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    @ExpectFault(CudaError.LAUNCH_FAILED)
    void aReadOfWhatAnotherWarpJustWroteRaces(Gpu gpu) {
        assertThat(raceOf(gpu, "racy_read_after_write")).contains("shared-memory race on byte 0 of block (0,0,0)",
                "thread (0,0,0) of block (0,0,0) wrote it at", "(frontend.cu:116)",
                "thread (1,0,0) of block (0,0,0) reads it at", "(frontend.cu:118)");
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    @ExpectFault(CudaError.LAUNCH_FAILED)
    void syncwarpDoesNotOrderTwoWarps(Gpu gpu) {
        assertThat(raceOf(gpu, "warp_sync_across_warps")).contains("shared-memory race on byte 128",
                "(frontend.cu:124)", "(frontend.cu:126)");
    }

    @GpuTest(twinMode = SimTwinMode.OFF)
    void syncwarpOrdersTheLanesOfItsWarp(Gpu gpu) {
        int[] r = run(gpu, "warp_sync_within_warp", 64);
        for (int t = 0; t < 64; t++) {
            assertThat(r[t]).as("out[%d]", t).isEqualTo(t ^ 1);
        }
    }
}
