// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

/**
 * The telemetry of one backend: its launch trace, kernel audit, counters and
 * kernel timing. Each backend owns one and tests make a fresh one;
 * {@link #global()} is a process-wide default. Thread-safe.
 *
 * <p>Telemetry reads no system property and no environment variable: a new
 * instance has every part off, and whoever owns it switches parts on through
 * their setters. The runtime does that from its resolved options (the settings
 * table {@code metrale.gpu.Setting}, where a builder call wins over
 * {@code metrale.d2h.trace} / {@code METRALE_D2H_TRACE} and
 * {@code metrale.timing} / {@code METRALE_TIMING}).
 */
public final class Telemetry {

    private final LaunchTrace trace = new LaunchTrace();
    private final KernelAudit audit = new KernelAudit();
    private final Counters counters = new Counters();
    private final KernelTiming timing = new KernelTiming(trace);

    /**
     * Creates telemetry with the trace, D2H site tracing and timing off, and
     * everything empty and at zero.
     */
    public Telemetry() {
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
}
