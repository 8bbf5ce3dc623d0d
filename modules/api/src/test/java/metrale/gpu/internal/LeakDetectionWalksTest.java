// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * How many stack walks an alloc+free pair costs, counted by the runtime's own call-site policy:
 * at most one in every level, at the allocation; a free walks only for a report that names where
 * memory was freed (red zones or a quarantine on, the pool's race checks), and only for an
 * allocation whose own site was walked.
 */
class LeakDetectionWalksTest {

    private static final int PAIRS = 200;

    /** The pair's path: the driver allocator, the caching pool through {@code Gpu.alloc}, or through {@code pool()}. */
    enum Path {
        DRIVER, POOLED_ALLOC, POOL
    }

    private static Gpu open(ScriptedDriver driver, LeakDetection level, Path path, long quarantine) {
        return driver.builder().leakDetection(level).leakDetectionSample(4)
                .allocator(path == Path.DRIVER ? "driver" : "caching").quarantineBytes(quarantine).open();
    }

    private static AllocSites sites(Gpu gpu) {
        return ((GpuRuntime) gpu).core().sites();
    }

    /** Runs the pairs; {@return the site each allocation recorded} */
    private static List<String> pairs(Gpu gpu, Path path) {
        List<String> sites = new ArrayList<>();
        for (int i = 0; i < PAIRS; i++) {
            DevicePtr p = path == Path.POOL ? gpu.pool().alloc(64, Stream.DEFAULT) : gpu.alloc(64);
            sites.add(gpu.liveAllocations().stream().filter(a -> a.ptr().equals(p)).map(Allocation::site)
                    .findFirst().orElseThrow());
            if (path == Path.POOL) {
                gpu.pool().free(p, Stream.DEFAULT);
            } else {
                gpu.free(p);
            }
        }
        return sites;
    }

    private static long named(List<String> sites) {
        return sites.stream().filter(LeakDetection::hasSite).count();
    }

    @ParameterizedTest
    @EnumSource(LeakDetection.class)
    void aPairWalksAtMostOnceAtItsAllocation(LeakDetection level) {
        for (Path path : Path.values()) {
            try (Gpu gpu = open(new ScriptedDriver(), level, path, 0)) {
                List<String> sites = pairs(gpu, path);
                long named = named(sites);
                assertThat(sites(gpu).walks()).as(level + " " + path + ": one walk per named allocation, none at a free")
                        .isEqualTo(named).isLessThanOrEqualTo(PAIRS);
                switch (level) {
                    case OFF -> assertThat(sites).as(path.name()).containsOnly(LeakDetection.NO_SITE);
                    case ALL -> assertThat(named).as(path.name()).isEqualTo(PAIRS);
                    // Binomial(200, 1/4): mean 50, sd 6.1.
                    case SAMPLED -> assertThat(named).as(path.name()).isBetween(14L, 86L);
                }
            }
        }
    }

    /** The quarantine names where memory was freed: the free walks too, but only for a pair whose allocation walked. */
    @ParameterizedTest
    @EnumSource(LeakDetection.class)
    void withTheQuarantineOnlyAWalkedAllocationsFreeWalks(LeakDetection level) {
        for (Path path : Path.values()) {
            try (Gpu gpu = open(new ScriptedDriver(), level, path, 1 << 20)) {
                List<String> sites = pairs(gpu, path);
                assertThat(sites(gpu).walks()).as(level + " " + path).isEqualTo(2 * named(sites));
            }
        }
    }

    /** The pool's race checks name a block's previous free: the same rule as the quarantine's. */
    @ParameterizedTest
    @EnumSource(LeakDetection.class)
    void withRaceChecksOnlyAWalkedAllocationsFreeWalks(LeakDetection level) {
        try (Gpu gpu = open(new ScriptedDriver().reportRaces(null), level, Path.POOL, 0)) {
            List<String> sites = pairs(gpu, Path.POOL);
            assertThat(sites(gpu).walks()).as(level.name()).isEqualTo(2 * named(sites));
        }
    }

    /** Resources walk at creation only, under their own count: a stream's destroy walks nothing. */
    @ParameterizedTest
    @EnumSource(LeakDetection.class)
    void aResourceWalksAtMostOnceAtItsCreation(LeakDetection level) {
        try (Gpu gpu = open(new ScriptedDriver(), level, Path.DRIVER, 0)) {
            long before = sites(gpu).walks();
            for (int i = 0; i < PAIRS; i++) {
                gpu.destroyStream(gpu.createStream());
            }
            assertThat(sites(gpu).walks()).as("the allocations' count").isEqualTo(before);
            AllocSites resources = resourceSites(gpu);
            switch (level) {
                case OFF -> assertThat(resources.walks()).isZero();
                case ALL -> assertThat(resources.walks()).isEqualTo(PAIRS);
                case SAMPLED -> assertThat(resources.walks()).isBetween(14L, 86L);
            }
        }
    }

    private static AllocSites resourceSites(Gpu gpu) {
        return ((GpuRuntime) gpu).core().resources().policy();
    }
}
