/**
 * Telemetry for metrale-gpu: the launch trace that diffs two executions of a
 * region op by op, the kernel-lookup audit, cheap counters of syncs, launches
 * and copies, per-kernel timing spans, and the JFR events both backends emit.
 *
 * <p>This module is the leaf of the runtime: it depends on the JDK alone, so
 * the runtime core ({@code metrale.gpu}) and both drivers share one
 * implementation and emit the same events. Each backend owns a
 * {@link metrale.telemetry.Telemetry}; {@link metrale.telemetry.Telemetry#global()}
 * is a process-wide default for applications that want one.
 *
 * <p>Settings, read once by each {@link metrale.telemetry.Telemetry#Telemetry()}
 * constructor. A system property wins over its environment variable; {@code true},
 * {@code 1}, {@code yes} and {@code on} (any case) mean on, any other value off.
 * <ul>
 *   <li>{@systemProperty metrale.d2h.trace} (environment {@code METRALE_D2H_TRACE}),
 *       default {@code false}: name the call site of every device-to-host copy
 *       ({@link metrale.telemetry.Counters#d2hSiteReport(int)}).</li>
 *   <li>{@systemProperty metrale.timing} (environment {@code METRALE_TIMING}),
 *       default {@code false}: time each launch ({@link metrale.telemetry.KernelTiming}).</li>
 * </ul>
 *
 * <p>No run-time flags are needed. The JFR events cost nothing unless a
 * recording is running ({@code -XX:StartFlightRecording} or {@code jcmd JFR.start}).
 */
module metrale.telemetry {
    // Transitive: other modules instantiate the public event classes, which
    // extend jdk.jfr.Event and call its begin/shouldCommit/commit.
    requires transitive jdk.jfr;

    exports metrale.telemetry;
}
