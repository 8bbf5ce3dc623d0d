package metrale.gpu;

import java.util.Map;
import java.util.Objects;
import metrale.telemetry.Telemetry;

/**
 * The options a {@link Gpu} is opened with. Build them with {@link GpuBuilder}; each has a system
 * property and an environment variable, read by {@link #fromEnvironment()} (a builder call wins
 * over the property, the property over the variable).
 *
 * <table class="striped">
 * <caption>Options</caption>
 * <tr><th>option</th><th>system property</th><th>environment</th><th>default</th></tr>
 * <tr><td>{@link #backend()}</td><td>{@code metrale.backend}</td><td>{@code METRALE_BACKEND}</td><td>CUDA if a driver loads, else {@code sim}</td></tr>
 * <tr><td>{@link #redZoneBytes()}</td><td>{@code metrale.redzone}</td><td>{@code METRALE_REDZONE}</td><td>0 (off)</td></tr>
 * <tr><td>{@link #redZoneMinIndex()}</td><td>{@code metrale.redzone.minIdx}</td><td>{@code METRALE_REDZONE_MIN_IDX}</td><td>0</td></tr>
 * <tr><td>{@link #debugSync()}</td><td>{@code metrale.debugSync}</td><td>{@code METRALE_DEBUG_SYNC}</td><td>false</td></tr>
 * <tr><td>{@link #d2hTrace()}</td><td>{@code metrale.d2h.trace}</td><td>{@code METRALE_D2H_TRACE}</td><td>false</td></tr>
 * <tr><td>{@link #timing()}</td><td>{@code metrale.timing}</td><td>{@code METRALE_TIMING}</td><td>false</td></tr>
 * <tr><td>{@link #allocSites()}</td><td>{@code metrale.allocSites}</td><td>{@code METRALE_ALLOC_SITES}</td><td>true</td></tr>
 * </table>
 *
 * @param backend          the backend's name, or {@code null} to choose automatically
 * @param redZoneBytes     bytes of red zone after each buffer; 0 turns red zones off
 * @param redZoneMinIndex  the first creation index that gets a red zone
 * @param debugSync        synchronize the stream after every launch so a fault names its kernel
 * @param d2hTrace         collect the call sites of device-to-host copies
 * @param timing           time each launch (synchronizing its stream) and aggregate per kernel
 * @param allocSites       record the caller's {@code file:line} for each allocation (a stack walk); off records {@code "?"}
 * @param telemetry        the telemetry instance the runtime reports to
 * @param backendOptions   options passed to the backend, e.g. {@code sim.capacity}
 * @param backendObjects   object options passed to the backend, e.g. {@code sim.twins}
 */
public record GpuOptions(String backend, long redZoneBytes, long redZoneMinIndex, boolean debugSync,
                         boolean d2hTrace, boolean timing, boolean allocSites, Telemetry telemetry,
                         Map<String, String> backendOptions, Map<String, Object> backendObjects) {

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
        backendObjects = Map.copyOf(backendObjects);
    }

    /**
     * Options with string backend options only.
     *
     * @param backend         the backend's name, or {@code null} to choose automatically
     * @param redZoneBytes    bytes of red zone after each buffer
     * @param redZoneMinIndex the first creation index that gets a red zone
     * @param debugSync       synchronize the stream after every launch
     * @param d2hTrace        collect the call sites of device-to-host copies
     * @param timing          time each launch
     * @param allocSites      record each allocation's call site
     * @param telemetry       the telemetry instance
     * @param backendOptions  options passed to the backend
     */
    public GpuOptions(String backend, long redZoneBytes, long redZoneMinIndex, boolean debugSync, boolean d2hTrace,
                      boolean timing, boolean allocSites, Telemetry telemetry, Map<String, String> backendOptions) {
        this(backend, redZoneBytes, redZoneMinIndex, debugSync, d2hTrace, timing, allocSites, telemetry,
                backendOptions, Map.of());
    }

    /** {@return the options the system properties and environment give, with a fresh {@link Telemetry}} */
    public static GpuOptions fromEnvironment() {
        return new GpuBuilder().options();
    }
}
