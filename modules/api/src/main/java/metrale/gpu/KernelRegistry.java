// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.List;
import java.util.Map;

/**
 * A snapshot of the modules a {@link Gpu} has loaded and the functions looked up in each, for
 * tools and tests.
 *
 * @param modules module name to the names of the functions resolved in it so far, in lookup order
 */
public record KernelRegistry(Map<String, List<String>> modules) {

    /** Makes the snapshot immutable. */
    public KernelRegistry {
        modules = Map.copyOf(modules);
    }

    /**
     * {@return whether a module of that name is loaded}
     *
     * @param module the module name
     */
    public boolean hasModule(String module) {
        return modules.containsKey(module);
    }
}
