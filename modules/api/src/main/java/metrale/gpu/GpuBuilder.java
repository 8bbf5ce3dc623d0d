// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import metrale.gpu.internal.GpuRuntime;
import metrale.telemetry.Telemetry;

/**
 * Builds a {@link Gpu} with explicit options; what is not set comes from system properties and
 * the environment, as the settings table {@link Setting} declares them (a builder call wins). Not thread-safe; each {@link #open()} makes a new
 * runtime.
 */
public final class GpuBuilder {

    private String backend;
    private Long redZoneBytes;
    private Long redZoneMinIndex;
    private Boolean debugSync;
    private Boolean d2hTrace;
    private Boolean timing;
    private LeakDetection leakDetection;
    private Integer leakDetectionSample;
    private Boolean allocSites;
    private Boolean checkPointers;
    private Telemetry telemetry;
    private String allocator;
    private Integer allocSiteSample;
    private Long quarantineBytes;
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
     * Holds up to {@code bytes} of freed device memory back from reuse, so a stale pointer is
     * refused naming where its memory was allocated and freed; 0 gives memory back at the free.
     * Unset, it is {@value GpuOptions#DEFAULT_QUARANTINE_BYTES} bytes (64 MiB) on the simulator;
     * on CUDA 64 MiB when red zones are on, else 0 (see {@link GpuOptions#quarantineBytes()} for its
     * cost). {@link Gpu#options()} reports what was resolved.
     *
     * @param bytes the most bytes held, at least 0
     * @return this
     */
    public GpuBuilder quarantineBytes(long bytes) {
        this.quarantineBytes = bytes;
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
     * Chooses how much of the creation sites of allocations and resources is recorded for leak
     * reports: {@link LeakDetection#OFF}, {@link LeakDetection#SAMPLED} (CUDA's default: one in
     * {@link #leakDetectionSample(int)} walks its stack) or {@link LeakDetection#ALL} (the
     * simulator's default and the test kit's). {@link Gpu#options()} reports what was resolved.
     *
     * @param level the level
     * @return this
     */
    public GpuBuilder leakDetection(LeakDetection level) {
        this.leakDetection = Objects.requireNonNull(level, "leakDetection");
        return this;
    }

    /**
     * Sets the rate of {@link LeakDetection#SAMPLED}: one allocation or resource in {@code every},
     * drawn at random, walks its stack for its site; the others are named
     * {@value LeakDetection#UNSAMPLED_SITE}. The other levels ignore it.
     *
     * @param every at least 1; {@value LeakDetection#DEFAULT_SAMPLE} by default
     * @return this
     */
    public GpuBuilder leakDetectionSample(int every) {
        this.leakDetectionSample = every;
        return this;
    }

    /**
     * Records each allocation's call site, or none.
     *
     * @param on {@code true} for {@link LeakDetection#ALL} ({@link LeakDetection#SAMPLED} with an
     *           {@link #allocSiteSample(int)} above 1), {@code false} for {@link LeakDetection#OFF}
     * @return this
     * @deprecated use {@link #leakDetection(LeakDetection)}; given together with it, a value that
     *             disagrees is an {@link IllegalArgumentException} at {@link #open()}
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    public GpuBuilder allocSites(boolean on) {
        this.allocSites = on;
        return this;
    }

    /**
     * Checks every pointer argument of each launch against the runtime's live memory (ledger
     * allocations, arena chunks, mapped page-locked memory) before the driver sees it; a pointer
     * outside is {@code INVALID_VALUE} naming the argument index. Null pointers pass.
     *
     * @param on whether to
     * @return this
     */
    public GpuBuilder checkPointers(boolean on) {
        this.checkPointers = on;
        return this;
    }

    /**
     * Walks the stack for the call site of one allocation in {@code every}.
     *
     * @param every at least 1: above 1 is {@link LeakDetection#SAMPLED} at that rate, 1 is {@link LeakDetection#ALL}
     * @return this
     * @deprecated use {@link #leakDetection(LeakDetection)} and {@link #leakDetectionSample(int)}; given
     *             together with them, a value that disagrees is an {@link IllegalArgumentException} at {@link #open()}
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    public GpuBuilder allocSiteSample(int every) {
        this.allocSiteSample = every;
        return this;
    }

    /**
     * Chooses what {@link Gpu#alloc(long)} uses, and which allocator backs {@link Gpu#pool()}.
     *
     * @param name {@code caching} (default), {@code driver} or {@code cuda}; see {@link GpuOptions#allocator()}
     * @return this
     */
    public GpuBuilder allocator(String name) {
        this.allocator = Objects.requireNonNull(name, "allocator");
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

    /**
     * Opens the device with this ordinal (see {@link Gpu#devices()}); the default is 0, or the CUDA
     * backend's {@code cuda.device}. The same as {@code backendOption("device", ordinal)}.
     *
     * @param ordinal the device's index, at least 0
     * @return this
     * @throws IllegalArgumentException if {@code ordinal} is negative
     */
    public GpuBuilder device(int ordinal) {
        if (ordinal < 0) {
            throw new IllegalArgumentException("device(" + ordinal + "): an ordinal is at least 0");
        }
        return backendOption(DEVICE_OPTION, Integer.toString(ordinal));
    }

    /** The backend option naming the device ordinal, which {@link #device(int)} sets. */
    public static final String DEVICE_OPTION = "device";

    /**
     * Lists the devices of the backend this builder would open, with its backend options.
     *
     * @return the devices, by ordinal
     * @throws GpuException if the backend is missing or cannot list devices
     */
    public java.util.List<GpuDevice> devices() {
        GpuOptions o = options();
        return metrale.gpu.internal.Backends.choose(o.backend())
                .devices(new metrale.gpu.spi.DriverConfig(o.backendOptions(), o.backendObjects()));
    }

    /**
     * {@return the options this builder would open with}
     *
     * @throws IllegalArgumentException if a setting is outside its grammar, or a deprecated name
     *                                  ({@code allocSites}, {@code allocSites.sample}) disagrees with
     *                                  the one that replaces it, given in the same place
     */
    public GpuOptions options() {
        String name = backend != null ? backend : Setting.BACKEND.text(null).orElse(null);
        // What the user left unset takes the backend's default: the simulator's are the test kit's.
        Map<Setting, String> byBackend = metrale.gpu.internal.Backends.defaults(name,
                new metrale.gpu.spi.DriverConfig(backendOptions, backendObjects));
        LeakSettings.Resolved leaks = LeakSettings.resolve(leakDetection, leakDetectionSample, allocSites, allocSiteSample,
                LeakDetection.fromOption(byBackend.getOrDefault(Setting.LEAK_DETECTION,
                        Setting.LEAK_DETECTION.defaultValue().orElseThrow())));
        long redZone = redZoneBytes != null ? redZoneBytes : Setting.REDZONE.whole(null);
        long quarantine = quarantineBytes != null ? quarantineBytes
                : Setting.QUARANTINE.text(null).isPresent() ? Setting.QUARANTINE.whole(null)
                : byBackend.containsKey(Setting.QUARANTINE)
                ? Setting.parseWhole(Setting.QUARANTINE.what(), byBackend.get(Setting.QUARANTINE))
                : redZone > 0 ? GpuOptions.DEFAULT_QUARANTINE_BYTES : 0;
        return new GpuOptions(
                name,
                redZone,
                redZoneMinIndex != null ? redZoneMinIndex : Setting.REDZONE_MIN_IDX.whole(null),
                debugSync != null ? debugSync : Setting.DEBUG_SYNC.bool(null),
                d2hTrace != null ? d2hTrace : Setting.D2H_TRACE.bool(null),
                timing != null ? timing : Setting.TIMING.bool(null),
                leaks.level(),
                checkPointers != null ? checkPointers : Setting.CHECK_POINTERS.bool(null),
                telemetry != null ? telemetry : new Telemetry(),
                backendOptions, backendObjects,
                Setting.ALLOCATOR.choice(allocator, GpuOptions.ALLOCATORS),
                leaks.sample(),
                quarantine);
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
}
