package metrale.gpu;

/**
 * A red zone found corrupted by {@link Gpu#findRedzoneViolations()}: something wrote past the end
 * of a buffer.
 *
 * @param allocation      the buffer whose pad was overwritten
 * @param firstBadOffset  offset into the pad of the first byte that differs from the fill pattern
 * @param badBytes        how many bytes of the pad differ
 */
public record RedZoneViolation(Allocation allocation, long firstBadOffset, long badBytes) {

    @Override
    public String toString() {
        return "red zone of " + allocation.ptr() + " (" + allocation.bytes() + " B, #" + allocation.index()
                + ", allocated at " + allocation.site() + ") overwritten: " + badBytes + " byte(s), first at +"
                + (allocation.bytes() + firstBadOffset);
    }
}
