package metrale.gpu.sim;

import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import metrale.gpu.sim.internal.SimDevice;

/** The simulator backend: named {@code sim}, priority 0, always available. */
public final class SimBackendProvider implements BackendProvider {

    /** Creates the provider; cheap, as {@link java.util.ServiceLoader} requires. */
    public SimBackendProvider() {
    }

    @Override
    public String name() {
        return "sim";
    }

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public Availability availability() {
        return Availability.yes();
    }

    /**
     * Opens a simulated device with the given options; its controls are {@link SimControls}.
     *
     * @param config options, see the module's documentation
     * @return a new simulated device
     */
    @Override
    public Driver open(DriverConfig config) {
        return new SimDevice(config);
    }
}
