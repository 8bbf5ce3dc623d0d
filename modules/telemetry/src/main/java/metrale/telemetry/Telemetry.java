package metrale.telemetry;

import java.util.Locale;

/**
 * The telemetry of one backend: its launch trace, kernel audit, counters and
 * kernel timing. Each backend owns one and tests make a fresh one;
 * {@link #global()} is a process-wide default. Thread-safe.
 *
 * <p>The constructor reads the settings named in the module description
 * ({@code metrale.d2h.trace}, {@code metrale.timing} and their environment
 * variables) once; the parts can be switched later through their setters.
 */
public final class Telemetry {

    private final LaunchTrace trace = new LaunchTrace();
    private final KernelAudit audit = new KernelAudit();
    private final Counters counters = new Counters();
    private final KernelTiming timing = new KernelTiming(trace);

    /**
     * Creates telemetry with the trace off, everything empty and at zero, and
     * D2H site tracing and timing as the system properties or environment set them.
     */
    public Telemetry() {
        counters.setD2hSiteTrace(flag("metrale.d2h.trace", "METRALE_D2H_TRACE"));
        timing.setEnabled(flag("metrale.timing", "METRALE_TIMING"));
    }

    private static final class Global {
        static final Telemetry INSTANCE = new Telemetry();
    }

    /**
     * The process-wide default, created on first use.
     *
     * @return the shared instance
     */
    public static Telemetry global() {
        return Global.INSTANCE;
    }

    /**
     * The launch trace, which also names kernel handles.
     *
     * @return this instance's trace
     */
    public LaunchTrace trace() {
        return trace;
    }

    /**
     * The kernel-lookup audit.
     *
     * @return this instance's audit
     */
    public KernelAudit audit() {
        return audit;
    }

    /**
     * The sync, launch and copy counters.
     *
     * @return this instance's counters
     */
    public Counters counters() {
        return counters;
    }

    /**
     * The kernel timing spans, named through {@link #trace()}.
     *
     * @return this instance's timing
     */
    public KernelTiming timing() {
        return timing;
    }

    /** The system property if set, else the environment variable; unset means off. */
    static boolean flag(String property, String env) {
        String v = System.getProperty(property);
        if (v == null) {
            v = System.getenv(env);
        }
        return parse(v);
    }

    static boolean parse(String v) {
        if (v == null) {
            return false;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            default -> false;
        };
    }
}
