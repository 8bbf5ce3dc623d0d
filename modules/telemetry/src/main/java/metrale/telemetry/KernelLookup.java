// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.util.Objects;

/**
 * One row of the {@link KernelAudit}: how often one kernel was looked up from
 * one call site with one outcome.
 *
 * @param module the module name asked for
 * @param func   the function name asked for
 * @param ok     whether the lookup found the function
 * @param site   where the lookup was made, usually {@code File.java:line}
 * @param count  how many such lookups there were
 */
public record KernelLookup(String module, String func, boolean ok, String site, long count) {

    /**
     * Checks for nulls and a negative count.
     *
     * @throws NullPointerException     if a string is null
     * @throws IllegalArgumentException if {@code count} is negative
     */
    public KernelLookup {
        Objects.requireNonNull(module, "module");
        Objects.requireNonNull(func, "func");
        Objects.requireNonNull(site, "site");
        if (count < 0) {
            throw new IllegalArgumentException("count < 0: " + count);
        }
    }
}
