package metrale.gpu.sim.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.contract.GpuContract;

/** How the simulator runs the contract suite: the backend, and the kernel twins with the contract PTX. */
final class SimContractSupport {

    private SimContractSupport() {
    }

    /** {@return a builder for the simulator} */
    static GpuBuilder builder() {
        return Gpu.builder().backend("sim");
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
