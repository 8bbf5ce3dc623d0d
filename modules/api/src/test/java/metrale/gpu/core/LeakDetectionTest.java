// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.here;
import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.Gpu;
import metrale.gpu.LeakDetection;
import metrale.gpu.LiveResource;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/** Each leak-detection level through the runtime: which sites it names, and what its reports say of the rest. */
class LeakDetectionTest {

    @Test
    void offWalksNothingAndTheReportSaysSo() {
        try (Gpu gpu = scripted().leakDetection(LeakDetection.OFF).allocator("caching").open()) {
            gpu.alloc(16);
            gpu.pool().alloc(16, Stream.DEFAULT);
            gpu.allocManaged(16);
            gpu.createStream();
            assertThat(gpu.liveAllocations()).extracting(Allocation::site).containsOnly(LeakDetection.NO_SITE).hasSize(3);
            assertThat(gpu.liveResources()).extracting(LiveResource::site).containsExactly(LeakDetection.NO_SITE);
            assertThat(gpu.allocReport(10, 0)).contains("  ?\n")
                    .contains("  3 live allocations, none with its site (leakDetection=off)\n");
        }
    }

    @Test
    void sampledNamesAboutOneInNAndCountsTheRest() {
        int n = 400;
        try (Gpu gpu = scripted().leakDetection(LeakDetection.SAMPLED).leakDetectionSample(4).open()) {
            String site = null;
            for (int i = 0; i < n; i++) {
                gpu.alloc(16); site = here();
            }
            for (int i = 0; i < n; i++) {
                gpu.createEvent();
            }
            List<String> sites = gpu.liveAllocations().stream().map(Allocation::site).toList();
            String named = site;
            long hits = sites.stream().filter(named::equals).count();
            // Binomial(400, 1/4): mean 100, sd 8.7; the bounds are 6 sd away.
            assertThat(hits).isBetween(48L, 152L);
            assertThat(sites).filteredOn(s -> !s.equals(named)).containsOnly(LeakDetection.UNSAMPLED_SITE);
            assertThat(gpu.allocReport(10, 0)).contains(named).contains(LeakDetection.UNSAMPLED_SITE)
                    .contains("  " + hits + " of 400 live allocations have their site; " + (n - hits)
                            + " unsampled (leakDetection=sampled, 1 in 4)\n");
            long events = gpu.liveResources().stream().filter(r -> LeakDetection.hasSite(r.site())).count();
            assertThat(events).as("resources are sampled alike").isBetween(48L, 152L);
            assertThat(gpu.liveResources()).filteredOn(r -> !LeakDetection.hasSite(r.site()))
                    .extracting(LiveResource::site).containsOnly(LeakDetection.UNSAMPLED_SITE);
        }
    }

    @Test
    void allNamesEverySiteAndTheReportHasNoCountLine() {
        try (Gpu gpu = scripted().leakDetection(LeakDetection.ALL).allocator("caching").open()) {
            gpu.alloc(16); String a = here();
            gpu.pool().alloc(16, Stream.DEFAULT); String b = here();
            gpu.createStream(); String c = here();
            assertThat(gpu.liveAllocations()).extracting(Allocation::site).containsExactly(a, b);
            assertThat(gpu.liveResources()).extracting(LiveResource::site).containsExactly(c);
            assertThat(gpu.allocReport(10, 0)).doesNotContain("have their site").doesNotContain("unsampled");
        }
    }

    /** A double free names the free's line only where a free walks; elsewhere it says why it does not. */
    @Test
    void aDoubleFreeNamesTheFreesLineOnlyWhereAFreeWalks() {
        try (Gpu gpu = scripted().leakDetection(LeakDetection.ALL).open()) {
            var p = gpu.alloc(16);
            gpu.free(p);
            assertThat(catchThrowable(() -> gpu.free(p)))
                    .hasMessageContaining("freed at Gpu.free (line not recorded: a free walks for it only with red "
                            + "zones or a quarantine on)");
        }
        try (Gpu gpu = scripted().leakDetection(LeakDetection.ALL).quarantineBytes(1 << 20).open()) {
            var p = gpu.alloc(16);
            gpu.free(p); String freed = here();
            assertThat(catchThrowable(() -> gpu.free(p)))
                    .hasMessageContaining("freed at " + freed);
        }
    }

    @Test
    void theDefaultIsSampledOneIn128() {
        assertThat(Gpu.builder().options().leakDetection()).isEqualTo(LeakDetection.SAMPLED);
        assertThat(Gpu.builder().options().leakDetectionSample()).isEqualTo(128).isEqualTo(LeakDetection.DEFAULT_SAMPLE);
    }
}
