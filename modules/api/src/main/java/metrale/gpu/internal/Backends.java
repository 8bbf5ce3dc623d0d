package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;

/** Finds backends with {@link ServiceLoader} and picks one. */
public final class Backends {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    private Backends() {
    }

    /** {@return every provider on the path, highest priority first} */
    public static List<BackendProvider> providers() {
        List<BackendProvider> out = new ArrayList<>();
        ServiceLoader<BackendProvider> loader = ServiceLoader.load(BackendProvider.class, Backends.class.getClassLoader());
        for (var it = loader.iterator(); it.hasNext(); ) {
            try {
                out.add(it.next());
            } catch (java.util.ServiceConfigurationError e) {
                LOG.log(System.Logger.Level.WARNING, "skipping a backend that failed to load: " + e.getMessage());
            }
        }
        out.sort(Comparator.comparingInt(BackendProvider::priority).reversed());
        return out;
    }

    /** {@return every backend with its availability} */
    public static List<Gpu.BackendInfo> discover() {
        List<Gpu.BackendInfo> out = new ArrayList<>();
        for (BackendProvider p : providers()) {
            Availability a = safeAvailability(p);
            out.add(new Gpu.BackendInfo(p.name(), p.priority(), a.available(), a.reason()));
        }
        return out;
    }

    private static Availability safeAvailability(BackendProvider p) {
        try {
            return p.availability();
        } catch (RuntimeException | LinkageError e) {
            return Availability.no(p.name() + " backend failed its availability check: " + e);
        }
    }

    /**
     * Picks the named backend, or the best available one when {@code name} is {@code null}.
     *
     * @param name a backend name, or {@code null}
     * @return the provider
     * @throws GpuException {@code NO_DEVICE} naming what was found and why each was unavailable
     */
    public static BackendProvider choose(String name) {
        List<BackendProvider> all = providers();
        StringBuilder why = new StringBuilder();
        for (BackendProvider p : all) {
            if (name != null && !p.name().equalsIgnoreCase(name)) {
                continue;
            }
            Availability a = safeAvailability(p);
            if (a.available()) {
                // An automatic choice is news (INFO); one the caller named is only confirmed (DEBUG).
                LOG.log(name == null ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                        () -> "metrale-gpu: using the " + p.name() + " backend"
                        + (name == null ? " (none named; highest priority available)" : ""));
                return p;
            }
            if (!why.isEmpty()) {
                why.append("; ");
            }
            why.append(p.name()).append(": ").append(a.reason());
            if (name == null) {
                LOG.log(System.Logger.Level.DEBUG, () -> "metrale-gpu: " + p.name() + " unavailable: " + a.reason());
            }
        }
        List<String> names = all.stream().map(BackendProvider::name).toList();
        String msg;
        if (name != null && why.isEmpty()) {
            msg = "no backend named '" + name + "' on the module or class path (found " + names + ")";
        } else if (all.isEmpty()) {
            msg = "no backend on the module or class path: add metrale.gpu.sim or metrale.gpu.cuda";
        } else {
            msg = "no available backend" + (name == null ? "" : " named '" + name + "'") + ": " + why;
        }
        throw new GpuException(CudaError.NO_DEVICE, "Gpu.open", msg);
    }
}
