// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.LeakDetection;
import metrale.gpu.Setting;
import metrale.gpu.contract.TestLog;
import metrale.gpu.sim.SimOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The kit walks every site, whatever the properties say; a runtime opened outside it may sample,
 * and then the kit's leak report and the runtime's close say how many leaks went unsampled.
 */
class KitLeakDetectionTest {

    @AfterEach
    @SuppressWarnings("removal")
    void clear() {
        System.clearProperty(Setting.LEAK_DETECTION.property());
        System.clearProperty(Setting.ALLOC_SITES.property());
    }

    private static int line() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    @Test
    @SuppressWarnings("removal")
    void theKitWalksEverySiteWhateverThePropertiesSay() {
        System.setProperty(Setting.LEAK_DETECTION.property(), "off");
        System.setProperty(Setting.ALLOC_SITES.property(), "false");
        Gpu gpu = TestGpus.sim().open();
        try {
            assertThat(gpu.options().leakDetection()).isEqualTo(LeakDetection.ALL);
            gpu.alloc(512); int alloc = line();
            gpu.createStream(); int stream = line();
            List<String> problems = GpuChecks.problems(gpu, Set.of());
            assertThat(problems).hasSize(2).noneMatch(p -> p.startsWith("leak sites:"));
            assertThat(problems.get(0)).contains("allocated at KitLeakDetectionTest.java:" + alloc);
            assertThat(problems.get(1)).contains("created at KitLeakDetectionTest.java:" + stream);
        } finally {
            gpu.close();
        }
    }

    private static GpuBuilder sim() {
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
    }

    @Test
    void aSampledRuntimesLeaksSayHowManyWentUnsampled() {
        int n = 200;
        int mark = TestLog.mark();
        try (Gpu gpu = sim().leakDetection(LeakDetection.SAMPLED).leakDetectionSample(4).open()) {
            for (int i = 0; i < n; i++) {
                gpu.alloc(64);
            }
            List<String> problems = GpuChecks.problems(gpu, Set.of());
            long named = gpu.liveAllocations().stream().filter(a -> LeakDetection.hasSite(a.site())).count();
            // Binomial(200, 1/4): mean 50, sd 6.1.
            assertThat(named).isBetween(14L, 86L);
            assertThat(problems).filteredOn(p -> p.startsWith("leak: ")).hasSize(n);
            assertThat(problems).last().isEqualTo("leak sites: " + named + " of 200 leaked allocations have their site; "
                    + (n - named) + " unsampled (leakDetection=sampled, 1 in 4)");
        }
        try (Gpu gpu = sim().leakDetection(LeakDetection.SAMPLED).leakDetectionSample(4).open()) {
            gpu.alloc(64);
            gpu.alloc(64);
            for (int i = 0; i < 60; i++) {
                gpu.alloc(64);
            }
        }
        assertThat(TestLog.since(mark, System.Logger.Level.WARNING,
                m -> m.contains("62 allocation(s) of 3968 bytes were never freed; freeing them; ")
                        && m.contains(" of 62 leaked allocations have their site; ")
                        && m.endsWith(" unsampled (leakDetection=sampled, 1 in 4)"))).hasSize(1);
    }

    @Test
    void anOffRuntimesLeaksSayNoneHasItsSite() {
        int mark = TestLog.mark();
        try (Gpu gpu = sim().leakDetection(LeakDetection.OFF).open()) {
            gpu.alloc(64);
            gpu.createStream();
            gpu.createEvent();
            assertThat(GpuChecks.problems(gpu, Set.of())).contains(
                    "leak sites: 1 leaked allocations, none with its site (leakDetection=off)",
                    "leak sites: 2 leaked resources, none with its site (leakDetection=off)");
        }
        try (Gpu gpu = sim().leakDetection(LeakDetection.OFF).open()) {
            gpu.createStream();
        }
        assertThat(TestLog.since(mark, System.Logger.Level.INFO,
                m -> m.endsWith("1 resource(s) were never released; releasing them; "
                        + "1 unreleased resources, none with its site (leakDetection=off)"))).hasSize(1);
    }
}
