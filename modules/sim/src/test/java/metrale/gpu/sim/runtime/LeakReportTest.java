// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import org.junit.jupiter.api.Test;

/** Leaks at close: each logged in creation order, and a leak a caller (the test kit) has reported (markLeaksReported) not repeated at WARNING. */
class LeakReportTest {

    @Test
    void closeWarnsOnlyOfLeaksNotMarkedReported() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            Gpu gpu = sim().open();
            gpu.alloc(4096);
            gpu.markLeaksReported();
            gpu.alloc(24);
            gpu.close();
            assertThat(log.warnings()).hasSize(2);
            assertThat(log.warnings().get(0)).contains("close: 1 allocation(s) of 24 bytes were never freed");
            assertThat(log.warnings().get(1)).contains("leak: ").contains("(24 B,").doesNotContain("reported");
            assertThat(log.debug()).anySatisfy(m -> assertThat(m).contains("leak: ", "(4096 B,")
                    .endsWith("(reported before close)"));
        }
    }

    @Test
    void withoutTheMarkEveryLeakIsAWarning() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            Gpu gpu = sim().open();
            gpu.alloc(4096);
            gpu.alloc(24);
            gpu.close();
            assertThat(log.warnings()).hasSize(3);
            assertThat(log.warnings().get(0)).contains("close: 2 allocation(s) of 4120 bytes were never freed");
        }
    }

    @Test
    void leaksAreReleasedAndReportedInCreationOrder() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            Gpu g = sim().open();
            // A managed allocation has a native address, below the simulator's device addresses.
            DevicePtr device = g.alloc(64);
            DevicePtr managed = g.allocManaged(64);
            assertThat(Long.compareUnsigned(managed.address(), device.address())).isNegative();
            g.close();
            List<String> leaks = log.warnings().stream().filter(w -> w.contains("leak:")).toList();
            assertThat(leaks).hasSize(2);
            assertThat(leaks.get(0)).contains(device.toString());
            assertThat(leaks.get(1)).contains(managed.toString());
        }
    }
}
