package metrale.gpu.sim;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import metrale.gpu.sim.internal.ModuleImage;

/**
 * The process-wide registry of {@link SimKernel}s, keyed by {@code module::func}. Thread-safe.
 *
 * <p>A simulated {@code cuModuleGetFunction(module, func)} finds the kernel registered under the
 * module's load name and {@code func} at that moment; the function handle keeps that kernel even if
 * the registration changes later.
 */
public final class SimKernels {

    private static final Map<String, SimKernel> KERNELS = new ConcurrentHashMap<>();

    private SimKernels() {
    }

    /**
     * Registers (or replaces) the twin of {@code module::func}.
     *
     * @param module the module's name, as {@code Gpu.loadModule(name, image)} loads it
     * @param func   the function's (mangled) name, as the PTX {@code .entry} spells it
     * @param kernel the twin
     * @throws NullPointerException     if an argument is {@code null}
     * @throws IllegalArgumentException if a name is empty or contains {@code ::}
     */
    public static void register(String module, String func, SimKernel kernel) {
        Objects.requireNonNull(kernel, "kernel");
        KERNELS.put(key(module, func), kernel);
    }

    /**
     * Removes the twin of {@code module::func}; absent is fine.
     *
     * @param module the module's name
     * @param func   the function's name
     */
    public static void unregister(String module, String func) {
        KERNELS.remove(key(module, func));
    }

    /**
     * {@return a module image the simulator accepts for {@code module}, for apps with no PTX}
     * Loading it under another name is {@code INVALID_IMAGE}.
     *
     * @param module the module's name
     */
    public static byte[] image(String module) {
        checkName("module", module);
        return (ModuleImage.IMAGE_MAGIC + "module=" + module + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@return the twin registered for {@code module::func}, if any}
     *
     * @param module the module's name
     * @param func   the function's name
     */
    public static Optional<SimKernel> lookup(String module, String func) {
        return Optional.ofNullable(KERNELS.get(key(module, func)));
    }

    static String key(String module, String func) {
        checkName("module", module);
        checkName("func", func);
        return module + "::" + func;
    }

    private static void checkName(String what, String name) {
        Objects.requireNonNull(name, what);
        if (name.isEmpty() || name.contains("::")) {
            throw new IllegalArgumentException(what + " name '" + name + "' must be non-empty and must not contain '::'");
        }
    }
}
