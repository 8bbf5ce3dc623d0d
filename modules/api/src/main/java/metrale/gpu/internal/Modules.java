// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import metrale.gpu.KernelRegistry;

/**
 * Loaded modules by name, and the functions looked up in each with the handle issued for each.
 * Thread-safe: one lock, never held across a driver call.
 *
 * <p>Invariant: a function handle is issued only while its module is current under its name, so
 * once {@link #put} has replaced a module and its handles were removed from the function table,
 * no lookup can issue a handle into it again.
 */
final class Modules {

    /** A loaded module: its driver handle and the functions resolved in it, in lookup order, with their handles. */
    static final class Module {
        final String name;
        final long handle;
        final LinkedHashMap<String, Long> functions = new LinkedHashMap<>();
        boolean retired;

        Module(String name, long handle) {
            this.name = name;
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

    /**
     * Binds {@code name} to a new module; the one it replaces is retired, its handles are
     * removed from {@code functions}.
     *
     * @return the module it replaces, or {@code null}
     */
    Module put(String name, long handle, HandleTable functions) {
        synchronized (lock) {
            Module old = byName.put(name, new Module(name, handle));
            if (old != null) {
                retire(old, functions);
            }
            return old;
        }
    }

    private static void retire(Module m, HandleTable functions) {
        m.retired = true;
        for (long id : m.functions.values()) {
            functions.remove(id);
        }
    }

    /**
     * {@return the handle of {@code func} in {@code m}}: the one issued before, or a new one for
     * the driver function {@code raw}; {@code 0} when {@code m} was replaced meanwhile.
     */
    long resolved(Module m, String func, long raw, HandleTable functions) {
        synchronized (lock) {
            if (m.retired) {
                return 0;
            }
            Long id = m.functions.get(func);
            if (id == null) {
                id = functions.add(raw, m);
                m.functions.put(func, id);
            }
            return id;
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
            byName.forEach((n, m) -> out.put(n, List.copyOf(m.functions.keySet())));
        }
        return new KernelRegistry(out);
    }

    /** Retires every module. {@return their driver handles} */
    List<Long> drain(HandleTable functions) {
        List<Long> out = new ArrayList<>();
        synchronized (lock) {
            for (Module m : byName.values()) {
                retire(m, functions);
                out.add(m.handle);
            }
            byName.clear();
        }
        return out;
    }
}
