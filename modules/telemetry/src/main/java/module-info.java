// SPDX-License-Identifier: Apache-2.0
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
 * <p>Settings: none. This module reads no system property and no environment
 * variable; a new {@link metrale.telemetry.Telemetry} has every part off. The
 * runtime ({@code metrale.gpu}) resolves {@code metrale.d2h.trace} and
 * {@code metrale.timing} through its settings table, where a builder call wins,
 * and switches the parts on.
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
