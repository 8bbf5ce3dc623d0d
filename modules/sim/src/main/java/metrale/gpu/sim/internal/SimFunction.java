package metrale.gpu.sim.internal;

import java.util.List;
import metrale.gpu.sim.SimKernel;

/** A function of a loaded module and the twin that runs it. */
final class SimFunction {

    /** Dynamic shared memory a launch may use without an opt-in. */
    static final int DEFAULT_MAX_DYNAMIC_SHARED = 48 * 1024;

    final long handle;
    final SimModule module;
    final String func;
    final String name;
    SimKernel kernel;
    /** The PTX parameter list launches are checked against; {@code null} when the image has none. */
    final List<PtxParams.Param> params;
    int maxDynamicShared = DEFAULT_MAX_DYNAMIC_SHARED;

    SimFunction(long handle, SimModule module, String func, SimKernel kernel) {
        this.handle = handle;
        this.module = module;
        this.func = func;
        this.name = module.name + "::" + func;
        this.kernel = kernel;
        this.params = module.params == null ? null : module.params.get(func);
    }
}
