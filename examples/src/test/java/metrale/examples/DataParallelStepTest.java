// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import metrale.gpu.GpuBuilder;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The data-parallel example and the unique-id exchange on 1, 2 and 4 simulated devices. */
class DataParallelStepTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void replicasMatchPlainJava(int devices) {
        DataParallelStep.Result r = DataParallelStep.run(DataParallelStep.builders("sim", devices), 32, 8, 10, 0.5f);
        assertThat(r.devices()).isEqualTo(devices);
        assertThat(r.maxError()).isLessThanOrEqualTo(1e-5);
        // The steps moved the weights: a run that did nothing would not match a non-zero reference.
        assertThat(r.reference()).isNotEqualTo(new float[8]);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void replicasMatchPlainJavaFromTheKernelsOwnPtx(int devices) {
        List<GpuBuilder> builders = DataParallelStep.builders("sim", devices).stream()
                .map(b -> b.backendOption(SimOptions.TWINS, SimTwinMode.OFF.option())).toList();
        DataParallelStep.Result ptx = DataParallelStep.run(builders, 32, 8, 10, 0.5f);
        DataParallelStep.Result twin = DataParallelStep.run(DataParallelStep.builders("sim", devices), 32, 8, 10, 0.5f);
        assertThat(ptx.maxError()).isLessThanOrEqualTo(1e-5);
        assertThat(ptx.weights()).isEqualTo(twin.weights());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3})
    void ranksMeetThroughAFile(int ranks, @TempDir Path dir) throws Exception {
        Path file = dir.resolve("nccl.id");
        List<GpuBuilder> builders = DataParallelStep.builders("sim", ranks);
        try (ExecutorService pool = Executors.newFixedThreadPool(ranks)) {
            List<Future<Float>> sums = new ArrayList<>();
            for (int r = ranks - 1; r >= 0; r--) {
                int rank = r;
                sums.add(pool.submit(() -> UniqueIdExchange.runRank(builders.get(rank), rank, ranks, file)));
            }
            for (Future<Float> f : sums) {
                assertThat(f.get()).isEqualTo(ranks * (ranks + 1) / 2.0f);
            }
        }
    }
}
