package metrale.gpu.spi;

/**
 * Whether a backend can be opened, and why not.
 *
 * @param available whether it can be opened
 * @param reason    why not (empty when available)
 */
public record Availability(boolean available, String reason) {

    /** {@return an available backend} */
    public static Availability yes() {
        return new Availability(true, "");
    }

    /**
     * {@return an unavailable backend}
     *
     * @param reason why, naming what is missing and how to fix it
     */
    public static Availability no(String reason) {
        return new Availability(false, reason);
    }
}
