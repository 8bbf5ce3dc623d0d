package metrale.gpu.sim.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.sim.SimOptions;

/** Helpers shared by the runtime-core tests: opening the simulator, call sites, captured log records. */
final class RuntimeTestSupport {

    private RuntimeTestSupport() {
    }

    /** {@return a builder for the simulator with a fresh telemetry} */
    static GpuBuilder sim() {
        // A simulated process of its own: a sticky fault a test provokes stays in that test.
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
    }

    /** {@return the caller's {@code File.java:line}, as the runtime records call sites} */
    static String here() {
        StackTraceElement e = new Throwable().getStackTrace()[1];
        return e.getFileName() + ":" + e.getLineNumber();
    }

    /**
     * Captures what the runtime logs to {@code metrale.gpu} (System.Logger is backed by
     * java.util.logging here) until closed.
     */
    static final class LogCapture implements AutoCloseable {
        // Held strongly: java.util.logging keeps loggers only weakly.
        private final Logger logger = Logger.getLogger("metrale.gpu");
        private final List<LogRecord> records = new ArrayList<>();
        private final Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                synchronized (records) {
                    records.add(r);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };

        LogCapture() {
            handler.setLevel(Level.ALL);
            logger.addHandler(handler);
        }

        /** {@return the messages logged at WARNING or above so far} */
        List<String> warnings() {
            synchronized (records) {
                return records.stream().filter(r -> r.getLevel().intValue() >= Level.WARNING.intValue())
                        .map(LogRecord::getMessage).toList();
            }
        }

        @Override
        public void close() {
            logger.removeHandler(handler);
        }
    }
}
