// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Synthetic JMH result files and side-by-side files, shaped as JMH and {@code run.sh} write them. */
final class Synthetic {

    private final List<String> results = new ArrayList<>();

    /** {@return an empty result file} */
    static Synthetic jmh() {
        return new Synthetic();
    }

    /**
     * Adds a result whose secondary metrics are event counters: each one's score is the sum of its
     * per-iteration values, with no error, as JMH writes {@code @AuxCounters(EVENTS)}.
     *
     * @param bench    {@code Class.method}
     * @param params   {@code k=v, k=v}, or {@code ""}
     * @param counters each counter's per-iteration values
     * @return this
     */
    Synthetic counters(String bench, String params, Map<String, double[]> counters) {
        StringBuilder sec = new StringBuilder();
        for (var e : counters.entrySet()) {
            double sum = 0;
            StringBuilder raw = new StringBuilder();
            for (double v : e.getValue()) {
                sum += v;
                raw.append(raw.isEmpty() ? "" : ", ").append(num(v));
            }
            sec.append(sec.isEmpty() ? "" : ",\n").append(String.format(Locale.ROOT,
                    "\"%s\": {\"score\": %s, \"scoreError\": \"NaN\", \"scoreUnit\": \"#\", \"rawData\": [[%s]]}",
                    e.getKey(), num(sum), raw));
        }
        return add(bench, params, "avgt", 1.0, "NaN", "us/op", sec.toString());
    }

    /**
     * Adds a throughput result with one secondary metric given with its error, as JMH writes
     * {@code @AuxCounters(OPERATIONS)}.
     *
     * @param bench  {@code Class.method}
     * @param params {@code k=v, k=v}
     * @param name   the metric
     * @param score  its score
     * @param error  its 99.9% half-width
     * @return this
     */
    Synthetic metric(String bench, String params, String name, double score, double error) {
        String sec = String.format(Locale.ROOT, "\"%s\": {\"score\": %s, \"scoreError\": %s, \"scoreUnit\": \"ops/s\"}",
                name, num(score), num(error));
        return add(bench, params, "thrpt", 1.0, "0.1", "ops/s", sec);
    }

    private Synthetic add(String bench, String params, String mode, double score, String error, String unit,
                          String secondary) {
        StringBuilder p = new StringBuilder();
        if (!params.isEmpty()) {
            for (String kv : params.split(", ")) {
                String[] x = kv.split("=", 2);
                p.append(p.isEmpty() ? "" : ", ").append('"').append(x[0]).append("\": \"").append(x[1]).append('"');
            }
        }
        String pkg = bench.startsWith("SimPtxBench") ? "metrale.bench." : "metrale.bench.cuda.";
        results.add(String.format(Locale.ROOT, "{\"benchmark\": \"%s%s\", \"mode\": \"%s\", \"forks\": 1, "
                        + "\"params\": {%s}, \"primaryMetric\": {\"score\": %s, \"scoreError\": \"%s\", "
                        + "\"scoreUnit\": \"%s\"}, \"secondaryMetrics\": {%s}}",
                pkg, bench, mode, p, num(score), error, unit, secondary));
        return this;
    }

    /** {@return the file's text} */
    String json() {
        return "[\n" + String.join(",\n", results) + "\n]\n";
    }

    /**
     * Writes {@code dir/NAME-jmh.json}.
     *
     * @param dir  the folder
     * @param name the run's name
     * @return the file
     */
    Path write(Path dir, String name) {
        return writeText(dir.resolve(name + "-jmh.json"), json());
    }

    /**
     * Writes {@code dir/NAME-sidebyside.json} with the given lines, one JSON object each.
     *
     * @param dir  the folder
     * @param name the run's name
     * @param rows the rows
     * @return the file
     */
    static Path sideBySide(Path dir, String name, String... rows) {
        return writeText(dir.resolve(name + SideBySide.SUFFIX), "[\n" + String.join(",\n", rows) + "\n]\n");
    }

    /** {@return a measured side-by-side row} */
    static String row(String name, double ns, double min, double max) {
        return String.format(Locale.ROOT, "{\"name\": \"%s\", \"ns\": %s, \"min\": %s, \"max\": %s, \"rounds\": 5, "
                + "\"iterations\": 1000, \"what\": \"%s, synthetic\"}", name, num(ns), num(min), num(max), name);
    }

    /** {@return a skipped side-by-side row} */
    static String skipped(String name, String why) {
        return String.format(Locale.ROOT, "{\"name\": \"%s\", \"ns\": null, \"skipped\": \"%s\"}", name, why);
    }

    /** {@return counters from name, values, name, values, ...} */
    static Map<String, double[]> of(Object... kv) {
        Map<String, double[]> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (double[]) kv[i + 1]);
        }
        return m;
    }

    /** {@return {@code n} copies of {@code v}} */
    static double[] fill(int n, double v) {
        double[] a = new double[n];
        java.util.Arrays.fill(a, v);
        return a;
    }

    private static Path writeText(Path file, String text) {
        try {
            return Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "\"NaN\"" : String.format(Locale.ROOT, "%.17g", v);
    }

    private Synthetic() {
    }
}
