// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.Test;

/** The simulated process: a sticky fault poisons every device in it, and no device opens in it again. */
class SimProcessTest {

    private static GpuException fails(CudaError error, Runnable call) {
        try {
            call.run();
        } catch (GpuException e) {
            assertThat(e.error()).isEqualTo(error);
            return e;
        }
        throw new AssertionError("expected " + error);
    }

    @Test
    void theDefaultIsTheSharedProcessAndFreshGivesEachDeviceItsOwn() {
        try (SimDevice a = new SimDevice(DriverConfig.empty());
             SimDevice b = new SimDevice(new DriverConfig(Map.of(SimOptions.PROCESS, SimOptions.PROCESS_SHARED)));
             SimDevice c = new SimDevice(new DriverConfig(Map.of(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)));
             SimDevice d = new SimDevice(new DriverConfig(Map.of(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)))) {
            assertThat(a.process()).isSameAs(SimProcess.shared()).isSameAs(b.process());
            assertThat(c.process()).isNotSameAs(SimProcess.shared()).isNotSameAs(d.process());
        }
    }

    @Test
    void anUnknownProcessOptionIsRefused() {
        assertThatThrownBy(() -> new SimDevice(new DriverConfig(Map.of(SimOptions.PROCESS, "mine"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sim.process").hasMessageContaining("'mine'")
                .hasMessageContaining("METRALE_SIM_PROCESS").hasMessageContaining("named:NAME")
                .hasMessageContaining("shared").hasMessageContaining("fresh");
    }

    @Test
    void aStickyFaultPoisonsTheOtherDevicesOfItsProcessAndEveryDeviceOpenedLater() {
        SimProcess p = SimProcess.fresh();
        try (SimDevice faulty = new SimDevice(DriverConfig.empty(), p);
             SimDevice sibling = new SimDevice(DriverConfig.empty(), p);
             SimDevice elsewhere = new SimDevice(DriverConfig.empty(), SimProcess.fresh())) {
            long q = sibling.memAlloc(64);
            faulty.simControls().failNextSync(CudaError.LAUNCH_FAILED);
            fails(CudaError.LAUNCH_FAILED, faulty::ctxSynchronize);
            // The sibling learns of it at its next call, as a second CUDA context of the process would.
            assertThat(sibling.probe()).isEqualTo(CudaError.LAUNCH_FAILED);
            GpuException e = fails(CudaError.LAUNCH_FAILED, () -> sibling.memFree(q));
            assertThat(e.getMessage()).contains("another simulator runtime", "failNextSync");
            // A new device in that process fails at open, as cuCtxCreate does after a sticky fault.
            GpuException open = fails(CudaError.LAUNCH_FAILED, () -> new SimDevice(DriverConfig.empty(), p).close());
            assertThat(open.getMessage()).contains("sim.process=fresh");
            // Another process is untouched.
            long r = elsewhere.memAlloc(64);
            elsewhere.memFree(r);
            assertThat(elsewhere.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void theFirstStickyFaultOfAProcessIsTheOneItKeeps() {
        SimProcess p = SimProcess.fresh();
        try (SimDevice a = new SimDevice(DriverConfig.empty(), p);
             SimDevice b = new SimDevice(DriverConfig.empty(), p)) {
            a.simControls().failNextSync(CudaError.ILLEGAL_ADDRESS);
            fails(CudaError.ILLEGAL_ADDRESS, a::ctxSynchronize);
            fails(CudaError.ILLEGAL_ADDRESS, b::ctxSynchronize);
            assertThat(p.fault().error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        }
    }
}
