// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A red zone found corrupted by {@link Gpu#findRedzoneViolations()}: something wrote past the end
 * of a buffer.
 *
 * <p>The overwritten span runs from the first to the last byte that differs from the fill
 * pattern: a write of 16 bytes whose values happen to include the pattern's byte still reports 16.
 *
 * @param allocation      the buffer whose pad was overwritten
 * @param firstBadOffset  offset into the pad of the first byte that differs from the fill pattern
 * @param badBytes        how many bytes of the pad differ
 * @param lastBadOffset   offset into the pad of the last byte that differs from the fill pattern
 */
public record RedZoneViolation(Allocation allocation, long firstBadOffset, long badBytes, long lastBadOffset) {

    /** {@return the bytes from the first to the last that differ from the fill pattern} */
    public long spanBytes() {
        return lastBadOffset - firstBadOffset + 1;
    }

    /**
     * {@return the buffer, its creation index and site, and the overwritten span as offsets from the
     * buffer's start}
     */
    @Override
    public String toString() {
        long from = allocation.bytes() + firstBadOffset;
        long to = allocation.bytes() + lastBadOffset;
        long span = spanBytes();
        return "red zone of " + allocation.ptr() + " (" + allocation.bytes() + " B, #" + allocation.index()
                + ", allocated at " + allocation.site() + ") overwritten: " + span + " byte(s), first at +" + from
                + (span > 1 ? ", last at +" + to : "")
                + (badBytes < span ? " (" + badBytes + " of them differ from the fill byte; the rest hold it)" : "");
    }
}
