// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.StreamSupport;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimTwins;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Shrinkable;

/** The arbitraries give what they promise: launches CUDA accepts, sizes in range, the edge cases named. */
class GpuArbitrariesProperties {

    @Property(tries = 60)
    void everyThreeDimensionalLaunchRunsEveryThreadOnce(@ForAll("launches") LaunchConfig config) {
        SimTwins twins = new SimTwins().register("arb", "count", l -> {
            IntView c = l.ints(0);
            l.forEachThread(t -> c.atomicAdd(0, 1));
        });
        Gpu gpu = TestGpus.sim().twinTable(twins).open();
        try (KernelArgs args = new KernelArgs()) {
            gpu.loadModule("arb", SimKernels.image("arb"));
            DevicePtr counter = gpu.alloc(4);
            gpu.memset(counter, 0, 4);
            gpu.launch(gpu.kernel("arb", "count"), config, Stream.DEFAULT, args.ptr(counter));
            int[] n = new int[1];
            gpu.copyD2H(counter, n);
            assertThat((long) n[0]).isEqualTo(config.grid().count() * config.block().count());
            gpu.free(counter);
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    @Property
    void oneDimensionalLaunchesCoverTheElementsWithOnePartialBlockAtMost(@ForAll("cover") LaunchConfig config) {
        long threads = config.grid().count() * config.block().count();
        assertThat(config.block().count()).isBetween(1L, (long) GpuArbitraries.MAX_BLOCK_THREADS);
        assertThat(threads).isGreaterThanOrEqualTo(1000);
        assertThat(threads - config.block().count()).isLessThan(1000);
    }

    @Property
    void elementCountsStayInRange(@ForAll("elements") int elements) {
        assertThat(elements).isBetween(1, 5000);
    }

    @Property
    void bufferSizesStayInRange(@ForAll("sizes") long bytes) {
        assertThat(bytes).isBetween(1L, 10_000L);
    }

    @Property
    void opSequencesHaveOneToMaxOps(@ForAll("sequences") List<GpuOp<int[]>> ops) {
        assertThat(ops).hasSizeBetween(1, 5);
        int[] state = new int[1];
        GpuOp.runAll(null, state, ops);
        assertThat(state[0]).isEqualTo(ops.stream().mapToInt(o -> o.toString().equals("inc") ? 1 : 10).sum());
    }

    @Example
    void theEdgeCasesAreTheSizesThatBreakIndexMath() {
        assertThat(edgeCases(GpuArbitraries.bufferSizes(10_000))).contains(1L, 255L, 256L, 257L, 4095L, 4096L, 4097L, 10_000L);
        assertThat(edgeCases(GpuArbitraries.elementCounts(5000, 256))).contains(1, 255, 256, 257, 511, 512, 513, 5000);
        assertThat(edgeCases(GpuArbitraries.bufferSizes(100))).contains(1L, 100L).allMatch(v -> v <= 100);
    }

    private static <T> List<T> edgeCases(Arbitrary<T> a) {
        return StreamSupport.stream(a.edgeCases().spliterator(), false).map(Shrinkable::value).toList();
    }

    @Provide
    Arbitrary<LaunchConfig> launches() {
        return GpuArbitraries.launchConfigs3d(64);
    }

    @Provide
    Arbitrary<LaunchConfig> cover() {
        return GpuArbitraries.launchConfigs(1000);
    }

    @Provide
    Arbitrary<Integer> elements() {
        return GpuArbitraries.elementCounts(5000, 256);
    }

    @Provide
    Arbitrary<Long> sizes() {
        return GpuArbitraries.bufferSizes(10_000);
    }

    @Provide
    Arbitrary<List<GpuOp<int[]>>> sequences() {
        Arbitrary<GpuOp<int[]>> inc = net.jqwik.api.Arbitraries.just(GpuOp.of("inc", (gpu, s) -> s[0] += 1));
        Arbitrary<GpuOp<int[]>> ten = net.jqwik.api.Arbitraries.just(GpuOp.of("ten", (gpu, s) -> s[0] += 10));
        return GpuArbitraries.opSequences(5, List.of(inc, ten));
    }
}
