// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A loaded module: its load name, its image kind, the PTX entries it declares, and its functions. */
final class SimModule {

    final long handle;
    final String name;
    final String kind;
    /** The {@code .entry} names of a PTX image; {@code null} when the image does not list them. */
    final Set<String> entries;
    /** Each PTX entry's parameters; {@code null} when the image does not list them. */
    final Map<String, List<PtxParams.Param>> params;
    final Map<String, SimFunction> functions = new HashMap<>();
    /** The module as the PTX engine runs it, or {@code null} (not PTX, or {@link #ptxProblem}). */
    final metrale.gpu.sim.internal.ptx.PtxModule ptx;
    /** Why the engine could not read the PTX, or {@code null}. */
    final String ptxProblem;
    /** The engine's kernels of this module, made once per entry. */
    final Map<String, PtxKernel> ptxKernels = new HashMap<>();
    boolean loaded = true;

    SimModule(long handle, String name, String kind, Set<String> entries, Map<String, List<PtxParams.Param>> params,
              metrale.gpu.sim.internal.ptx.PtxModule ptx, String ptxProblem) {
        this.handle = handle;
        this.name = name;
        this.kind = kind;
        this.entries = entries;
        this.params = params;
        this.ptx = ptx;
        this.ptxProblem = ptxProblem;
    }

    @Override
    public String toString() {
        return "module '" + name + "' (" + kind + ", 0x" + Long.toHexString(handle) + ")";
    }
}
