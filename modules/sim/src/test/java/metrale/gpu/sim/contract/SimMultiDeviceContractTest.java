// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import java.util.UUID;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.MultiDeviceContract;
import metrale.gpu.sim.SimOptions;
import org.junit.jupiter.api.Nested;

/** {@link MultiDeviceContract} on the simulator with 1, 2 and 4 devices, each test in a simulated process of its own. */
class SimMultiDeviceContractTest {

    /** The contract with {@code n} simulated devices. */
    abstract static class WithDevices extends MultiDeviceContract {
        private final String process = SimOptions.PROCESS_NAMED + "multidevice-" + UUID.randomUUID();

        abstract int n();

        @Override
        protected GpuBuilder builder(int device) {
            return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, process)
                    .backendOption(SimOptions.DEVICES, Integer.toString(n()))
                    .backendOption(SimOptions.CAPACITY, Long.toString(64L << 20)).device(device);
        }

        @Override
        protected int deviceCount() {
            return n();
        }

        @Override
        protected void prepareKernels(Gpu gpu) {
            ContractKernels.register();
            metrale.gpu.contract.GpuContract.loadContractModule(gpu);
        }

        @Override
        protected boolean faultsStayInTheTest() {
            return true;
        }

        @Override
        protected void assertSimulatorSaysWhy(metrale.gpu.GpuException e) {
            org.assertj.core.api.Assertions.assertThat(e.getMessage())
                    .contains("live memory of device 0", "has not enabled peer access", "enablePeerAccess");
        }
    }

    @Nested
    class OneDevice extends WithDevices {
        @Override
        int n() {
            return 1;
        }
    }

    @Nested
    class TwoDevices extends WithDevices {
        @Override
        int n() {
            return 2;
        }
    }

    @Nested
    class FourDevices extends WithDevices {
        @Override
        int n() {
            return 4;
        }
    }
}
