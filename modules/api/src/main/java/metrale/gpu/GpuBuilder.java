package metrale.gpu;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import metrale.gpu.internal.GpuRuntime;
import metrale.telemetry.Telemetry;

/**
 * Builds a {@link Gpu} with explicit options; what is not set comes from system properties and
 * the environment (see {@link GpuOptions}). Not thread-safe; each {@link #open()} makes a new
 * runtime.
 */
public final class GpuBuilder {

    private String backend;
    private Long redZoneBytes;
    private Long redZoneMinIndex;
    private Boolean debugSync;
    private Boolean d2hTrace;
    private Boolean timing;
    private Boolean allocSites;
    private Telemetry telemetry;
    private final Map<String, String> backendOptions = new LinkedHashMap<>();
    private final Map<String, Object> backendObjects = new LinkedHashMap<>();

    GpuBuilder() {
    }

    /**
     * Names the backend.
     *
     * @param name {@code cuda} or {@code sim}
     * @return this
     */
    public GpuBuilder backend(String name) {
        this.backend = Objects.requireNonNull(name, "backend");
        return this;
    }

    /**
     * Puts a red zone of {@code bytes} after each buffer; 0 turns them off.
     *
     * @param bytes pad size, at least 0
     * @return this
     */
    public GpuBuilder redZoneBytes(long bytes) {
        this.redZoneBytes = bytes;
        return this;
    }

    /**
     * Red-zones only allocations from this creation index on.
     *
     * @param index the first creation index, at least 0
     * @return this
     */
    public GpuBuilder redZoneMinIndex(long index) {
        this.redZoneMinIndex = index;
        return this;
    }

    /**
     * Synchronizes the stream after each launch.
     *
     * @param on whether to
     * @return this
     */
    public GpuBuilder debugSync(boolean on) {
        this.debugSync = on;
        return this;
    }

    /**
     * Collects the call sites of device-to-host copies.
     *
     * @param on whether to
     * @return this
     */
    public GpuBuilder d2hTrace(boolean on) {
        this.d2hTrace = on;
        return this;
    }

    /**
     * Times each launch per kernel.
     *
     * @param on whether to
     * @return this
     */
    public GpuBuilder timing(boolean on) {
        this.timing = on;
        return this;
    }

    /**
     * Records each allocation's call site.
     *
     * @param on whether to
     * @return this
     */
    public GpuBuilder allocSites(boolean on) {
        this.allocSites = on;
        return this;
    }

    /**
     * Reports to this telemetry instead of a fresh one.
     *
     * @param telemetry the telemetry, e.g. {@link Telemetry#global()}
     * @return this
     */
    public GpuBuilder telemetry(Telemetry telemetry) {
        this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
        return this;
    }

    /**
     * Passes an option to the backend.
     *
     * @param key   the option, e.g. {@code sim.capacity}
     * @param value its value
     * @return this
     */
    public GpuBuilder backendOption(String key, String value) {
        backendOptions.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        backendObjects.remove(key);
        return this;
    }

    /**
     * Passes an object to the backend, for options a string cannot carry (the simulator's
     * {@code sim.twins} takes a table of kernel twins). A {@link String} value is passed as a string
     * option, exactly as {@link #backendOption(String, String)} does.
     *
     * @param key   the option, e.g. {@code sim.twins}
     * @param value its value
     * @return this
     */
    public GpuBuilder backendOption(String key, Object value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        if (value instanceof String str) {
            return backendOption(key, str);
        }
        backendObjects.put(key, value);
        backendOptions.remove(key);
        return this;
    }

    /** {@return the options this builder would open with} */
    public GpuOptions options() {
        return new GpuOptions(
                backend != null ? backend : setting("metrale.backend", "METRALE_BACKEND", null),
                redZoneBytes != null ? redZoneBytes : longSetting("metrale.redzone", "METRALE_REDZONE", 0),
                redZoneMinIndex != null ? redZoneMinIndex : longSetting("metrale.redzone.minIdx", "METRALE_REDZONE_MIN_IDX", 0),
                debugSync != null ? debugSync : boolSetting("metrale.debugSync", "METRALE_DEBUG_SYNC", false),
                d2hTrace != null ? d2hTrace : boolSetting("metrale.d2h.trace", "METRALE_D2H_TRACE", false),
                timing != null ? timing : boolSetting("metrale.timing", "METRALE_TIMING", false),
                allocSites != null ? allocSites : boolSetting("metrale.allocSites", "METRALE_ALLOC_SITES", true),
                telemetry != null ? telemetry : new Telemetry(),
                backendOptions, backendObjects);
    }

    /**
     * Opens the runtime.
     *
     * @return a new runtime, owned by the caller
     * @throws GpuException if the backend is missing or cannot be opened, naming why
     */
    public Gpu open() {
        return GpuRuntime.open(options());
    }

    private static String setting(String property, String env, String def) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            v = System.getenv(env);
        }
        return v == null || v.isBlank() ? def : v.trim();
    }

    private static long longSetting(String property, String env, long def) {
        String v = setting(property, env, null);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(property + " / " + env + " = '" + v + "' is not a whole number", e);
        }
    }

    private static boolean boolSetting(String property, String env, boolean def) {
        String v = setting(property, env, null);
        if (v == null) {
            return def;
        }
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> throw new IllegalArgumentException(property + " / " + env + " = '" + v + "' is not a boolean (true/false/1/0)");
        };
    }
}
