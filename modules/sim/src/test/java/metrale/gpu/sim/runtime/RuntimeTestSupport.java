// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import java.util.List;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.LeakDetection;
import metrale.gpu.contract.TestLog;
import metrale.gpu.sim.SimOptions;

/** Helpers shared by the runtime-core tests: opening the simulator, call sites, captured log records. */
final class RuntimeTestSupport {

    private RuntimeTestSupport() {
    }

    /** {@return a builder for the simulator with a fresh telemetry, walking every call site (the tests assert on sites)} */
    static GpuBuilder sim() {
        // A simulated process of its own: a sticky fault a test provokes stays in that test.
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .leakDetection(LeakDetection.ALL);
    }

    /** {@return the caller's {@code File.java:line}, as the runtime records call sites} */
    static String here() {
        StackTraceElement e = new Throwable().getStackTrace()[1];
        return e.getFileName() + ":" + e.getLineNumber();
    }

    /**
     * Captures what the runtime logs to {@code metrale.gpu} and its child loggers until closed: the
     * records {@link TestLog}, the tests' logger finder, kept after the capture began.
     */
    static final class LogCapture implements AutoCloseable {
        private final int mark = TestLog.mark();
        /** The records kept when the capture was closed; null while it is open. */
        private List<TestLog.Entry> closed;

        private synchronized List<TestLog.Entry> records() {
            List<TestLog.Entry> all = closed != null ? closed : TestLog.since(mark);
            return all.stream()
                    .filter(e -> e.logger().equals("metrale.gpu") || e.logger().startsWith("metrale.gpu."))
                    .toList();
        }

        /** {@return every message logged at INFO or above so far, with its level: {@code "INFO: text"}} */
        List<String> all() {
            return records().stream().filter(e -> e.level().getSeverity() >= System.Logger.Level.INFO.getSeverity())
                    .map(e -> e.level() + ": " + e.message()).toList();
        }

        /** {@return the messages logged at DEBUG so far} */
        List<String> debug() {
            return records().stream().filter(e -> e.level() == System.Logger.Level.DEBUG)
                    .map(TestLog.Entry::message).toList();
        }

        /** {@return the messages logged at WARNING or above so far} */
        List<String> warnings() {
            return records().stream()
                    .filter(e -> e.level().getSeverity() >= System.Logger.Level.WARNING.getSeverity())
                    .map(TestLog.Entry::message).toList();
        }

        /** Stops capturing: later calls see what was logged until now. */
        @Override
        public synchronized void close() {
            if (closed == null) {
                closed = TestLog.since(mark);
            }
        }
    }
}
