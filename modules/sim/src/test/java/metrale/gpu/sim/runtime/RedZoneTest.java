// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import org.junit.jupiter.api.Test;

/** Red zones on the simulator: an overflow found by a scan is logged with its site (the rest of the red-zone tests run in the core's module). */
class RedZoneTest {

    @Test
    void overflowByMemsetIsFoundAndNamed() {
        try (Gpu gpu = sim().redZoneBytes(64).open();
             RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            DevicePtr ok = gpu.alloc(256);
            DevicePtr p = gpu.alloc(256); String site = here();
            gpu.memset(p.plus(250), 0, 10);
            assertThat(gpu.findRedzoneViolations()).singleElement().satisfies(v -> {
                assertThat(v.allocation().ptr()).isEqualTo(p);
                assertThat(v.allocation().site()).isEqualTo(site);
                assertThat(v.firstBadOffset()).isZero();
                assertThat(v.badBytes()).isEqualTo(4);
            });
            assertThat(gpu.scanRedzones()).isEqualTo(1);
            assertThat(log.warnings()).anySatisfy(m -> assertThat(m).contains(p.toString(), site, "red zone"));
            assertThat(gpu.liveAllocations()).hasSize(2);
            gpu.free(ok);
        }
    }
}
