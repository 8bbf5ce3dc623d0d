package metrale.gpu.spi;

import java.util.Map;

/**
 * Options for {@link BackendProvider#open}, as strings keyed by name (for example
 * {@code sim.capacity}). Each backend documents the keys it reads; it ignores the rest.
 *
 * <p>An option not given here (through {@code GpuBuilder.backendOption}) is read from the system
 * property {@code metrale.KEY} (e.g. {@code metrale.sim.capacity}), then from the environment
 * variable {@code METRALE_KEY} in upper case with dots as underscores (e.g.
 * {@code METRALE_SIM_CAPACITY}), so every backend option can be set all three ways.
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
     * {@return the option's value (given, else the system property, else the environment), or {@code def}}
     *
     * @param key the option
     * @param def the default
     */
    public String get(String key, String def) {
        String v = options.get(key);
        if (v == null) {
            v = System.getProperty("metrale." + key);
        }
        if (v == null || v.isBlank()) {
            v = System.getenv("METRALE_" + key.toUpperCase(java.util.Locale.ROOT).replace('.', '_'));
        }
        return v == null || v.isBlank() ? def : v;
    }

    /**
     * {@return the option as a long, or {@code def}}
     *
     * @param key the option
     * @param def the default
     * @throws IllegalArgumentException if the value is not a number
     */
    public long getLong(String key, long def) {
        String v = get(key, null);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + key + "=" + v + " is not a whole number", e);
        }
    }
}
