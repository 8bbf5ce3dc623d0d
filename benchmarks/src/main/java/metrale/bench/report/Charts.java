// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import metrale.bench.report.JmhRuns.Result;
import metrale.bench.report.JmhRuns.Run;
import metrale.bench.report.Targets.Ratio;

/** The page's SVG plots: the launch-path ratios and the pool's cost by allocation size. */
final class Charts {

    /** The variants of {@code PoolBench.pair} the pool plot draws: counter, label, colour. */
    static final String[][] POOL_SERIES = {
            {"bareNs", "cuMemAlloc+cuMemFree", "#000000"},
            {"asyncNs", "cuMemAllocAsync+cuMemFreeAsync", "#7b1fa2"},
            {"poolCudaNs", "pool over cuMemAllocAsync", "#ef6c00"},
            {"poolOnNs", "pool hit, sites on", "#c62828"},
            {"poolSampledNs", "pool hit, 1 site in 64", "#f9a825"},
            {"poolOffNs", "pool hit, sites off", "#2e7d32"}};

    /** A horizontal bar chart of the launch-path ratios (launch and graph replay), with each target. */
    static String svg(List<Ratio> ratios) {
        List<Ratio> rows = new ArrayList<>();
        for (Ratio r : ratios) {
            // Only ratios over a bare baseline: the plot's scale is the bare driver's time.
            if (!Double.isNaN(r.ratio()) && (r.bench().startsWith("LaunchBench.") || r.bench().startsWith("GraphBench.")
                    || r.bench().startsWith("PairedBench.launch") || r.bench().startsWith("PairedBench.graph"))
                    && (r.baseline().endsWith(".bare") || r.baseline().endsWith(":bareNs"))) {
                rows.add(r);
            }
        }
        double max = 1.2;
        for (Ratio r : rows) {
            max = Math.max(max, r.ratio() * 1.05);
        }
        int left = 300;
        int width = 460;
        int rowH = 26;
        int top = 40;
        int h = top + rowH * Math.max(rows.size(), 1) + 50;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n",
                left + width + 90, h));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"20\" font-size=\"14\">Launch path: runtime time / bare driver time (lower is better; | = target)</text>%n",
                10));
        Map<String, String> colors = new LinkedHashMap<>();
        for (int i = 0; i < rows.size(); i++) {
            Ratio r = rows.get(i);
            int y = top + i * rowH;
            double w = width * r.ratio() / max;
            String color = switch (r.verdict()) {
                case NONE, NO_BASELINE -> "#888888";
                case MET, MET_NO_ERROR -> "#2e7d32";
                case WITHIN_ERROR -> "#ef8f00";
                case MISSED, MISSED_NO_ERROR -> "#c62828";
            };
            colors.put(color, "");
            String label = r.run() + ": " + r.bench().replace("Bench.", ".") + (r.params().isEmpty() ? "" : " (" + r.params() + ")");
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n", left - 8, y + 16, esc(label)));
            s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>%n",
                    left, y + 4, w, rowH - 8, color));
            s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%.3f×</text>%n", left + w + 4, y + 16, r.ratio()));
            if (!r.target().equals("—")) {
                double t = Double.parseDouble(r.target().replaceAll("[^0-9.]", ""));
                double tx = left + width * t / max;
                s.append(String.format(Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>%n",
                        tx, y + 1, tx, y + rowH - 1));
            }
        }
        int axisY = top + rowH * rows.size() + 6;
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>%n", left, axisY, left + width, axisY));
        for (double t = 0; t <= max + 1e-9; t += max > 3 ? 1.0 : 0.25) {
            double x = left + width * t / max;
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\"/>%n", x, axisY, x, axisY + 4));
            s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.2f</text>%n", x, axisY + 17, t));
        }
        double one = left + width / max;
        s.append(String.format(Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#1565c0\" stroke-dasharray=\"4 3\"/>%n",
                one, top, one, axisY));
        s.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" fill=\"#555\">green: target met, orange: within error, red: missed, grey: no target; dashed: 1.0 (bare)</text>%n",
                10, axisY + 36));
        s.append("</svg>\n");
        return s.toString();
    }

    /**
     * {@return an SVG line plot of {@code PoolBench.pair}: nanoseconds per alloc+free pair (log scale)
     * by allocation size (log scale), one line per variant; {@code null} when no run has it}
     */
    static String poolSvg(List<Run> runs) {
        Map<String, java.util.TreeMap<Long, Double>> series = new LinkedHashMap<>();
        for (Run run : runs) {
            for (Result r : run.results()) {
                Double ops = r.secondary().get("ops");
                if (!r.bench().equals("PoolBench.pair") || ops == null || ops == 0 || !r.params().startsWith("bytes=")) {
                    continue;
                }
                long bytes = Long.parseLong(r.params().substring("bytes=".length()).split(",")[0].trim());
                for (String[] v : POOL_SERIES) {
                    Double ns = r.secondary().get(v[0]);
                    if (ns != null) {
                        series.computeIfAbsent(run.name() + ": " + v[1] + "|" + v[2], k -> new java.util.TreeMap<>())
                                .put(bytes, ns / ops);
                    }
                }
            }
        }
        if (series.isEmpty()) {
            return null;
        }
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        double minY = Double.MAX_VALUE;
        double maxY = -Double.MAX_VALUE;
        for (var m : series.values()) {
            for (var e : m.entrySet()) {
                minX = Math.min(minX, Math.log10(e.getKey()));
                maxX = Math.max(maxX, Math.log10(e.getKey()));
                minY = Math.min(minY, Math.log10(Math.max(e.getValue(), 1)));
                maxY = Math.max(maxY, Math.log10(Math.max(e.getValue(), 1)));
            }
        }
        minY = Math.floor(minY);
        maxY = Math.ceil(maxY);
        if (maxX == minX) {
            maxX = minX + 1;
        }
        if (maxY == minY) {
            maxY = minY + 1;
        }
        int left = 70;
        int top = 40;
        int w = 520;
        int h = 320;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", left + w + 330, top + h + 60));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(String.format(Locale.ROOT, "<text x=\"10\" y=\"20\" font-size=\"14\">Pool: ns per alloc+free pair "
                + "by size (PoolBench.pair, both axes log)</text>%n"));
        s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>%n",
                left, top, w, h));
        for (double y = minY; y <= maxY + 1e-9; y++) {
            double py = top + h - h * (y - minY) / (maxY - minY);
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s ns</text>%n",
                    left - 4, py + 4, PageMarkdown.fmt(Math.pow(10, y))));
        }
        for (var m : series.values()) {
            for (long x : m.keySet()) {
                double px = left + w * (Math.log10(x) - minX) / (maxX - minX);
                s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                        px, top + h + 16, x >= 1 << 20 ? (x >> 20) + " MiB" : x >= 1024 ? (x >> 10) + " KiB" : x + " B"));
            }
            break;
        }
        int i = 0;
        for (var e : series.entrySet()) {
            String[] nameColor = e.getKey().split("\\|");
            StringBuilder pts = new StringBuilder();
            for (var pt : e.getValue().entrySet()) {
                double px = left + w * (Math.log10(pt.getKey()) - minX) / (maxX - minX);
                double py = top + h - h * (Math.log10(Math.max(pt.getValue(), 1)) - minY) / (maxY - minY);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
            }
            s.append("<polyline fill=\"none\" stroke=\"").append(nameColor[1]).append("\" stroke-width=\"2\" points=\"")
                    .append(pts.toString().trim()).append("\"/>\n");
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>%n", left + w + 12,
                    top + 14 + 16 * i++, nameColor[1], esc(nameColor[0])));
        }
        return s.append("</svg>\n").toString();
    }

    private static String esc(String t) {
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private Charts() {
    }
}
