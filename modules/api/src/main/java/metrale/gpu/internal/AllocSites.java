// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.function.Supplier;
import metrale.telemetry.CallSites;

/**
 * The call-site policy of allocations and frees ({@link metrale.gpu.GpuOptions#allocSites()} and
 * {@link metrale.gpu.GpuOptions#allocSiteSample()}): every call walked, one call in N walked, or
 * none. The stack walk is the whole cost of a site (about 1 to 2 µs; a walk that resolves no line
 * costs nearly as much, see the benchmarks' {@code CallSiteBench}), so sampling is what makes
 * sites cheap; an unsampled call is named {@link #unsampled()}, so reports say what they lack.
 */
final class AllocSites implements Supplier<String> {

    private final boolean on;
    private final int every;
    private final String unsampled;
    // Racy on purpose: a lost increment only moves which call is sampled.
    private int count;

    AllocSites(boolean on, int every) {
        this.on = on;
        this.every = Math.max(1, every);
        this.unsampled = "(unsampled: 1 in " + this.every + " allocations is walked for its site)";
    }

    /** {@return the caller's {@code File.java:line}, {@link #unsampled()} for a call not sampled, {@code ?} when off} */
    @Override
    public String get() {
        if (!on) {
            return "?";
        }
        if (every == 1 || count++ % every == 0) {
            return CallSites.caller();
        }
        return unsampled;
    }

    /** {@return the name of calls whose site was not walked} */
    String unsampled() {
        return unsampled;
    }
}
