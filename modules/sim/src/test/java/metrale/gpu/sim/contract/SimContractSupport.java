package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.contract.GpuContract;

/** How the simulator runs the contract suite: the backend, and the kernel twins with the contract PTX. */
final class SimContractSupport {

    private SimContractSupport() {
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
        ContractKernels.register();
        GpuContract.loadContractModule(gpu);
    }
}
