// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A per-{@link Gpu} cache where higher layers keep resolved kernel handles and per-op state.
 * Every successful {@link Gpu#kernel} lookup publishes its handle here under
 * {@code module::func}. Thread-safe.
 */
public final class OpCache {

    private final Map<String, KernelHandle> kernels = new ConcurrentHashMap<>();
    private final Map<String, Object> values = new ConcurrentHashMap<>();

    /** Creates an empty cache. */
    public OpCache() {
    }

    /**
     * Records a resolved kernel handle; called by the runtime on each successful lookup.
     *
     * @param module the module name
     * @param func   the function name
     * @param handle the handle
     */
    public void publishKernel(String module, String func, KernelHandle handle) {
        kernels.put(module + "::" + func, handle);
    }

    /**
     * {@return the handle last published for {@code module::func}}
     *
     * @param module the module name
     * @param func   the function name
     */
    public Optional<KernelHandle> kernel(String module, String func) {
        return Optional.ofNullable(kernels.get(module + "::" + func));
    }

    /** {@return a snapshot of every published kernel, keyed {@code module::func}} */
    public Map<String, KernelHandle> kernels() {
        return Map.copyOf(kernels);
    }

    /**
     * {@return the value cached under {@code key}, computing it once if absent}
     *
     * @param key     the key
     * @param type    the value's type
     * @param compute makes the value when absent
     * @param <T>     the value's type
     */
    public <T> T computeIfAbsent(String key, Class<T> type, Function<String, ? extends T> compute) {
        return type.cast(values.computeIfAbsent(key, compute));
    }

    /**
     * {@return the value cached under {@code key}, if any and of that type}
     *
     * @param key  the key
     * @param type the value's type
     * @param <T>  the value's type
     */
    public <T> Optional<T> get(String key, Class<T> type) {
        Object v = values.get(key);
        return type.isInstance(v) ? Optional.of(type.cast(v)) : Optional.empty();
    }

    /**
     * Caches a value.
     *
     * @param key   the key
     * @param value the value; not {@code null}
     */
    public void put(String key, Object value) {
        values.put(key, value);
    }

    /** Drops every cached kernel and value. */
    public void clear() {
        kernels.clear();
        values.clear();
    }
}
