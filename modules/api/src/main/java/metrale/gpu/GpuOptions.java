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
 * @param allocSites       record the caller's {@code file:line} for each allocation (a stack walk); off records {@code "?"}
 * @param checkPointers    check every pointer argument of a launch against live memory ({@code INVALID_VALUE}
 *                         naming the argument index when one is not); costs a lookup per pointer argument
 * @param telemetry        the telemetry instance the runtime reports to
 * @param backendOptions   options passed to the backend, e.g. {@code sim.capacity}
 * @param backendObjects   object options passed to the backend, e.g. {@code sim.twins}
 * @param allocator        what {@link Gpu#alloc(long)} uses: {@code driver} (a {@code cuMemAlloc} per
 *                         allocation), {@code caching} (the runtime's {@link MemoryPool}, on the
 *                         default stream) or {@code cuda} (the pool over CUDA's {@code cuMemAllocAsync});
 *                         {@link Gpu#pool()} is {@code cuda} when this is, else the caching pool
 * @param allocSiteSample  with sites on, walk the stack for one allocation or free in this many; the
 *                         others are named {@code "(unsampled: ...)"} in the ledger and reports; 1 walks every one
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
                         boolean d2hTrace, boolean timing, boolean allocSites, boolean checkPointers, Telemetry telemetry,
                         Map<String, String> backendOptions, Map<String, Object> backendObjects, String allocator,
                         int allocSiteSample, long quarantineBytes) {

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
        if (allocSiteSample < 1) {
            throw new IllegalArgumentException("allocSiteSample=" + allocSiteSample + " must be >= 1");
        }
        allocator = Setting.parseChoice(Setting.ALLOCATOR.what(), Objects.requireNonNull(allocator, "allocator"), ALLOCATORS);
        backendObjects = Map.copyOf(backendObjects);
        if (quarantineBytes < 0) {
            throw new IllegalArgumentException("quarantineBytes=" + quarantineBytes + " must be >= 0");
        }
    }

    /**
     * The options before the quarantine had a setting of its own: it is 64 MiB when red zones are
     * on, else off.
     *
     * @param backend         see the record
     * @param redZoneBytes    see the record
     * @param redZoneMinIndex see the record
     * @param debugSync       see the record
     * @param d2hTrace        see the record
     * @param timing          see the record
     * @param allocSites      see the record
     * @param checkPointers   see the record
     * @param telemetry       see the record
     * @param backendOptions  see the record
     * @param backendObjects  see the record
     * @param allocator       see the record
     * @param allocSiteSample see the record
     */
    public GpuOptions(String backend, long redZoneBytes, long redZoneMinIndex, boolean debugSync,
                      boolean d2hTrace, boolean timing, boolean allocSites, boolean checkPointers, Telemetry telemetry,
                      Map<String, String> backendOptions, Map<String, Object> backendObjects, String allocator,
                      int allocSiteSample) {
        this(backend, redZoneBytes, redZoneMinIndex, debugSync, d2hTrace, timing, allocSites, checkPointers, telemetry,
                backendOptions, backendObjects, allocator, allocSiteSample, redZoneBytes > 0 ? DEFAULT_QUARANTINE_BYTES : 0);
    }

    /** {@return the options the system properties and environment give, with a fresh {@link Telemetry}} */
    public static GpuOptions fromEnvironment() {
        return new GpuBuilder().options();
    }
}
