// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import metrale.gpu.Gpu;
import metrale.gpu.sim.SimOptions;
import org.junit.jupiter.api.Nested;

/** {@link CollectiveContract} on the simulated communicator with 1, 2 and 4 simulated devices. */
class SimCollectiveContractTest {

    /** {@return {@code n} simulator runtimes, one per device of one fresh simulated process} */
    static List<Gpu> simRanks(int n) {
        String process = SimOptions.PROCESS_NAMED + "collectives-" + UUID.randomUUID();
        List<Gpu> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, process)
                    .backendOption(SimOptions.DEVICES, Integer.toString(n))
                    .backendOption(SimOptions.CAPACITY, Long.toString(64L << 20)).device(i).open());
        }
        return out;
    }

    @Nested
    class OneRank extends CollectiveContract {
        @Override
        protected List<Gpu> openRanks() {
            return simRanks(1);
        }
    }

    @Nested
    class TwoRanks extends CollectiveContract {
        @Override
        protected List<Gpu> openRanks() {
            return simRanks(2);
        }
    }

    @Nested
    class FourRanks extends CollectiveContract {
        @Override
        protected List<Gpu> openRanks() {
            return simRanks(4);
        }
    }
}
