package metrale.gpu.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Options for {@link BackendProvider#open}: strings keyed by name (for example
 * {@code sim.capacity}), and objects keyed by name (for example a simulator's table of kernel
 * twins), which only {@code GpuBuilder.backendOption(String, Object)} can give. Each backend
 * documents the keys it reads; it ignores the rest.
 *
 * <p>An option not given here (through {@code GpuBuilder.backendOption}) is read from the system
 * property {@code metrale.KEY} (e.g. {@code metrale.sim.capacity}), then from the environment
 * variable {@code METRALE_KEY} in upper case with dots as underscores (e.g.
 * {@code METRALE_SIM_CAPACITY}), so every backend option can be set all three ways.
 *
 * @param options the string options
 * @param objects the object options
 */
public record DriverConfig(Map<String, String> options, Map<String, Object> objects) {

    /** Makes the options immutable. */
    public DriverConfig {
        options = Map.copyOf(options);
        objects = Map.copyOf(objects);
    }

    /**
     * A config with string options only.
     *
     * @param options the string options
     */
    public DriverConfig(Map<String, String> options) {
        this(options, Map.of());
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

    /**
     * {@return the object option {@code key}, if given} Object options have no system property or
     * environment variable.
     *
     * @param key  the option
     * @param type the type the backend expects
     * @param <T>  the type
     * @throws IllegalArgumentException if the option is given but is not a {@code type}
     */
    public <T> Optional<T> object(String key, Class<T> type) {
        Objects.requireNonNull(type, "type");
        Object v = objects.get(Objects.requireNonNull(key, "key"));
        if (v == null) {
            return Optional.empty();
        }
        if (!type.isInstance(v)) {
            throw new IllegalArgumentException("option " + key + " is a " + v.getClass().getName() + ", not a "
                    + type.getName());
        }
        return Optional.of(type.cast(v));
    }
}
