// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import metrale.gpu.Setting;

/**
 * Options for {@link BackendProvider#open}: strings keyed by name (for example
 * {@code sim.capacity}), and objects keyed by name (for example a simulator's table of kernel
 * twins), which only {@code GpuBuilder.backendOption(String, Object)} can give. Each backend
 * documents the keys it reads; it ignores the rest.
 *
 * <p>An option not given here (through {@code GpuBuilder.backendOption}) is read from the system
 * property {@code metrale.KEY} (e.g. {@code metrale.sim.capacity}), then from the environment
 * variable {@code METRALE_KEY} in upper case with dots as underscores (e.g.
 * {@code METRALE_SIM_CAPACITY}), so every backend option can be set all three ways. The rule and
 * the grammars are those of the settings table, {@link Setting}, which lists every backend's keys.
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
        String v = Setting.resolve(options.get(key), property(key), environment(key));
        return v == null ? def : v;
    }

    private static String property(String key) {
        return "metrale." + key;
    }

    private static String environment(String key) {
        return "METRALE_" + key.toUpperCase(java.util.Locale.ROOT).replace('.', '_');
    }

    /**
     * {@return the option as error messages name it, with the system property and environment variable it
     * may come from, e.g. {@code option sim.sms (metrale.sim.sms / METRALE_SIM_SMS)}}
     *
     * @param key the option
     */
    public static String describe(String key) {
        return "option " + key + " (" + property(key) + " / " + environment(key) + ")";
    }

    /**
     * {@return the option as one of {@code words} in the settings table's choice grammar (any case), or {@code def}}
     *
     * @param key   the option
     * @param def   the default, returned as is when the option is not set
     * @param words the words it takes, in lower case
     * @throws IllegalArgumentException naming the option, its property and variable if it is none of the words
     */
    public String getChoice(String key, String def, java.util.List<String> words) {
        String v = get(key, null);
        return v == null ? def : Setting.parseChoice(describe(key), v, words);
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
        return Setting.parseWhole(describe(key), v);
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
        return v == null ? def : Setting.parseBoolean(describe(key), v);
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
