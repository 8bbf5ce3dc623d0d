// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** JMH's JSON result files read into runs, with the meta properties and side-by-side file written beside each. */
final class JmhRuns {

    /**
     * One JMH result. {@code secondaryRaw} holds each secondary metric's per-iteration values
     * (JMH's {@code rawData}, fork after fork), empty where JMH wrote none.
     */
    record Result(String run, String bench, String params, String mode, double score, double error, String unit,
                  double bytesPerOp, double bytesPerOpError, Map<String, Double> secondary,
                  Map<String, Double> secondaryError, Map<String, double[]> secondaryRaw) {

        /**
         * The result without per-iteration data.
         *
         * @param run             the run's name
         * @param bench           {@code Class.method}
         * @param params          the parameters, {@code k=v} sorted by key, comma separated
         * @param mode            JMH's mode
         * @param score           the primary score
         * @param error           its 99.9% half-width, or NaN
         * @param unit            its unit
         * @param bytesPerOp      {@code gc.alloc.rate.norm}, or NaN
         * @param bytesPerOpError its error, or NaN
         * @param secondary       secondary scores by name
         * @param secondaryError  their errors
         */
        Result(String run, String bench, String params, String mode, double score, double error, String unit,
               double bytesPerOp, double bytesPerOpError, Map<String, Double> secondary,
               Map<String, Double> secondaryError) {
            this(run, bench, params, mode, score, error, unit, bytesPerOp, bytesPerOpError, secondary, secondaryError,
                    Map.of());
        }

        /**
         * {@return the least and the most seconds per op within the score's error} Both are the
         * point value where JMH gave no error; the most is infinite where a throughput's error
         * reaches zero.
         */
        double[] secondsPerOpBounds() {
            if (Double.isNaN(error)) {
                return new double[] {secondsPerOp(), secondsPerOp()};
            }
            double lo = at(score - error);
            double hi = at(score + error);
            if (unit.startsWith("ops/")) {
                return new double[] {hi, score - error <= 0 ? Double.POSITIVE_INFINITY : lo};
            }
            return new double[] {Math.max(0, lo), hi};
        }

        private double at(double s) {
            return new Result(run, bench, params, mode, s, error, unit, bytesPerOp, bytesPerOpError, secondary,
                    secondaryError, secondaryRaw).secondsPerOp();
        }

        /** {@return the score in seconds per op, or NaN for a mode without one} */
        double secondsPerOp() {
            double scale = switch (unit.substring(0, unit.indexOf('/'))) {
                case "ns" -> 1e-9;
                case "us" -> 1e-6;
                case "ms" -> 1e-3;
                case "s" -> 1.0;
                default -> Double.NaN;
            };
            if (unit.startsWith("ops/")) {
                String per = unit.substring(4);
                double sec = switch (per) {
                    case "ns" -> 1e-9;
                    case "us" -> 1e-6;
                    case "ms" -> 1e-3;
                    case "s" -> 1.0;
                    default -> Double.NaN;
                };
                return sec / score;
            }
            return score * scale;
        }
    }

    /**
     * A run: its results and what describes it, and the side-by-side measurements made with it
     * ({@link SideBySide#NONE} where there were none).
     */
    record Run(String name, Path json, Properties meta, List<Result> results, Map<String, Object> first,
               SideBySide sideBySide) {

        /** {@return the result of {@code bench} with {@code params}, or null where this run has none} */
        Result find(String bench, String params) {
            for (Result r : results) {
                if (r.bench().equals(bench) && r.params().equals(params)) {
                    return r;
                }
            }
            return null;
        }
    }

    /** {@return the runs of the given result files, in that order} */
    static List<Run> readAll(List<Path> jsons) throws IOException {
        List<Run> runs = new ArrayList<>();
        for (Path p : jsons) {
            runs.add(read(p));
        }
        return runs;
    }

    static Run read(Path json) throws IOException {
        Object doc = Json.parse(Files.readString(json, StandardCharsets.UTF_8));
        if (!(doc instanceof List<?> list)) {
            throw new IllegalArgumentException(json + ": not a JMH result file (expected a JSON array)");
        }
        String name = json.getFileName().toString().replaceFirst("(-jmh)?\\.json$", "");
        Properties meta = new Properties();
        Path mp = json.resolveSibling(name + "-meta.properties");
        if (Files.exists(mp)) {
            try (Reader r = Files.newBufferedReader(mp, StandardCharsets.UTF_8)) {
                meta.load(r);
            }
        }
        List<Result> out = new ArrayList<>();
        Map<String, Object> first = null;
        for (Object o : list) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) o;
            if (first == null) {
                first = m;
            }
            String full = (String) m.get("benchmark");
            String[] parts = full.split("\\.");
            String bench = parts[parts.length - 2] + "." + parts[parts.length - 1];
            String params = "";
            if (m.get("params") instanceof Map<?, ?> pm) {
                StringBuilder b = new StringBuilder();
                for (var e : new TreeMap<>(pm).entrySet()) {
                    b.append(b.isEmpty() ? "" : ", ").append(e.getKey()).append('=').append(e.getValue());
                }
                params = b.toString();
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> pmx = (Map<String, Object>) m.get("primaryMetric");
            double bpo = Double.NaN;
            double bpoError = Double.NaN;
            Map<String, Double> secondary = new LinkedHashMap<>();
            Map<String, Double> secondaryError = new LinkedHashMap<>();
            Map<String, double[]> secondaryRaw = new LinkedHashMap<>();
            if (m.get("secondaryMetrics") instanceof Map<?, ?> sm) {
                for (var e : sm.entrySet()) {
                    if (e.getValue() instanceof Map<?, ?> v) {
                        secondary.put(e.getKey().toString(), Json.number(v.get("score")));
                        secondaryError.put(e.getKey().toString(), Json.number(v.get("scoreError")));
                        secondaryRaw.put(e.getKey().toString(), raw(v.get("rawData")));
                        if (e.getKey().toString().endsWith("gc.alloc.rate.norm")) {
                            bpo = Json.number(v.get("score"));
                            bpoError = Json.number(v.get("scoreError"));
                        }
                    }
                }
            }
            out.add(new Result(name, bench, params, (String) m.get("mode"), Json.number(pmx.get("score")),
                    Json.number(pmx.get("scoreError")), (String) pmx.get("scoreUnit"), bpo, bpoError, secondary,
                    secondaryError, secondaryRaw));
        }
        return new Run(name, json, meta, out, first == null ? Map.of() : first,
                SideBySide.read(json.resolveSibling(name + SideBySide.SUFFIX)));
    }

    /** {@return JMH's {@code rawData} (a list per fork of per-iteration values) flattened, fork after fork} */
    private static double[] raw(Object rawData) {
        List<Double> values = new ArrayList<>();
        if (rawData instanceof List<?> forks) {
            for (Object fork : forks) {
                if (fork instanceof List<?> iterations) {
                    for (Object v : iterations) {
                        values.add(Json.number(v));
                    }
                }
            }
        }
        double[] out = new double[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }

    private JmhRuns() {
    }
}
