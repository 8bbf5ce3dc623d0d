// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The side-by-side measurements made with a run ({@code benchmarks/sidebyside/run.sh} with the
 * run's {@code RUN_NAME}): the CUDA driver API's own costs from C, and PyTorch's and CuPy's, read
 * from {@code NAME-sidebyside.json} beside {@code NAME-jmh.json}. The file is a JSON array of
 * one object per row: a measured case ({@code name}, {@code ns} the median of its rounds'
 * nanoseconds per op, {@code min}, {@code max}, {@code rounds}, {@code iterations}, {@code what}),
 * a case or a whole side that could not run ({@code "ns": null} and {@code skipped}, the reason),
 * or a description ({@code info}).
 *
 * @param file the file read, or {@code null} for {@link #NONE}
 * @param rows its rows, in the file's order
 */
record SideBySide(Path file, List<Row> rows) {

    /** What follows a run's name in its side-by-side file's name. */
    static final String SUFFIX = "-sidebyside.json";

    /** A run with no side-by-side file. */
    static final SideBySide NONE = new SideBySide(null, List.of());

    /**
     * One row.
     *
     * @param name       the case, e.g. {@code c.allocFree1MiB}, {@code torch.cacheHit1MiB}; or a side
     *                   ({@code c}, {@code py}) that did not run
     * @param ns         the median nanoseconds per op, NaN unless measured
     * @param min        the least round's, NaN unless measured
     * @param max        the most round's, NaN unless measured
     * @param rounds     how many rounds, 0 unless measured
     * @param iterations ops per round, 0 unless measured
     * @param what       what was measured, or {@code ""}
     * @param skipped    why it was not measured, or {@code null}
     * @param info       a description row's text, or {@code null}
     */
    record Row(String name, double ns, double min, double max, int rounds, long iterations, String what,
               String skipped, String info) {

        /** {@return whether this row is a measurement} */
        boolean measured() {
            return !Double.isNaN(ns);
        }
    }

    /** {@return whether the run had a side-by-side file} */
    boolean present() {
        return file != null;
    }

    /** {@return the measured row {@code name}, or {@code null} where there is none} */
    Row measured(String name) {
        for (Row r : rows) {
            if (r.name().equals(name) && r.measured()) {
                return r;
            }
        }
        return null;
    }

    /**
     * {@return why there is no measured row {@code name}, or {@code null} where there is one} The
     * row's own skip reason, else the reason its side ({@code c} for {@code c.*}, {@code py} for
     * {@code torch.*} and {@code cupy.*}) gave, else that the file has no such row.
     *
     * @param name    the case
     * @param runName the run's name, for the message where there is no file
     */
    String missing(String name, String runName) {
        if (!present()) {
            return "no `" + runName + SUFFIX + "`";
        }
        if (measured(name) != null) {
            return null;
        }
        String side = name.startsWith("c.") ? "c" : "py";
        for (Row r : rows) {
            if (r.name().equals(name) && r.skipped() != null) {
                return name + " skipped: " + r.skipped();
            }
        }
        for (Row r : rows) {
            if (r.name().equals(side) && r.skipped() != null) {
                return name + " not measured: " + r.skipped();
            }
        }
        return "no row " + name + " in `" + file.getFileName() + "`";
    }

    /**
     * {@return the side-by-side file at {@code file}, or {@link #NONE} where there is none}
     *
     * @param file where a run's file would be
     * @throws IOException if it exists and cannot be read
     * @throws IllegalArgumentException if it is not a JSON array of rows, naming the file
     */
    static SideBySide read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return NONE;
        }
        Object doc;
        try {
            doc = Json.parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
        if (!(doc instanceof List<?> list)) {
            throw new IllegalArgumentException(file + ": not a side-by-side file (expected a JSON array)");
        }
        List<Row> rows = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> m) || !(m.get("name") instanceof String name)) {
                throw new IllegalArgumentException(file + ": a row without a name: " + o);
            }
            double ns = Json.number(m.get("ns"));
            boolean measured = !Double.isNaN(ns);
            rows.add(new Row(name, ns, measured ? Json.number(m.get("min")) : Double.NaN,
                    measured ? Json.number(m.get("max")) : Double.NaN,
                    measured ? (int) Json.number(m.get("rounds")) : 0,
                    measured ? (long) Json.number(m.get("iterations")) : 0,
                    m.get("what") instanceof String w ? w : "",
                    m.get("skipped") instanceof String s ? s : null,
                    m.get("info") instanceof String i ? i : null));
        }
        return new SideBySide(file, List.copyOf(rows));
    }
}
