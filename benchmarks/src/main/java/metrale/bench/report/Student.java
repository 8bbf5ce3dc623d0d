// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

/**
 * The error bar JMH puts on a score, for values the page computes itself from JMH's per-iteration
 * raw data: the half-width of the 99.9% confidence interval of a mean, Student's t times the
 * standard error, as JMH's own {@code scoreError} is.
 */
final class Student {

    /** The confidence level of JMH's error bars. */
    static final double CONFIDENCE = 0.999;

    /**
     * {@return the half-width of the {@value #CONFIDENCE} confidence interval of the mean of
     * {@code samples}, or NaN for fewer than two}
     *
     * @param samples the values, one per measured iteration
     */
    static double halfWidth(double[] samples) {
        int n = samples.length;
        if (n < 2) {
            return Double.NaN;
        }
        double mean = 0;
        for (double v : samples) {
            mean += v;
        }
        mean /= n;
        double ss = 0;
        for (double v : samples) {
            ss += (v - mean) * (v - mean);
        }
        double sd = Math.sqrt(ss / (n - 1));
        return quantile(1 - (1 - CONFIDENCE) / 2, n - 1) * sd / Math.sqrt(n);
    }

    /**
     * {@return the {@code p} quantile of Student's t distribution with {@code df} degrees of
     * freedom}, for {@code p} in (0.5, 1), found by bisection on the distribution function
     *
     * @param p  the probability
     * @param df the degrees of freedom, at least 1
     */
    static double quantile(double p, int df) {
        if (!(p > 0.5 && p < 1) || df < 1) {
            throw new IllegalArgumentException("quantile(" + p + ", " + df + "): p in (0.5, 1), df >= 1");
        }
        double lo = 0;
        double hi = 1;
        while (cdf(hi, df) < p) {
            hi *= 2;
        }
        for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
            double mid = (lo + hi) / 2;
            if (cdf(mid, df) < p) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }

    /** {@return P(T ≤ t) for t ≥ 0 and Student's T with {@code df} degrees of freedom} */
    static double cdf(double t, int df) {
        double x = df / (df + t * t);
        return 1 - 0.5 * regularizedBeta(x, df / 2.0, 0.5);
    }

    /** The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz). */
    private static double regularizedBeta(double x, double a, double b) {
        if (x <= 0) {
            return 0;
        }
        if (x >= 1) {
            return 1;
        }
        if (x > (a + 1) / (a + b + 2)) {
            return 1 - regularizedBeta(1 - x, b, a);
        }
        double front = Math.exp(a * Math.log(x) + b * Math.log(1 - x) - logBeta(a, b)) / a;
        double tiny = 1e-300;
        double c = 1;
        double d = 1 - (a + b) * x / (a + 1);
        d = Math.abs(d) < tiny ? tiny : d;
        d = 1 / d;
        double f = d;
        for (int m = 1; m <= 500; m++) {
            double num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            d = 1 + num * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = 1 + num / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            f *= d * c;
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
            d = 1 + num * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = 1 + num / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            double step = d * c;
            f *= step;
            if (Math.abs(step - 1) < 1e-15) {
                break;
            }
        }
        return front * f;
    }

    private static double logBeta(double a, double b) {
        return logGamma(a) + logGamma(b) - logGamma(a + b);
    }

    /** ln Γ(x) for x > 0, by Lanczos' approximation (g = 7, nine terms). */
    private static double logGamma(double x) {
        if (x < 0.5) {
            return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
        }
        double[] g = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7};
        double y = x - 1;
        double a = g[0];
        double t = y + 7.5;
        for (int i = 1; i < 9; i++) {
            a += g[i] / (y + i);
        }
        return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
    }

    private Student() {
    }
}
