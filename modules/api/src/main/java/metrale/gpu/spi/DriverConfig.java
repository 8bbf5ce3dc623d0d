package metrale.gpu.spi;

import java.util.Map;
import metrale.gpu.Setting;

/**
 * Options for {@link BackendProvider#open}, as strings keyed by name (for example
 * {@code sim.capacity}). Each backend documents the keys it reads; it ignores the rest.
 *
 * <p>An option not given here (through {@code GpuBuilder.backendOption}) is read from the system
 * property {@code metrale.KEY} (e.g. {@code metrale.sim.capacity}), then from the environment
 * variable {@code METRALE_KEY} in upper case with dots as underscores (e.g.
 * {@code METRALE_SIM_CAPACITY}), so every backend option can be set all three ways. The rule and
 * the grammars are those of the settings table, {@link Setting}, which lists every backend's keys.
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
        String v = Setting.resolve(options.get(key), "metrale." + key,
                "METRALE_" + key.toUpperCase(java.util.Locale.ROOT).replace('.', '_'));
        return v == null ? def : v;
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
        return Setting.parseWhole("option " + key, v);
    }

    /**
     * {@return the option as a boolean in the settings table's one grammar, or {@code def}}
     *
     * @param key the option
     * @param def the default
     * @throws IllegalArgumentException if the value is not a boolean
     */
    public boolean getBoolean(String key, boolean def) {
        String v = get(key, null);
        return v == null ? def : Setting.parseBoolean("option " + key, v);
    }
}
