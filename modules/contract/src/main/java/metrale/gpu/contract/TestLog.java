// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Predicate;
import metrale.gpu.Setting;

/**
 * The tests' {@link System.LoggerFinder}, a service of this module ({@code provides} in its
 * descriptor and {@code META-INF/services} for the class path), so it is the logger finder of every
 * test run that has the contract module on its path. It keeps the records of the {@code metrale.*} loggers in memory, so a test that makes the
 * runtime warn on purpose (a leak at close, an overwritten red zone, a latched fault) asserts on
 * the record: {@link #mark()} before, {@link #since(int)} after.
 *
 * <p>When the setting {@link Setting#TEST_LOG_DIR} (system property {@value #DIR_PROPERTY}, variable
 * {@code METRALE_TEST_LOG_DIR}) names a folder (the build's surefire
 * configuration does: {@code target/metrale-test-log}), every record goes to a file there named
 * after the test JVM's process id instead of to the console, so a green build does not print the hundreds of warnings its fault
 * tests cause, and a red one keeps them for reading. Without the property (the GPU bundle's
 * launcher) records are printed to standard error as well as kept. Other loggers print to
 * standard error at INFO and above.
 */
public final class TestLog extends System.LoggerFinder {

    /** The system property of {@link Setting#TEST_LOG_DIR}, the folder whose file receives every record. */
    public static final String DIR_PROPERTY = "metrale.test.log.dir";

    /**
     * The folder, read once as the class initializes (the build sets it at the test JVM's start), so
     * a test that clears the table's properties after itself does not send later records to the console.
     */
    private static final String DIR = Setting.TEST_LOG_DIR.text(null).orElse("");

    /** Records kept at most; older ones are dropped first. */
    private static final int KEPT = 20_000;

    /**
     * One log record.
     *
     * @param logger  the logger's name
     * @param level   the record's level
     * @param message its message, parameters formatted in
     * @param thrown  the throwable logged with it, or null
     */
    public record Entry(String logger, System.Logger.Level level, String message, Throwable thrown) {
        @Override
        public String toString() {
            return level + " " + logger + ": " + message + (thrown == null ? "" : " (" + thrown + ")");
        }
    }

    private static final List<Entry> ENTRIES = new ArrayList<>();
    private static int dropped;
    private static Writer file;

    /** Called by {@link java.util.ServiceLoader}. */
    public TestLog() {
    }

    /** {@return a position in the record stream, for {@link #since(int)}} */
    public static synchronized int mark() {
        return dropped + ENTRIES.size();
    }

    /**
     * {@return the records logged after {@code mark}, oldest first}
     *
     * @param mark a value of {@link #mark()}
     */
    public static synchronized List<Entry> since(int mark) {
        int from = Math.max(0, mark - dropped);
        return List.copyOf(ENTRIES.subList(Math.min(from, ENTRIES.size()), ENTRIES.size()));
    }

    /**
     * {@return the records after {@code mark} at {@code level} whose message matches}
     *
     * @param mark    a value of {@link #mark()}
     * @param level   the level the records have
     * @param message what their message must satisfy
     */
    public static List<Entry> since(int mark, System.Logger.Level level, Predicate<String> message) {
        return since(mark).stream().filter(e -> e.level() == level && message.test(e.message())).toList();
    }

    private static synchronized void record(Entry e) {
        if (ENTRIES.size() == KEPT) {
            ENTRIES.removeFirst();
            dropped++;
        }
        ENTRIES.add(e);
        String text = e + (e.thrown() == null ? "" : "\n" + stackTrace(e.thrown()));
        if (DIR.isEmpty()) {
            System.err.println(text);
            return;
        }
        Path p = Path.of(DIR, "pid-" + ProcessHandle.current().pid() + ".txt");
        try {
            if (file == null) {
                Files.createDirectories(p.getParent());
                file = Files.newBufferedWriter(p, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            }
            file.write(text);
            file.write('\n');
            file.flush();
        } catch (IOException ex) {
            throw new UncheckedIOException("could not write the test log " + p, ex);
        }
    }

    private static String stackTrace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    @Override
    public System.Logger getLogger(String name, Module module) {
        return new Recording(name, name.startsWith("metrale"));
    }

    /** A logger that records DEBUG and above (metrale's loggers) or prints INFO and above (any other). */
    private record Recording(String name, boolean keep) implements System.Logger {

        @Override
        public String getName() {
            return name;
        }

        @Override
        public boolean isLoggable(Level level) {
            Level least = keep ? Level.DEBUG : Level.INFO;
            return level != Level.OFF && level.getSeverity() >= least.getSeverity();
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            emit(level, msg, thrown);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            emit(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params), null);
        }

        private void emit(Level level, String msg, Throwable thrown) {
            if (!isLoggable(level)) {
                return;
            }
            if (keep) {
                record(new Entry(name, level, msg, thrown));
            } else {
                System.err.println(level + " " + name + ": " + msg);
                if (thrown != null) {
                    thrown.printStackTrace();
                }
            }
        }
    }
}
