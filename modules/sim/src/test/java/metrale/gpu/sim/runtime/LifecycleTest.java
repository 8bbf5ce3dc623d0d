// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.Driver;
import org.junit.jupiter.api.Test;

/** close() over the simulator: its leak and teardown logs, and unwrap giving the simulator's controls, never its driver. */
class LifecycleTest {

    @Test
    void closeIsIdempotentAndLogsEachLeakWithItsSite() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            Gpu gpu = sim().open();
            DevicePtr leaked = gpu.alloc(4096); String site = here();
            gpu.alloc(8);
            DevicePtr freed = gpu.alloc(16);
            gpu.free(freed);
            gpu.createStream();
            gpu.createEvent();
            gpu.allocHostPinned(64);
            gpu.allocArena(128);
            gpu.close();
            gpu.close();
            assertThat(gpu.isClosed()).isTrue();
            assertThat(log.warnings()).anySatisfy(m -> assertThat(m).contains("2 allocation(s) of 4104 bytes"));
            assertThat(log.warnings()).anySatisfy(m -> assertThat(m).contains(leaked.toString(), "4096 B", site));
        }
    }

    @Test
    void unwrapGivesTheControlsButNeverTheDriver() {
        try (Gpu gpu = sim().open()) {
            SimControls controls = gpu.unwrap(SimControls.class).orElseThrow();
            // The controls are not the driver: nothing reached through unwrap can allocate behind the ledger.
            assertThat(controls).isNotInstanceOf(Driver.class);
            assertThat(gpu.unwrap(Driver.class)).isEmpty();
            assertThat(gpu.unwrap(SimDevice.class)).isEmpty();
            assertThat(gpu.unwrap(Object.class)).containsSame(controls);
            assertThat(gpu.unwrap(String.class)).isEmpty();
            assertThat(gpu.backendName()).isEqualTo("sim");
        }
    }

    @Test
    void closeReleasesWhatTheRuntimeHoldsWithoutComplaint() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            Gpu gpu = sim().open();
            Stream s = gpu.createStream(true);
            gpu.beginCapture(s);
            gpu.endCapture(s);
            gpu.createEvent(2);
            gpu.allocHostPinned(32);
            gpu.allocArena(256);
            gpu.close();
            // A failed release is logged at WARNING; a clean teardown logs nothing.
            assertThat(log.warnings()).isEmpty();
        }
    }
}
