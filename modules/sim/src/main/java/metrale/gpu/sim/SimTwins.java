package metrale.gpu.sim;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A table of {@link SimKernel} twins for the runtimes given it, so tests that run in parallel do
 * not share twins. Pass it with {@code GpuBuilder.backendOption(SimOptions.TWINS, twins)}; a runtime
 * given one looks a twin up here first, then in the process-wide {@link SimKernels} table, which
 * stays the default. Thread-safe.
 *
 * <p>As with {@link SimKernels}, {@code cuModuleGetFunction} takes the twin registered at that
 * moment; a function handle keeps it even if the table changes later.
 */
public final class SimTwins {

    private final Map<String, SimKernel> kernels = new ConcurrentHashMap<>();

    /** Creates an empty table. */
    public SimTwins() {
    }

    /**
     * Registers (or replaces) the twin of {@code module::func} in this table.
     *
     * @param module the module's name, as {@code Gpu.loadModule(name, image)} loads it
     * @param func   the function's (mangled) name, as the PTX {@code .entry} spells it
     * @param kernel the twin
     * @return this
     * @throws NullPointerException     if an argument is {@code null}
     * @throws IllegalArgumentException if a name is empty or contains {@code ::}
     */
    public SimTwins register(String module, String func, SimKernel kernel) {
        Objects.requireNonNull(kernel, "kernel");
        kernels.put(SimKernels.key(module, func), kernel);
        return this;
    }

    /**
     * Removes the twin of {@code module::func} from this table; absent is fine.
     *
     * @param module the module's name
     * @param func   the function's name
     */
    public void unregister(String module, String func) {
        kernels.remove(SimKernels.key(module, func));
    }

    /**
     * {@return the twin registered in this table for {@code module::func}, if any}
     *
     * @param module the module's name
     * @param func   the function's name
     */
    public Optional<SimKernel> lookup(String module, String func) {
        return Optional.ofNullable(kernels.get(SimKernels.key(module, func)));
    }

    @Override
    public String toString() {
        return "SimTwins" + new TreeSet<>(kernels.keySet());
    }
}
