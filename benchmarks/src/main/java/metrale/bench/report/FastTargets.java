// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.bench.report.JmhRuns.Result;
import metrale.bench.report.JmhRuns.Run;
import metrale.bench.report.Targets.CounterRule;
import metrale.bench.report.Targets.MetricFloor;
import metrale.bench.report.Targets.Ratio;
import metrale.bench.report.Targets.Scaling;
import metrale.bench.report.Targets.SideRule;
import metrale.bench.report.Targets.Verdict;

/**
 * Judges a run by issue #22's rules ({@link Targets#COUNTER_RULES}, {@link Targets#SIDE_RULES},
 * {@link Targets#METRIC_FLOORS}, {@link Targets#SCALINGS}), with an error bar on every row that
 * has one to give:
 * <ul>
 *   <li>a ratio of counters: the point is the ratio of the counters' sums; its range is the point
 *       ± the 99.9% Student-t half-width of the per-iteration ratios ({@link Student});</li>
 *   <li>a side-by-side comparison: the counter's ns per op (± the half-width of its per-iteration
 *       values) over the row's median, the range taking the row's least and most rounds;</li>
 *   <li>a floor and a scaling: the scores ± JMH's own errors.</li>
 * </ul>
 * A target whose baseline is absent (a counter, the side-by-side file or its row, the one-core
 * run) is a row marked {@link Verdict#NO_BASELINE} saying what is missing, not a silent gap.
 */
final class FastTargets {

    private static final Pattern CORES = Pattern.compile("-cpu(\\d+)$");

    /**
     * Adds the rows of {@code run}'s issue #22 targets to {@code out}.
     *
     * @param run  the run judged
     * @param runs every run on the page, where a scaling finds its companion
     * @param out  the rows so far
     */
    static void judge(Run run, List<Run> runs, List<Ratio> out) {
        for (CounterRule rule : Targets.COUNTER_RULES) {
            for (Result r : run.results()) {
                if (applies(r, rule.bench(), rule.params()) && r.secondary().containsKey(rule.num())) {
                    out.add(counter(run, r, rule));
                }
            }
        }
        for (SideRule rule : Targets.SIDE_RULES) {
            for (Result r : run.results()) {
                if (applies(r, rule.bench(), rule.params())) {
                    Ratio row = side(run, r, rule);
                    if (row != null) {
                        out.add(row);
                    }
                }
            }
        }
        int cores = cores(run.name());
        for (MetricFloor f : Targets.METRIC_FLOORS) {
            for (Result r : run.results()) {
                if ((cores < 0 || cores == Targets.HOST_CORES) && applies(r, f.bench(), f.params())
                        && r.secondary().containsKey(f.metric())) {
                    out.add(floor(run, r, f));
                }
            }
        }
        for (Scaling sc : Targets.SCALINGS) {
            if (cores != sc.many()) {
                continue;
            }
            for (Result r : run.results()) {
                if (applies(r, sc.bench(), sc.params()) && r.secondary().containsKey(sc.metric())) {
                    out.add(scaling(run, r, sc, runs));
                }
            }
        }
    }

