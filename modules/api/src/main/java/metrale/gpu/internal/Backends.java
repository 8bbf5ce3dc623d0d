// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import metrale.gpu.BackendUnavailableException;
import metrale.gpu.Gpu;
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
     * Picks the named backend, or the best available one when {@code name} is {@code null}. An
     * automatic choice that passes over a backend which is {@linkplain Availability#present()
     * present but unusable} (a CUDA driver without {@code --enable-native-access}) logs that at
     * WARNING with the reason, so a service does not run on the simulator unnoticed.
     *
     * @param name a backend name, or {@code null}
     * @return the provider
     * @throws IllegalArgumentException if no backend on the path has that name, listing the names there are
     * @throws BackendUnavailableException naming what was found and why each was unavailable
     */
    public static BackendProvider choose(String name) {
        return choose(name, providers(), LOG);
    }

    /**
     * {@return the defaults of the backend {@code name} names, or of the one an automatic choice
     * would take when {@code name} is {@code null}} Chooses without logging: the runtime's open
     * logs its choice. Empty when no backend matches (opening then fails, naming why).
     *
     * @param name   the backend's name, or {@code null} to choose automatically
     * @param config the backend options
     */
    public static java.util.Map<metrale.gpu.Setting, String> defaults(String name, metrale.gpu.spi.DriverConfig config) {
        return defaults(name, config, providers());
    }

    /** {@link #defaults(String, metrale.gpu.spi.DriverConfig)} over the given providers, highest priority first. */
    static java.util.Map<metrale.gpu.Setting, String> defaults(String name, metrale.gpu.spi.DriverConfig config,
                                                               List<BackendProvider> all) {
        BackendProvider p = null;
        if (name != null) {
            for (BackendProvider x : all) {
                if (x.name().equalsIgnoreCase(name)) {
                    p = x;
                    break;
                }
            }
        } else {
            try {
                p = choose(null, all, QUIET);
            } catch (RuntimeException e) {
                p = null;
            }
        }
        if (p == null) {
            return java.util.Map.of();
        }
        try {
            return p.defaults(config);
        } catch (RuntimeException e) {
            return java.util.Map.of();
        }
    }

    /** A logger that drops everything: {@link #defaults} chooses as {@link #choose} does, without its news. */
    private static final System.Logger QUIET = new System.Logger() {
        @Override
        public String getName() {
            return "metrale.gpu.quiet";
        }

        @Override
        public boolean isLoggable(Level level) {
            return false;
        }

        @Override
        public void log(Level level, java.util.ResourceBundle bundle, String msg, Throwable thrown) {
        }

        @Override
        public void log(Level level, java.util.ResourceBundle bundle, String format, Object... params) {
        }
    };

    /** {@link #choose(String)} over the given providers, highest priority first, logging to {@code log}. */
    static BackendProvider choose(String name, List<BackendProvider> all, System.Logger log) {
        List<String> names = all.stream().map(BackendProvider::name).toList();
        if (name != null && all.stream().noneMatch(p -> p.name().equalsIgnoreCase(name))) {
            throw new IllegalArgumentException("no backend named '" + name + "': the backends on the module or class path are "
                    + names + (names.contains("cuda") ? "" : " (metrale.gpu.cuda is not there)")
                    + (names.contains("sim") ? "" : " (metrale.gpu.sim is not there)"));
        }
        StringBuilder why = new StringBuilder();
        List<String> passedOver = new ArrayList<>();
        for (BackendProvider p : all) {
            if (name != null && !p.name().equalsIgnoreCase(name)) {
                continue;
            }
            Availability a = safeAvailability(p);
            if (a.available()) {
                // An automatic choice is news (INFO); one the caller named is only confirmed (DEBUG).
                log.log(name == null ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                        () -> "metrale-gpu: using the " + p.name() + " backend"
                        + (name == null ? " (none named; highest priority available)" : ""));
                for (String w : passedOver) {
                    log.log(System.Logger.Level.WARNING, "metrale-gpu: " + w + "; using the " + p.name() + " backend instead");
                }
                return p;
            }
            if (!why.isEmpty()) {
                why.append("; ");
            }
            why.append(p.name()).append(": ").append(a.reason());
            if (name == null && a.present()) {
                passedOver.add("the " + p.name() + " backend is installed but cannot be used: " + a.reason());
            } else if (name == null) {
                log.log(System.Logger.Level.DEBUG, () -> "metrale-gpu: " + p.name() + " unavailable: " + a.reason());
            }
        }
        String msg;
        if (all.isEmpty()) {
            msg = "no backend on the module or class path: add metrale.gpu.sim or metrale.gpu.cuda";
        } else {
            msg = "no available backend" + (name == null ? "" : " named '" + name + "'") + ": " + why;
        }
        throw new BackendUnavailableException("Gpu.open", msg);
    }
}
