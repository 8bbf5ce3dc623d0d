// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import metrale.gpu.cuda.RequiresCuda;
import org.junit.jupiter.api.Test;

/**
 * On a GPU: the parameter sizes read for exactly the counted parameters (cuFuncGetParamCount or
 * the PTX) are the sizes the probing fallback finds, for every kernel of the test module.
 */
@RequiresCuda
class ParamCountGpuTest {

    @Test
    void countedSizesMatchTheProbedSizes() throws IOException {
        assumeTrue(CudaLib.HAS_FUNC_GET_PARAM_INFO, "the driver lacks cuFuncGetParamInfo (CUDA < 12.4)");
        byte[] ptx;
        try (InputStream in = ParamCountGpuTest.class.getResourceAsStream("/ptx/kernels.ptx")) {
            ptx = in.readAllBytes();
        }
        CudaDevice gpu = CudaBackend.open(0);
        try {
            long module = gpu.moduleLoadData("kernels", ptx);
            Map<String, Integer> counts = PtxEntries.paramCounts(ptx);
            for (Map.Entry<String, Integer> e : counts.entrySet()) {
                long f = gpu.moduleGetFunction(module, e.getKey());
                int count = CudaLib.HAS_FUNC_GET_PARAM_COUNT ? CuModule.paramCount(f) : e.getValue();
                assertThat(count).as(e.getKey()).isEqualTo(e.getValue());
                assertThat(CuModule.paramSizes(f, count)).as(e.getKey()).containsExactly(CuModule.paramSizesProbing(f));
            }
            gpu.moduleUnload(module);
        } finally {
            gpu.close();
        }
    }
}
