package metrale.gpu.cuda.internal;

import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Availability;

/**
 * Loads the CUDA driver once and says whether it can be used: the holder that keeps a failed
 * {@link CudaLib} initializer from ever reaching a caller as an exception.
 */
public final class CudaBackend {

    /** The system property naming the device ordinal. */
    public static final String DEVICE_PROPERTY = "metrale.cuda.device";

    private CudaBackend() {
    }

    /** Evaluated on first use, once per process. */
    private static final class Probe {
        static final Availability AVAILABILITY = probe();

        private static Availability probe() {
            Module m = CudaLib.class.getModule();
            if (!m.isNativeAccessEnabled()) {
                String flag = m.isNamed() ? m.getName() : "ALL-UNNAMED";
                return Availability.no("native access is not enabled for " + (m.isNamed() ? "module " + flag : "the class path")
                        + ": start java with --enable-native-access=" + flag);
            }
            try {
                CudaLib.init(0);
                int count = CudaLib.deviceGetCount();
                if (count == 0) {
                    return Availability.no(CudaLib.LIBRARY + " loaded but reports no CUDA device");
                }
                return Availability.yes();
            } catch (ExceptionInInitializerError e) {
                Throwable c = e.getCause() == null ? e : e.getCause();
                return Availability.no("the CUDA driver library " + System.getProperty(CudaLib.LIBRARY_PROPERTY, CudaLib.DEFAULT_LIBRARY)
                        + " did not load (" + c.getMessage() + "); install the NVIDIA driver or set -D"
                        + CudaLib.LIBRARY_PROPERTY + "=/path/to/libcuda.so.1");
            } catch (GpuException e) {
                return Availability.no("cuInit/cuDeviceGetCount failed: " + e.getMessage());
            } catch (LinkageError | RuntimeException e) {
                return Availability.no("the CUDA driver did not load: " + e);
            }
        }
    }

    /** {@return whether the driver loads, initializes and has a device; never throws} */
    public static Availability availability() {
        return Probe.AVAILABILITY;
    }

    /**
     * Opens a driver on a device.
     *
     * @param ordinal the device's index
     * @return the driver, owning a retain of the device's primary context
     * @throws GpuException {@code NO_DEVICE} with the reason when CUDA is unavailable, or the driver's error
     */
    public static CudaDevice open(int ordinal) {
        Availability a = availability();
        if (!a.available()) {
            throw new GpuException(CudaError.NO_DEVICE, "cuInit", a.reason());
        }
        return new CudaDevice(ordinal);
    }

    /** {@return every device, see {@link CudaDevice#devices()}} */
    public static java.util.List<metrale.gpu.GpuDevice> devices() {
        return CudaDevice.devices();
    }

    /** {@return the driver's CUDA version, e.g. 13000} */
    public static int driverVersion() {
        return CudaLib.driverGetVersion();
    }

    /** {@return the exported name bound for {@code cuEventElapsedTime}: {@code cuEventElapsedTime_v2} where the driver has it} */
    public static String eventElapsedTimeFunction() {
        return CudaLib.EVENT_ELAPSED_TIME;
    }
}
