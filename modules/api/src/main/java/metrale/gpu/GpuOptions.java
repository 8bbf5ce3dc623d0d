// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Map;
import java.util.Objects;
import metrale.telemetry.Telemetry;

/**
 * The options a {@link Gpu} is opened with. Build them with {@link GpuBuilder}; each has a system
 * property and an environment variable, read by {@link #fromEnvironment()} (a builder call wins
 * over the property, the property over the variable). The settings table {@link Setting} declares
 * each one once, with its property, variable, default and grammar.
 *
 * @param backend          the backend's name, or {@code null} to choose automatically
 * @param redZoneBytes     bytes of red zone after each buffer; 0 turns red zones off
 * @param redZoneMinIndex  the first creation index that gets a red zone
 * @param debugSync        synchronize the stream after every launch so a fault names its kernel
 * @param d2hTrace         collect the call sites of device-to-host copies
 * @param timing           time each launch (synchronizing its stream) and aggregate per kernel
 * @param leakDetection    how much of the creation sites of allocations and resources is recorded: {@code OFF}
 *                         (no stack walk, every site {@code ?}), {@code SAMPLED} (one in {@code leakDetectionSample}
 *                         walks) or {@code ALL}; see {@link LeakDetection}
 * @param checkPointers    check every pointer argument of a launch against live memory ({@code INVALID_VALUE}
 *                         naming the argument index when one is not); costs a lookup per pointer argument
 * @param telemetry        the telemetry instance the runtime reports to
 * @param backendOptions   options passed to the backend, e.g. {@code sim.capacity}
 * @param backendObjects   object options passed to the backend, e.g. {@code sim.twins}
 * @param allocator        what {@link Gpu#alloc(long)} uses: {@code driver} (a {@code cuMemAlloc} per
 *                         allocation), {@code caching} (the runtime's {@link MemoryPool}, on the
 *                         default stream) or {@code cuda} (the pool over CUDA's {@code cuMemAllocAsync});
 *                         {@link Gpu#pool()} is {@code cuda} when this is, else the caching pool
 * @param leakDetectionSample at {@link LeakDetection#SAMPLED}, one allocation or resource in this many walks
 *                         its stack, drawn at random; at least 1, {@value LeakDetection#DEFAULT_SAMPLE} by default;
 *                         the other levels ignore it
 * @param quarantineBytes  the most bytes of freed device memory (pads included) held back from reuse, oldest
 *                         given back first; 0 gives memory back at the free. A copy, memset or checked launch
 *                         argument into held memory is {@code INVALID_VALUE} naming where it was allocated and
 *                         freed. The memory cost is up to this many bytes of device memory (plus one block
 *                         or allocation over it) that neither the application nor the pool can use, and
 *                         about 100 bytes of heap per held range (64 MiB of 256-byte buffers: about
 *                         26 MB of heap); an out-of-memory gives it all back and
 *                         retries once. {@link Setting#QUARANTINE} defaults it to {@value #DEFAULT_QUARANTINE_BYTES}
 *                         (64 MiB) when red zones are on, else 0
 */
