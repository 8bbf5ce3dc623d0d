// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import org.junit.jupiter.api.Test;

/** How a backend is found and chosen: by name in any case, else the highest priority available; what a miss says. */
class BackendChoiceTest {

    @Test
    void discoveryListsTheSimulatorAvailableAndRanksByPriority() {
        List<Gpu.BackendInfo> all = Gpu.backends();
        assertThat(all).anySatisfy(b -> {
            assertThat(b.name()).isEqualTo("sim");
            assertThat(b.available()).isTrue();
            assertThat(b.reason()).isEmpty();
        });
        for (int i = 1; i < all.size(); i++) {
            assertThat(all.get(i).priority()).as("backends ranked by priority, highest first: %s", all)
                    .isLessThanOrEqualTo(all.get(i - 1).priority());
        }
    }

    @Test
    void aNamedBackendIsFoundInAnyCaseAndConfirmedQuietly() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture(); Gpu gpu = Gpu.builder().backend("SIM").open()) {
            assertThat(gpu.backendName()).isEqualTo("sim");
            // A named backend is confirmed at DEBUG, below what the logger passes by default: nothing at INFO.
            assertThat(log.all()).noneSatisfy(m -> assertThat(m).contains("using the"));
        }
    }

    @Test
    void withoutANameTheHighestPriorityAvailableBackendIsChosenAndSaidSo() {
        String named = System.getProperty("metrale.backend");
        org.junit.jupiter.api.Assumptions.assumeTrue(named == null && System.getenv("METRALE_BACKEND") == null,
                "a backend is named by metrale.backend or METRALE_BACKEND");
        Gpu.BackendInfo best = Gpu.backends().stream().filter(Gpu.BackendInfo::available).findFirst().orElseThrow();
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture(); Gpu gpu = Gpu.builder().open()) {
            assertThat(gpu.backendName()).isEqualTo(best.name());
            assertThat(log.all()).anySatisfy(m -> assertThat(m).startsWith("INFO")
                    .contains("using the " + best.name() + " backend (none named; highest priority available)"));
        }
    }

    @Test
    void anUnknownNameIsAnIllegalArgumentNamingTheBackendsThereAre() {
        assertThatThrownBy(() -> Gpu.builder().backend("nope").open()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no backend named 'nope'").hasMessageContaining("sim");
    }
}
