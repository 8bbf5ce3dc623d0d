// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import metrale.gpu.CaptureMode;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GraphHandle;
import metrale.gpu.Stream;
import metrale.gpu.contract.RequiresBackend;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * NCCL collectives captured into a CUDA graph (NCCL supports capture since 2.9): an all-reduce of
 * a one-rank communicator on device 0, captured in relaxed mode, launched twice.
 */
@RequiresBackend("cuda")
class CudaCollectiveGraphTest {

    @Test
    void anAllReduceCapturedIntoAGraphRunsWhenLaunched() {
        var a = Collectives.ncclAvailability();
        if (Boolean.getBoolean("metrale.gpu.required") && !a.available()) {
            throw new AssertionError("NCCL is required on this host: " + a.reason());
        }
        Assumptions.assumeTrue(a.available(), () -> "NCCL unavailable: " + a.reason());
        try (Gpu gpu = Gpu.builder().backend("cuda").device(0).open()) {
            Communicator comm = Collectives.initAll(List.of(gpu)).getFirst();
            int n = 1024;
            DevicePtr in = gpu.alloc(4L * n);
            DevicePtr out = gpu.alloc(4L * n);
            float[] h = new float[n];
            for (int i = 0; i < n; i++) {
                h[i] = i * 0.5f;
            }
            gpu.copyH2D(h, in);
            gpu.memset(out, 0, 4L * n);
            Stream s = gpu.createStream(true);
            gpu.beginCapture(s, CaptureMode.RELAXED);
            comm.allReduce(in, out, n, NcclDataType.FLOAT32, NcclRedOp.SUM, s);
            GraphHandle g = gpu.endCapture(s);
            float[] before = new float[n];
            gpu.copyD2H(out, before);
            assertThat(before).as("captured, not run").containsOnly(0f);
            gpu.launchGraph(g, s);
            gpu.launchGraph(g, s);
            gpu.synchronize(s);
            float[] got = new float[n];
            gpu.copyD2H(out, got);
            assertThat(got).containsExactly(h);
            gpu.destroyGraph(g);
            gpu.destroyStream(s);
            comm.close();
            gpu.free(in);
            gpu.free(out);
        }
    }
}
