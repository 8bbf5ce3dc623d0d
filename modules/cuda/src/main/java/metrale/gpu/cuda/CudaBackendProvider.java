// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import metrale.gpu.cuda.internal.CudaBackend;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;

/**
 * The CUDA backend, {@code cuda}, priority 100: chosen over the simulator wherever the NVIDIA
 * driver loads. Constructing it touches no native code; {@link #availability()} loads the driver
 * once and reports why it cannot be used instead of throwing.
 */
public final class CudaBackendProvider implements BackendProvider {

    /** The driver option naming the device ordinal; wins over {@code metrale.cuda.device}. */
    public static final String DEVICE_OPTION = "cuda.device";

    /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
    public CudaBackendProvider() {
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public int priority() {
        return 100;
    }

    @Override
    public Availability availability() {
        return CudaBackend.availability();
    }

    /**
     * {@inheritDoc} The device is option {@code device} ({@code Gpu.builder().device(i)}), else
     * option {@value #DEVICE_OPTION}, else the system property {@code metrale.cuda.device}, else
     * {@code METRALE_CUDA_DEVICE}, else 0 ({@link metrale.gpu.Setting#CUDA_DEVICE}).
     */
    @Override
    public Driver open(DriverConfig config) {
        long ordinal = config.getLong("device", config.getLong(DEVICE_OPTION, 0));
        if (ordinal < 0 || ordinal > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(DEVICE_OPTION + "=" + ordinal + " is not a device ordinal");
        }
        return CudaBackend.open((int) ordinal);
    }

    /** {@inheritDoc} From {@code cuDeviceGetCount}, {@code cuDeviceGetPCIBusId} and {@code cuDeviceCanAccessPeer}. */
    @Override
    public java.util.List<metrale.gpu.GpuDevice> devices(DriverConfig config) {
        if (!availability().available()) {
            throw new metrale.gpu.BackendUnavailableException("cuInit", availability().reason());
        }
        return CudaBackend.devices();
    }
}
