// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.Gpu;
import metrale.gpu.contract.RequiresBackend;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Assumptions;

/**
 * {@link CollectiveContract} on NCCL with every GPU of the machine, one rank per GPU (one GPU: a
 * one-rank communicator and every collective's degenerate case). Needs CUDA and NCCL
 * ({@code -Dmetrale.nccl.library=...} where {@code libnccl.so.2} is not on the loader path).
 */
@RequiresBackend("cuda")
class CudaCollectiveContractTest extends CollectiveContract {

    @BeforeAll
    static void needsNccl() {
        var a = Collectives.ncclAvailability();
        if (Boolean.getBoolean("metrale.gpu.required") && !a.available()) {
            throw new AssertionError("NCCL is required on this host: " + a.reason());
        }
        Assumptions.assumeTrue(a.available(), () -> "NCCL unavailable: " + a.reason());
    }

    @Override
    protected List<Gpu> openRanks() {
        int n = Gpu.builder().backend("cuda").devices().size();
        List<Gpu> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Gpu.builder().backend("cuda").device(i).open());
        }
        return out;
    }
}
