// SPDX-License-Identifier: Apache-2.0
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

    /**
     * {@inheritDoc} The simulator exists to find bugs, so its defaults are the test kit's: every
     * call site walked ({@code leakDetection=all}), and freed memory held back from reuse (a
     * 64 MiB quarantine), so a stale pointer names where its memory was allocated and freed instead
     * of landing in a block that reused the address.
     */
    @Override
    public java.util.Map<metrale.gpu.Setting, String> defaults(DriverConfig config) {
        return java.util.Map.of(metrale.gpu.Setting.LEAK_DETECTION, metrale.gpu.LeakDetection.ALL.option(),
                metrale.gpu.Setting.QUARANTINE, Long.toString(metrale.gpu.GpuOptions.DEFAULT_QUARANTINE_BYTES));
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

    /**
     * {@inheritDoc} The simulated process has {@code sim.devices} devices (default 1), each of which
     * can access every other.
     */
    @Override
    public java.util.List<metrale.gpu.GpuDevice> devices(DriverConfig config) {
        return SimDevice.devices(config);
    }
}
