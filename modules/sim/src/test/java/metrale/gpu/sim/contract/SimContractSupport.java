// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.WeakHashMap;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.SimOptions;

/** How the simulator runs the contract suite: the backend, and the kernel twins with the contract PTX. */
final class SimContractSupport {

    /** The device under each runtime the suite opened, looked up after close, when unwrap refuses. */
    private static final Map<Gpu, SimControls> DEVICES = new WeakHashMap<>();

    private SimContractSupport() {
    }

    /**
     * Asserts that the runtime left nothing in the simulator when it closed it: no device, managed
     * or page-locked allocation, stream, event, module or graph. After a latched sticky fault the
     * simulator refuses releases as CUDA does, so only the close itself is required then.
     *
     * @param closed a runtime the suite opened, after close
     */
    static void assertReleased(Gpu closed) {
        SimControls dev;
        synchronized (DEVICES) {
            dev = DEVICES.get(closed);
        }
        assertThat(dev).as("the simulator under %s", closed).isNotNull();
        assertThat(dev.isClosed()).as("the runtime closed its simulator").isTrue();
        if (closed.fault().isEmpty()) {
            assertThat(dev.liveAtClose()).as("what the simulator still held when the runtime closed it").isEmpty();
        }
    }

    /**
     * {@return whether this run has twins off ({@code -Dmetrale.sim.twins=off}): the suite's second
     * pass, where every contract kernel runs its PTX on the simulator's engine}
     */
    static boolean twinsOff() {
        return metrale.gpu.sim.SimTwinMode.OFF.option().equals(System.getProperty(metrale.gpu.Setting.SIM_TWINS.property()));
    }

    /** {@return a builder for the simulator} */
    static GpuBuilder builder() {
        // A simulated process of its own: a sticky fault a test provokes stays in that test.
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
    }

    /**
     * Registers the twins and loads the contract PTX, whose {@code .entry} names the simulator
     * checks against the twins.
     *
     * @param gpu a simulator runtime
     */
    static void prepareKernels(Gpu gpu) {
        SimControls dev = gpu.unwrap(SimControls.class).orElseThrow();
        synchronized (DEVICES) {
            DEVICES.put(gpu, dev);
        }
        ContractKernels.register();
        GpuContract.loadContractModule(gpu);
    }
}