    /** {@return the K of a run named {@code ...-cpuK}, or -1} */
    static int cores(String runName) {
        Matcher m = CORES.matcher(runName);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** {@return whether {@code r} is of {@code bench} and has every {@code k=v} of {@code params}} */
    static boolean applies(Result r, String bench, String params) {
        if (!r.bench().equals(bench)) {
            return false;
        }
        if (params.isEmpty()) {
            return true;
        }
        List<String> have = List.of(r.params().split(", "));
        for (String kv : params.split(", ")) {
            if (!have.contains(kv)) {
                return false;
            }
        }
        return true;
    }

    private static Ratio counter(Run run, Result r, CounterRule rule) {
        String bench = r.bench() + ":" + rule.num();
        String plus = rule.plusNsPerOp() == 0 ? ""
                : String.format(Locale.ROOT, " + %s ns/op", PageMarkdown.fmt(rule.plusNsPerOp()));
        String baseline = r.bench() + ":" + rule.den() + plus;
        String target = rule.bound().show(rule.target());
        double num = r.secondary().get(rule.num());
        Double den = r.secondary().get(rule.den());
        Double ops = r.secondary().get(rule.ops());
        if (den == null || ops == null || ops == 0) {
            String what = den == null ? rule.den() : rule.ops();
            return new Ratio(run.name(), rule.note(), bench, r.params(), baseline, ops == null || ops == 0 ? Double.NaN
                    : num / ops, Double.NaN, "ns/op", Double.NaN, Double.NaN, Double.NaN, target, Verdict.NO_BASELINE,
                    "no `" + what + "` counter");
        }
        double base = den + rule.plusNsPerOp() * ops;
        double ratio = rule.throughput() ? base / num : num / base;
        double h = Student.halfWidth(perIteration(r, rule));
        // No spread between iterations is no estimate of the error: judged on the point, as one iteration is.
        double lo = h > 0 ? ratio - h : Double.NaN;
        double hi = h > 0 ? ratio + h : Double.NaN;
        return new Ratio(run.name(), rule.note(), bench, r.params(), baseline, num / ops, base / ops, "ns/op", ratio,
                lo, hi, target, rule.bound().judge(ratio, lo, hi, rule.target()));
    }

    /** {@return the rule's ratio in each measured iteration, or none where the raw data do not line up} */
    private static double[] perIteration(Result r, CounterRule rule) {
        double[] n = r.secondaryRaw().getOrDefault(rule.num(), new double[0]);
        double[] d = r.secondaryRaw().getOrDefault(rule.den(), new double[0]);
        double[] o = r.secondaryRaw().getOrDefault(rule.ops(), new double[0]);
        if (n.length != d.length || n.length != o.length) {
            return new double[0];
        }
        double[] out = new double[n.length];
        for (int i = 0; i < n.length; i++) {
            double base = d[i] + rule.plusNsPerOp() * o[i];
            out[i] = rule.throughput() ? base / n[i] : n[i] / base;
        }
        return out;
    }

    private static Ratio side(Run run, Result r, SideRule rule) {
        Double c = r.secondary().get(rule.counter());
        Double ops = r.secondary().get(rule.ops());
        if (c == null || ops == null || ops == 0) {
            return null;
        }
        double score = c / ops;
        String bench = r.bench() + ":" + rule.counter();
        String target = rule.bound().show(rule.target());
        String why = run.sideBySide().missing(rule.row(), run.name());
        if (why != null) {
            return Double.isNaN(rule.target()) ? null
                    : new Ratio(run.name(), rule.note(), bench, r.params(), rule.row(), score, Double.NaN, "ns/op",
                            Double.NaN, Double.NaN, Double.NaN, target, Verdict.NO_BASELINE, why);
        }
        SideBySide.Row row = run.sideBySide().measured(rule.row());
        double[] cs = r.secondaryRaw().getOrDefault(rule.counter(), new double[0]);
        double[] os = r.secondaryRaw().getOrDefault(rule.ops(), new double[0]);
        double h = Double.NaN;
        if (cs.length == os.length) {
            double[] per = new double[cs.length];
            for (int i = 0; i < per.length; i++) {
                per[i] = cs[i] / os[i];
            }
            h = Student.halfWidth(per);
        }
        double ratio = score / row.ns();
        double lo = (score - h) / row.max();
        double hi = (score + h) / row.min();
        return new Ratio(run.name(), rule.note(), bench, r.params(), rule.row(), score, row.ns(), "ns/op", ratio, lo, hi,
                target, rule.bound().judge(ratio, lo, hi, rule.target()));
    }

    private static Ratio floor(Run run, Result r, MetricFloor f) {
        double score = r.secondary().get(f.metric());
        double e = r.secondaryError().getOrDefault(f.metric(), Double.NaN);
        double lo = score - e;
        double hi = score + e;
        return new Ratio(run.name(), f.note(), r.bench() + ":" + f.metric(), r.params(), "", score, Double.NaN,
                f.unit(), Double.NaN, lo, hi, String.format(Locale.ROOT, "≥ %.0e %s", f.atLeast(), f.unit()),
                Verdict.atLeast(score, lo, hi, f.atLeast()));
    }

    private static Ratio scaling(Run run, Result r, Scaling sc, List<Run> runs) {
        String fewName = run.name().substring(0, run.name().length() - String.valueOf(sc.many()).length()) + sc.few();
        String bench = r.bench() + ":" + sc.metric();
        String target = String.format(Locale.ROOT, "≥ %.2f×", sc.atLeast());
        double many = r.secondary().get(sc.metric());
        Result base = null;
        for (Run other : runs) {
            if (other.name().equals(fewName)) {
                base = other.find(r.bench(), r.params());
            }
        }
        String baseline = fewName + ": " + bench;
        if (base == null || !base.secondary().containsKey(sc.metric())) {
            return new Ratio(run.name(), sc.note(), bench, r.params(), baseline, many, Double.NaN, r.unit(), Double.NaN,
                    Double.NaN, Double.NaN, target, Verdict.NO_BASELINE, "no run `" + fewName + "` with this case");
        }
        double few = base.secondary().get(sc.metric());
        double em = r.secondaryError().getOrDefault(sc.metric(), Double.NaN);
        double ef = base.secondaryError().getOrDefault(sc.metric(), Double.NaN);
        double ratio = many / few;
        double lo = (many - em) / (few + ef);
        double hi = few - ef <= 0 ? Double.POSITIVE_INFINITY : (many + em) / (few - ef);
        return new Ratio(run.name(), sc.note(), bench, r.params(), baseline, many, few, r.unit(), ratio, lo, hi, target,
                Verdict.atLeast(ratio, lo, hi, sc.atLeast()));
    }

    private FastTargets() {
    }
}
