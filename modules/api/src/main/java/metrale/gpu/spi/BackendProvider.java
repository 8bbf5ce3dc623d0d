// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

/**
 * A backend, found with {@link java.util.ServiceLoader}. Implementations must be cheap to
 * construct and must never throw from their constructor or from {@link #availability()}: a
 * machine without the backend's native library reports it unavailable, with the reason.
 */
public interface BackendProvider {

    /** {@return the backend's name, as {@code Gpu.open(name)} takes it: {@code cuda} or {@code sim}} */
    String name();

    /**
     * {@return the preference when no backend is named; the highest available one wins}
     * CUDA is 100, the simulator 0.
     */
    int priority();

    /** {@return whether this backend can be opened here, and if not, why} */
    Availability availability();

    /**
     * Opens a driver on the default device.
     *
     * @param config backend options
     * @return a new driver, owned by the caller
     * @throws metrale.gpu.GpuException if the device cannot be opened
     */
    Driver open(DriverConfig config);

    /**
     * {@return the defaults this backend gives to settings that neither code, a system property
     * nor an environment variable sets, as text in each setting's grammar} A setting absent here
     * takes the table's default ({@link metrale.gpu.Setting#defaultValue()}). The simulator, which
     * exists to find bugs, names every call site and holds freed memory back
     * ({@code leakDetection=all}, a 64 MiB quarantine); CUDA keeps the fast defaults.
     *
     * @param config the backend options the runtime would be opened with
     */
    default java.util.Map<metrale.gpu.Setting, String> defaults(DriverConfig config) {
        return java.util.Map.of();
    }

    /**
     * Lists the devices {@link #open} can open: the option {@code device} (an ordinal from this list,
     * default 0) picks one.
     *
     * @param config backend options (the simulator reads {@code sim.devices})
     * @return the devices, by ordinal
     * @throws metrale.gpu.GpuException {@code NOT_SUPPORTED} where the backend cannot list devices,
     *         or the driver's error
     */
    default java.util.List<metrale.gpu.GpuDevice> devices(DriverConfig config) {
        throw new metrale.gpu.GpuException(metrale.gpu.CudaError.NOT_SUPPORTED, "devices",
                "the " + name() + " backend does not list devices");
    }
}
