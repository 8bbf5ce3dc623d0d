// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

/**
 * Aggregated wall-clock time of one kernel's launches, in nanoseconds.
 *
 * @param count      how many spans
 * @param totalNanos their sum
 * @param minNanos   the shortest, 0 if {@code count} is 0
 * @param maxNanos   the longest, 0 if {@code count} is 0
 */
public record TimingStats(long count, long totalNanos, long minNanos, long maxNanos) {

    /**
     * Checks for a negative count.
     *
     * @throws IllegalArgumentException if {@code count} is negative
     */
    public TimingStats {
        if (count < 0) {
            throw new IllegalArgumentException("count < 0: " + count);
        }
    }

    /**
     * The mean span.
     *
     * @return {@code totalNanos / count}, or 0 if {@code count} is 0
     */
    public double meanNanos() {
        return count == 0 ? 0 : (double) totalNanos / count;
    }
}
