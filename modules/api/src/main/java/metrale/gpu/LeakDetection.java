// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.List;
import java.util.Locale;

/**
 * How much of the creation sites of a runtime's device allocations and resources (streams,
 * events, graphs, page-locked memory, captured steps) is recorded for leak reports, in the manner
 * of Netty's {@code ResourceLeakDetector}. A site is the caller's {@code File.java:line}, found by
 * a stack walk ({@link metrale.telemetry.CallSites#caller()}, bounded in depth); the walk is the
 * whole cost of a site, a microsecond or two, against well under a microsecond for the rest of a
 * pool hit.
 *
 * <p>At most one walk per allocation and free: the walk is made at the allocation. A free walks for
 * its own line only where a report names it (red zones or a quarantine on, whose reports say
 * "freed at", or the simulator's pool race checks) and only for an allocation whose own site was
 * walked; elsewhere a free records {@code (not recorded: ...)} as its site.
 *
 * <p>Set with {@link GpuBuilder#leakDetection(LeakDetection)}, {@code metrale.leakDetection} or
 * {@code METRALE_LEAK_DETECTION} (see {@link Setting#LEAK_DETECTION}); the rate of
 * {@link #SAMPLED} with {@link GpuBuilder#leakDetectionSample(int)}.
 */
public enum LeakDetection {

    /** No stack walk: every site is {@value #NO_SITE}. */
    OFF("off"),
    /**
     * The default: one allocation or resource in {@link GpuOptions#leakDetectionSample() N}, drawn
     * at random (so no loop's period can hide a site), walks its stack; the others are named
     * {@value #UNSAMPLED_SITE}, and every leak report says how many went unsampled. A site that leaks
     * again and again is named after about N of its leaks.
     */
    SAMPLED("sampled"),
    /** Every allocation and resource walks its stack: the test kit's level. */
    ALL("all");

    /**
     * The default rate of {@link #SAMPLED}: one allocation in 128 walks its stack. It is Netty's
     * default sampling interval, and what it costs is small next to the rest of an allocation: a
     * walk of 1.5 to 3.5 µs (the benchmarks' {@code CallSiteBench}, {@code PoolBench}) over 128 is
     * 12 to 27 ns per allocation, against about 850 ns for a pool hit's alloc+free with no site at
     * all. What it misses: a site that leaks k allocations stays unnamed with probability
     * (127/128)^k, 46% for 100 leaks and under 0.1% for 1000; a leak worth finding in production
     * grows, and a test runs at {@link #ALL}.
     */
    public static final int DEFAULT_SAMPLE = 128;

    /** The site of every allocation and resource at {@link #OFF}. */
    public static final String NO_SITE = "?";

    /** The site of an allocation or resource {@link #SAMPLED} did not walk. */
    public static final String UNSAMPLED_SITE = "(unsampled: leakDetection=all names every site)";

    /** The levels as the settings table spells them, in order: {@code off}, {@code sampled}, {@code all}. */
    public static final List<String> OPTIONS = List.of("off", "sampled", "all");

    private final String option;

    LeakDetection(String option) {
        this.option = option;
    }

    /** {@return the level as the settings table spells it: {@code off}, {@code sampled} or {@code all}} */
    public String option() {
        return option;
    }

    /**
     * {@return the level a word of {@link #OPTIONS} names}
     *
     * @param option {@code off}, {@code sampled} or {@code all}, any case
     * @throws IllegalArgumentException naming the setting and the word if it is none of them
     */
    public static LeakDetection fromOption(String option) {
        String w = Setting.parseChoice(Setting.LEAK_DETECTION.what(), option, OPTIONS);
        return values()[OPTIONS.indexOf(w)];
    }

    /**
     * {@return whether {@code site} names a line}: neither {@value #NO_SITE} nor {@link #UNSAMPLED_SITE}
     *
     * @param site a site from {@link Allocation#site()} or {@link LiveResource#site()}
     */
    public static boolean hasSite(String site) {
        return !NO_SITE.equals(site) && !UNSAMPLED_SITE.equals(site);
    }

    /**
     * {@return the level in words, as reports give it}: {@code leakDetection=off},
     * {@code leakDetection=sampled, 1 in 128} or {@code leakDetection=all}
     *
     * @param sample the rate of {@link #SAMPLED}; ignored by the other levels
     */
    public String describe(int sample) {
        return this == SAMPLED ? "leakDetection=sampled, 1 in " + sample : "leakDetection=" + option;
    }

    /**
     * {@return the sentence a leak report adds when some of its entries have no site}, e.g.
     * {@code 3 of 40 live allocations have their site; 37 unsampled (leakDetection=sampled, 1 in 64)};
     * empty when every entry has its site (none counts as every)
     *
     * @param named  how many entries have a site ({@link #hasSite})
     * @param total  how many entries there are
     * @param things what the entries are, plural: {@code live allocations}, {@code leaked resources}
     * @param sample the rate of {@link #SAMPLED}
     */
    public String coverage(long named, long total, String things, int sample) {
        if (named >= total) {
            return "";
        }
        String level = describe(sample);
        if (this == OFF) {
            return String.format(Locale.ROOT, "%d %s, none with its site (%s)", total, things, level);
        }
        return String.format(Locale.ROOT, "%d of %d %s have their site; %d unsampled (%s)",
                named, total, things, total - named, level);
    }
}
