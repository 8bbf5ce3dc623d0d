package metrale.gpu.spi;

import java.util.Map;

/**
 * Options for {@link BackendProvider#open}, as strings keyed by name (for example
 * {@code sim.capacity}). Each backend documents the keys it reads; it ignores the rest.
 *
 * @param options the options
 */
public record DriverConfig(Map<String, String> options) {

    /** Makes the options immutable. */
    public DriverConfig {
        options = Map.copyOf(options);
    }

    /** {@return a config with no options} */
    public static DriverConfig empty() {
        return new DriverConfig(Map.of());
    }

    /**
     * {@return the option's value, or {@code def}}
     *
     * @param key the option
     * @param def the default
     */
    public String get(String key, String def) {
        return options.getOrDefault(key, def);
    }

    /**
     * {@return the option as a long, or {@code def}}
     *
     * @param key the option
     * @param def the default
     * @throws IllegalArgumentException if the value is not a number
     */
    public long getLong(String key, long def) {
        String v = options.get(key);
        if (v == null || v.isBlank()) {
            return def;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + key + "=" + v + " is not a whole number", e);
        }
    }
}
