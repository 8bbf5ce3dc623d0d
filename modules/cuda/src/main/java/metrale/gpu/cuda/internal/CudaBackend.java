// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.BackendUnavailableException;
import metrale.gpu.GpuException;
import metrale.gpu.internal.ffi.NativeLibrary;
import metrale.gpu.spi.Availability;

/**
 * Loads the CUDA driver once and says whether it can be used: native access, the library and its
 * symbols ({@link LibCuda#LIB}), then {@code cuInit} and a device count; never an exception.
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
            NativeLibrary lib = LibCuda.LIB;
            String noAccess = NativeLibrary.nativeAccessProblem(LibCuda.class.getModule());
            if (noAccess != null) {
                return driverInstalled(lib.name())
                        ? Availability.presentButUnusable("an NVIDIA driver is installed (" + lib.name() + ") but " + noAccess)
                        : Availability.no(noAccess);
            }
            if (lib.failure().isPresent()) {
                return Availability.no(lib.failure().get());
            }
            try {
                CudaLib.init(0);
                int count = CudaLib.deviceGetCount();
                if (count == 0) {
                    return Availability.presentButUnusable(lib.name() + " loaded but reports no CUDA device");
                }
                return Availability.yes();
            } catch (GpuException e) {
                return Availability.presentButUnusable("the CUDA driver loaded but cuInit/cuDeviceGetCount failed: " + e.getMessage());
            } catch (LinkageError | RuntimeException e) {
                return Availability.no("the CUDA driver did not load: " + e);
            }
        }
    }

    /**
     * Whether an NVIDIA driver looks installed, judged from files alone (no native call, so it
     * works without native access): the library named by an absolute path exists, or the kernel
     * driver's {@code /proc/driver/nvidia/version} does, or the library is in a directory of
     * {@code LD_LIBRARY_PATH} or of the usual system library directories.
     *
     * @param library the library setting, a name such as {@code libcuda.so.1} or a path
     * @return whether the driver looks present
     */
    static boolean driverInstalled(String library) {
        try {
            if (library.indexOf('/') >= 0) {
                return Files.isRegularFile(Path.of(library));
            }
            if (Files.exists(Path.of("/proc/driver/nvidia/version"))) {
                return true;
            }
            List<String> dirs = new ArrayList<>();
            String ld = System.getenv("LD_LIBRARY_PATH");
            if (ld != null) {
                dirs.addAll(List.of(ld.split(":")));
            }
            dirs.addAll(List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                    "/usr/local/cuda/compat", "/usr/lib/wsl/lib"));
            for (String d : dirs) {
                if (!d.isBlank() && Files.exists(Path.of(d, library))) {
                    return true;
                }
            }
            return false;
        } catch (RuntimeException e) {
            // A malformed path or a denied read: nothing says a driver is there.
            return false;
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
     * @throws BackendUnavailableException with the reason when CUDA is unavailable
     * @throws GpuException the driver's error
     */
    public static CudaDevice open(int ordinal) {
        Availability a = availability();
        if (!a.available()) {
            throw new BackendUnavailableException("cuInit", a.reason());
        }
        return new CudaDevice(ordinal);
    }

    /**
     * {@return every CUDA device, with its PCI bus id and the devices it can access directly}
     * Needs no context.
     */
    public static List<metrale.gpu.GpuDevice> devices() {
        int n = CudaLib.deviceGetCount();
        int[] dev = new int[n];
        for (int i = 0; i < n; i++) {
            dev[i] = CudaLib.deviceGet(i);
        }
        List<metrale.gpu.GpuDevice> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            List<Integer> peers = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                if (j != i && CudaLib.deviceCanAccessPeer(dev[i], dev[j])) {
                    peers.add(j);
                }
            }
            out.add(new metrale.gpu.GpuDevice(i, "cuda", CudaLib.deviceGetName(dev[i]), CudaLib.deviceTotalMem(dev[i]),
                    CudaLib.deviceGetAttribute(CudaLib.ATTR_COMPUTE_CAPABILITY_MAJOR, dev[i]),
                    CudaLib.deviceGetAttribute(CudaLib.ATTR_COMPUTE_CAPABILITY_MINOR, dev[i]),
                    CudaLib.deviceGetPCIBusId(dev[i]), peers));
        }
        return out;
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