public record GpuOptions(String backend, long redZoneBytes, long redZoneMinIndex, boolean debugSync,
                         boolean d2hTrace, boolean timing, LeakDetection leakDetection, boolean checkPointers,
                         Telemetry telemetry, Map<String, String> backendOptions, Map<String, Object> backendObjects,
                         String allocator, int leakDetectionSample, long quarantineBytes) {

    /** The quarantine's size when red zones are on and none is given: 64 MiB. */
    public static final long DEFAULT_QUARANTINE_BYTES = 64L << 20;

    /** The values of {@link #allocator()}. */
    public static final java.util.List<String> ALLOCATORS = java.util.List.of("driver", "caching", "cuda");

    /** Validates and copies. */
    public GpuOptions {
        if (redZoneBytes < 0) {
            throw new IllegalArgumentException("redZoneBytes=" + redZoneBytes + " must be >= 0");
        }
        if (redZoneMinIndex < 0) {
            throw new IllegalArgumentException("redZoneMinIndex=" + redZoneMinIndex + " must be >= 0");
        }
        Objects.requireNonNull(telemetry, "telemetry");
        backendOptions = Map.copyOf(backendOptions);
        Objects.requireNonNull(leakDetection, "leakDetection");
        if (leakDetectionSample < 1) {
            throw new IllegalArgumentException("leakDetectionSample=" + leakDetectionSample + " must be >= 1");
        }
        allocator = Setting.parseChoice(Setting.ALLOCATOR.what(), Objects.requireNonNull(allocator, "allocator"), ALLOCATORS);
        backendObjects = Map.copyOf(backendObjects);
        if (quarantineBytes < 0) {
            throw new IllegalArgumentException("quarantineBytes=" + quarantineBytes + " must be >= 0");
        }
    }

    /**
     * The options with the call-site switch and rate that {@link LeakDetection} replaces.
     *
     * @param backend         see the record
     * @param redZoneBytes    see the record
     * @param redZoneMinIndex see the record
     * @param debugSync       see the record
     * @param d2hTrace        see the record
     * @param timing          see the record
     * @param allocSites      {@code false} is {@link LeakDetection#OFF}; {@code true} is {@link LeakDetection#ALL},
     *                        or {@link LeakDetection#SAMPLED} when {@code allocSiteSample} is above 1
     * @param checkPointers   see the record
     * @param telemetry       see the record
     * @param backendOptions  see the record
     * @param backendObjects  see the record
     * @param allocator       see the record
     * @param allocSiteSample the rate of {@link LeakDetection#SAMPLED} when above 1; at least 1
     * @param quarantineBytes see the record
     * @deprecated use the canonical constructor, with a {@link LeakDetection} and its sample rate
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    public GpuOptions(String backend, long redZoneBytes, long redZoneMinIndex, boolean debugSync,
                      boolean d2hTrace, boolean timing, boolean allocSites, boolean checkPointers, Telemetry telemetry,
                      Map<String, String> backendOptions, Map<String, Object> backendObjects, String allocator,
                      int allocSiteSample, long quarantineBytes) {
        this(backend, redZoneBytes, redZoneMinIndex, debugSync, d2hTrace, timing, legacyLevel(allocSites, allocSiteSample),
                checkPointers, telemetry, backendOptions, backendObjects, allocator, legacySample(allocSiteSample),
                quarantineBytes);
    }

    /**
     * The options before the quarantine had a setting of its own (it is 64 MiB when red zones are
     * on, else off), with the call-site switch and rate that {@link LeakDetection} replaces.
     *
     * @param backend         see the record
     * @param redZoneBytes    see the record
     * @param redZoneMinIndex see the record
     * @param debugSync       see the record
     * @param d2hTrace        see the record
     * @param timing          see the record
     * @param allocSites      {@code false} is {@link LeakDetection#OFF}; {@code true} is {@link LeakDetection#ALL},
     *                        or {@link LeakDetection#SAMPLED} when {@code allocSiteSample} is above 1
     * @param checkPointers   see the record
     * @param telemetry       see the record
     * @param backendOptions  see the record
     * @param backendObjects  see the record
     * @param allocator       see the record
     * @param allocSiteSample the rate of {@link LeakDetection#SAMPLED} when above 1; at least 1
     * @deprecated use the canonical constructor, with a {@link LeakDetection}, its sample rate and the quarantine
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    public GpuOptions(String backend, long redZoneBytes, long redZoneMinIndex, boolean debugSync,
                      boolean d2hTrace, boolean timing, boolean allocSites, boolean checkPointers, Telemetry telemetry,
                      Map<String, String> backendOptions, Map<String, Object> backendObjects, String allocator,
                      int allocSiteSample) {
        this(backend, redZoneBytes, redZoneMinIndex, debugSync, d2hTrace, timing, legacyLevel(allocSites, allocSiteSample),
                checkPointers, telemetry, backendOptions, backendObjects, allocator, legacySample(allocSiteSample),
                redZoneBytes > 0 ? DEFAULT_QUARANTINE_BYTES : 0);
    }

    /** {@return the level the old switch and rate name}: off, else sampled above a rate of 1, else all */
    static LeakDetection legacyLevel(boolean allocSites, int allocSiteSample) {
        if (allocSiteSample < 1) {
            throw new IllegalArgumentException("allocSiteSample=" + allocSiteSample + " must be >= 1");
        }
        return !allocSites ? LeakDetection.OFF : allocSiteSample > 1 ? LeakDetection.SAMPLED : LeakDetection.ALL;
    }

    /** {@return the sample rate the old rate names}: itself above 1; 1 named a level ({@code all}), not a rate */
    static int legacySample(int allocSiteSample) {
        return allocSiteSample > 1 ? allocSiteSample : LeakDetection.DEFAULT_SAMPLE;
    }

    /**
     * {@return whether any creation site is recorded}: whether {@link #leakDetection()} is not {@code OFF}
     *
     * @deprecated use {@link #leakDetection()}
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    public boolean allocSites() {
        return leakDetection != LeakDetection.OFF;
    }

    /**
     * {@return one in how many allocations walks its stack}: {@link #leakDetectionSample()} at
     * {@code SAMPLED}, else 1
     *
     * @deprecated use {@link #leakDetection()} and {@link #leakDetectionSample()}
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    public int allocSiteSample() {
        return leakDetection == LeakDetection.SAMPLED ? leakDetectionSample : 1;
    }

    /** {@return the options the system properties and environment give, with a fresh {@link Telemetry}} */
    public static GpuOptions fromEnvironment() {
        return new GpuBuilder().options();
    }
}
