// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import metrale.gpu.sim.SimTwins;

/**
 * An application's simulator twins, registered in the table of one test runtime
 * ({@code @GpuTest(twins = MyTwins.class)}, {@link TestGpus.Builder#twins}), so tests running in
 * parallel never share or replace each other's twins. An implementation has a no-argument
 * constructor.
 *
 * <pre>{@code
 * public final class SaxpyTwins implements Twins {
 *     public void register(SimTwins twins) {
 *         twins.register("saxpy", "saxpy", SaxpyTwins::saxpy);
 *     }
 * }
 * }</pre>
 */
@FunctionalInterface
public interface Twins {

    /**
     * Registers the twins.
     *
     * @param twins the runtime's table
     */
    void register(SimTwins twins);
}
