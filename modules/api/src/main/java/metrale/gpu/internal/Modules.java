package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import metrale.gpu.KernelRegistry;

/**
 * Loaded modules by name, and the functions looked up in each. Thread-safe: one lock, never held
 * across a driver call.
 */
final class Modules {

    /** A loaded module: its driver handle and the functions resolved in it, in lookup order. */
    static final class Module {
        final long handle;
        final LinkedHashSet<String> functions = new LinkedHashSet<>();
        final java.util.Set<Long> functionHandles = new java.util.HashSet<>();

        Module(long handle) {
            this.handle = handle;
        }
    }

    private final Object lock = new Object();
    private final LinkedHashMap<String, Module> byName = new LinkedHashMap<>();

    /** {@return the module loaded under {@code name}, or {@code null}} */
    Module get(String name) {
        synchronized (lock) {
            return byName.get(name);
        }
    }

    /** Binds {@code name} to a new module. {@return the module it replaces, or {@code null}} */
    Module put(String name, long handle) {
        synchronized (lock) {
            return byName.put(name, new Module(handle));
        }
    }

    /** Notes a successful lookup of {@code func} in {@code m}. */
    void resolved(Module m, String func, long handle) {
        synchronized (lock) {
            m.functions.add(func);
            m.functionHandles.add(handle);
        }
    }

    /** {@return the function handles resolved in {@code m}} */
    List<Long> functionHandles(Module m) {
        synchronized (lock) {
            return List.copyOf(m.functionHandles);
        }
    }

    /** {@return the loaded module names} */
    List<String> names() {
        synchronized (lock) {
            return List.copyOf(byName.keySet());
        }
    }

    /** {@return a snapshot of the modules and their resolved functions} */
    KernelRegistry registry() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        synchronized (lock) {
            byName.forEach((n, m) -> out.put(n, List.copyOf(m.functions)));
        }
        return new KernelRegistry(out);
    }

    /** Forgets every module. {@return their handles} */
    List<Long> drain() {
        List<Long> out = new ArrayList<>();
        synchronized (lock) {
            byName.values().forEach(m -> out.add(m.handle));
            byName.clear();
        }
        return out;
    }
}
