// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.text.MessageFormat;
import java.util.ResourceBundle;

/**
 * The api module's test {@link System.LoggerFinder} (in its test {@code META-INF/services}): the
 * runtime's records go to {@code <metrale.test.log.dir>/api-<pid>.txt}, not to the console, since
 * the fault tests make the runtime warn on purpose. The contract module's {@code TestLog} does the
 * same for the backends' tests, which the api module cannot depend on; no api test reads the log.
 * Without the folder set (a run outside the build) records go to standard error.
 */
public final class FileLog extends System.LoggerFinder {

    private static final PrintWriter OUT = open();

    private static PrintWriter open() {
        String dir = System.getProperty("metrale.test.log.dir", "");
        if (dir.isBlank()) {
            return new PrintWriter(System.err, true);
        }
        try {
            Path d = Files.createDirectories(Path.of(dir));
            return new PrintWriter(Files.newBufferedWriter(d.resolve("api-" + ProcessHandle.current().pid() + ".txt"),
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public System.Logger getLogger(String name, Module module) {
        return new System.Logger() {
            @Override
            public String getName() {
                return name;
            }

            @Override
            public boolean isLoggable(Level level) {
                return level.getSeverity() >= Level.DEBUG.getSeverity();
            }

            @Override
            public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
                write(level, msg, thrown);
            }

            @Override
            public void log(Level level, ResourceBundle bundle, String format, Object... params) {
                write(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params), null);
            }

            private void write(Level level, String msg, Throwable thrown) {
                synchronized (OUT) {
                    OUT.println(level + " " + name + ": " + msg);
                    if (thrown != null) {
                        thrown.printStackTrace(OUT);
                    }
                }
            }
        };
    }
}
