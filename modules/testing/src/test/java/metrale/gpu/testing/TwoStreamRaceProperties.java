// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.Gpu;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The two-stream pipeline on the simulator's schedules: with its wait it is right on every seed. */
class TwoStreamRaceProperties {

    @Property(tries = 100)
    void withTheWaitTheConsumerSeesTheProducersValues(@ForAll("seeds") long seed) {
        Gpu gpu = TestGpus.sim().seed(seed).twins(new KitKernels()).open();
        try {
            assertThat(TwoStreamPipeline.firstWrong(TwoStreamPipeline.run(gpu, true))).isEqualTo(-1);
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    @Example
    void theDefaultScheduleHidesTheMissingWait() {
        Gpu gpu = TestGpus.sim().twins(new KitKernels()).open();
        try {
            assertThat(TwoStreamPipeline.firstWrong(TwoStreamPipeline.run(gpu, false))).isEqualTo(-1);
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    @Provide
    Arbitrary<Long> seeds() {
        return GpuArbitraries.scheduleSeeds();
    }
}
