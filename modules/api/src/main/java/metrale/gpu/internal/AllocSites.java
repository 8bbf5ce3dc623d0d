// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import metrale.gpu.LeakDetection;
import metrale.telemetry.CallSites;

/**
 * The call-site policy of allocations, frees and resources ({@link metrale.gpu.GpuOptions#leakDetection()}
 * and {@link metrale.gpu.GpuOptions#leakDetectionSample()}): every creation walked, one in N drawn
 * at random, or none. The stack walk is the whole cost of a site (about 1 to 3 µs; a walk that
 * resolves no line costs nearly as much, see the benchmarks' {@code CallSiteBench}), so sampling is
 * what makes sites cheap; an unsampled creation is named {@link LeakDetection#UNSAMPLED_SITE}, so
 * reports say what they lack.
 *
 * <p>A free never walks on its own account: {@link #freeSite} is called only where a report names
 * where memory was freed, and walks only for an allocation whose own site was walked, so an
 * allocation and its free walk at most once unless such a report is on.
 */
final class AllocSites implements Supplier<String> {

    /**
     * What {@code Gpu.free} records where no report names its line: a double free's message says
     * "freed at" this.
     */
    static final String FREE_NOT_RECORDED =
            "Gpu.free (line not recorded: a free walks for it only with red zones or a quarantine on)";

    /** What a pool free records where no report names its line. */
    static final String POOL_FREE_NOT_RECORDED =
            "pool.free (line not recorded: a free walks for it only with red zones or a quarantine on)";

    private final LeakDetection level;
    private final int every;
    private final Supplier<String> walker;
    private final LongAdder walks = new LongAdder();

    /**
     * @param level the level
     * @param every the rate of {@link LeakDetection#SAMPLED}, at least 1
     */
    AllocSites(LeakDetection level, int every) {
        this(level, every, CallSites::caller);
    }

    /**
     * @param level  the level
     * @param every  the rate of {@link LeakDetection#SAMPLED}, at least 1
     * @param walker the stack walk: {@link CallSites#caller()} but in tests
     */
    AllocSites(LeakDetection level, int every, Supplier<String> walker) {
        if (every < 1) {
            throw new IllegalArgumentException("leakDetectionSample=" + every + " must be >= 1");
        }
        this.level = level;
        this.every = every;
        this.walker = walker;
    }

    /**
     * {@return the creation site of an allocation or resource}: the caller's {@code File.java:line},
     * {@link LeakDetection#UNSAMPLED_SITE} for one not sampled, {@link LeakDetection#NO_SITE} when off
     */
    @Override
    public String get() {
        return switch (level) {
            case OFF -> LeakDetection.NO_SITE;
            case ALL -> walk();
            case SAMPLED -> every == 1 || ThreadLocalRandom.current().nextInt(every) == 0 ? walk()
                    : LeakDetection.UNSAMPLED_SITE;
        };
    }

    /**
     * {@return the site of the free of {@code e}, for a report that names it}: the caller's line when
     * the allocation's own site was walked, else the allocation's site ({@code ?} or unsampled), so a
     * free walks only for a pair that was sampled. The site replaces what {@link Ledger#remove}
     * recorded in the ledger's memory of the free, for a later double free.
     *
     * @param e      the entry just taken off {@code ledger}
     * @param ledger the ledger it came from
     */
    String freeSite(Ledger.Entry e, Ledger ledger) {
        String own = e.allocation().site();
        String site = LeakDetection.hasSite(own) ? walk() : own;
        ledger.freedAt(e, site);
        return site;
    }

    private String walk() {
        walks.increment();
        return walker.get();
    }

    /** {@return how many stack walks this policy has made} For tests and the record of what sites cost. */
    long walks() {
        return walks.sum();
    }

    /**
     * {@return the report's sentence for entries without a site, or empty} See {@link LeakDetection#coverage}.
     *
     * @param named  how many have a site
     * @param total  how many there are
     * @param things what they are, plural
     */
    String coverage(long named, long total, String things) {
        return level.coverage(named, total, things, every);
    }
}
