// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuDevice;
import metrale.gpu.GpuException;
import org.junit.jupiter.api.Test;

/** The simulator's devices: the option's bounds, the listing, and the process boundary of peer copies. */
class SimDevicesTest {

    @Test
    void theDeviceCountIsChecked() {
        assertThatThrownBy(() -> Gpu.builder().backend("sim").backendOption(SimOptions.DEVICES, "0").devices())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sim.devices").hasMessageContaining("METRALE_SIM_DEVICES").hasMessageContaining("= 0");
        assertThatThrownBy(() -> Gpu.builder().backend("sim").backendOption(SimOptions.DEVICES, "65").open())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[1, 64]");
    }

    @Test
    void everyDeviceReachesEveryOther() {
        List<GpuDevice> d = Gpu.builder().backend("sim").backendOption(SimOptions.DEVICES, "3").devices();
        assertThat(d).extracting(GpuDevice::peers).containsExactly(List.of(1, 2), List.of(0, 2), List.of(0, 1));
        assertThat(d).extracting(GpuDevice::pciBusId).containsExactly("0000:01:00.0", "0000:02:00.0", "0000:03:00.0");
        assertThat(d.get(1).canAccessPeer(2)).isTrue();
        assertThat(d.get(1).canAccessPeer(1)).isFalse();
    }

    @Test
    void peerCopiesStayInsideOneSimulatedProcess() {
        try (Gpu a = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.DEVICES, "2").device(0).open();
             Gpu b = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                     .backendOption(SimOptions.DEVICES, "2").device(1).open()) {
            DevicePtr pa = a.alloc(64);
            DevicePtr pb = b.alloc(64);
            GpuException e = catchThrowableOfType(GpuException.class, () -> a.copyToPeer(pa, b, pb, 64));
            assertThat(e.error()).isEqualTo(CudaError.INVALID_CONTEXT);
            assertThat(e.getMessage()).contains("two processes");
            a.free(pa);
            b.free(pb);
        }
    }

    @Test
    void aNamedProcessIsSharedByTheRuntimesThatNameIt() {
        String name = SimOptions.PROCESS_NAMED + "sim-devices-test";
        try (Gpu a = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, name)
                .backendOption(SimOptions.DEVICES, "2").device(0).open();
             Gpu b = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, name)
                     .backendOption(SimOptions.DEVICES, "2").device(1).open()) {
            assertThat(a.canAccessPeer(b)).isTrue();
            a.enablePeerAccess(b);
            a.enablePeerAccess(b);
        }
    }
}
