// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimKernel;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimTwins;
import metrale.gpu.spi.Driver;

/**
 * A context's loaded modules and their functions, each bound to the Java twin that runs it, and
 * the rules a launch's function, configuration and arguments obey ({@code cuModuleGetFunction},
 * {@code cuFuncSetAttribute}, {@code cuLaunchKernel}; sm_90's limits). The device calls these
 * doors under its lock; not thread-safe on its own.
 */
final class SimModules {

    /** The most dynamic shared memory a function may opt in to, in bytes (sm_90). */
    static final int MAX_SHARED_OPTIN = 232448;
    private static final int MAX_BLOCK_THREADS = 1024;
    private static final int MAX_GRID_YZ = 65535;

    /** This runtime's twin table, looked in before {@link SimKernels}; {@code null} when it has none. */
    private final SimTwins twins;
    /** Whether twins run, or the PTX, or both to compare ({@code sim.twins}). */
    private final metrale.gpu.sim.SimTwinMode mode;
    /** Whether the PTX engine runs kernels compiled to JVM bytecode ({@code sim.ptx=compiled}) or interpreted. */
    private final boolean ptxCompiled;
    private final Map<Long, SimModule> modules = new HashMap<>();
    private final Map<Long, SimFunction> functions = new HashMap<>();

    SimModules(SimTwins twins, metrale.gpu.sim.SimTwinMode mode, boolean ptxCompiled) {
        this.twins = twins;
        this.mode = mode;
        this.ptxCompiled = ptxCompiled;
    }

    /** {@code cuModuleLoadData}: {@return the module's handle} */
    long load(String name, byte[] image, String op) {
        if (name == null || name.isEmpty() || name.contains("::")) {
            throw err(CudaError.INVALID_VALUE, op, "name=" + name + ": a module needs a non-empty name without '::'");
        }
        ModuleImage img = ModuleImage.parse(name, image);
        long h = Ids.handle();
        modules.put(h, new SimModule(h, name, img.kind(), img.entries(), img.params(), img.ptx(), img.ptxProblem()));
        return h;
    }

    /** {@code cuModuleUnload}: its functions stay in the table, refused as unloaded. */
    void unload(long module, String op) {
        SimModule m = modules.remove(module);
        if (m == null) {
            throw err(CudaError.INVALID_HANDLE, op, "module=" + hex(module) + ": not a loaded module");
        }
        m.loaded = false;
    }

    /** {@code cuModuleGetFunction}: {@return the function's handle, the same for the same name, bound to the twin found now} */
    long getFunction(long module, String func, String op) {
        SimModule m = modules.get(module);
        if (m == null) {
            throw err(CudaError.INVALID_HANDLE, op, "module=" + hex(module) + ", func=" + func
                    + ": not a loaded module (never loaded, or unloaded)");
        }
        String d = m + ", func=" + func;
        if (func == null || func.isEmpty()) {
            // An H200 answers INVALID_VALUE for an empty name, not NOT_FOUND.
            throw err(CudaError.INVALID_VALUE, op, d + ": the function needs a name");
        }
        if (m.entries != null && !m.entries.contains(func)) {
            throw err(CudaError.NOT_FOUND, op, d + ": the module's PTX has no '.entry " + func + "' (entries: "
                    + new TreeSet<>(m.entries) + ")");
        }
        SimKernel k = kernelFor(m, func, d, op);
        SimFunction f = m.functions.get(func);
        if (f == null) {
            f = new SimFunction(Ids.handle(), m, func, k);
            m.functions.put(func, f);
            functions.put(f.handle, f);
        } else {
            f.kernel = k;
        }
        return f.handle;
    }

    /** {@code cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)}: up to {@value #MAX_SHARED_OPTIN}. */
    void setMaxDynamicShared(long func, int bytes, String op) {
        SimFunction f = function(func, op, null);
        if (bytes < 0 || bytes > MAX_SHARED_OPTIN) {
            throw err(CudaError.INVALID_VALUE, op, f.name + ": MAX_DYNAMIC_SHARED_SIZE_BYTES=" + bytes
                    + " is outside [0, " + MAX_SHARED_OPTIN + "]");
        }
        f.maxDynamicShared = bytes;
    }

    /**
     * {@return the function a launch names, of a loaded module} A bad one is {@code INVALID_HANDLE},
     * invalidating the capture of {@code s} (the launch's stream, or {@code null}).
     */
    SimFunction function(long h, String op, SimStream s) {
        SimFunction f = h == 0 ? null : functions.get(h);
        if (f == null) {
            throw CaptureRules.bad(s, CudaError.INVALID_HANDLE, op, "func=" + hex(h) + ": "
                    + (h == 0 ? "NULL" : "not a function from cuModuleGetFunction"));
        }
        if (!f.module.loaded) {
            throw CaptureRules.bad(s, CudaError.INVALID_HANDLE, op, "func=" + f.name + ": its module was unloaded");
        }
        return f;
    }

    /** {@return the function {@code h} of this context, loaded or not, or {@code null}: a node update checks it itself} */
    SimFunction find(long h) {
        return h == 0 ? null : functions.get(h);
    }

    /**
     * {@return the checked kernel work of a launch or a kernel node update}
     *
     * @param extents the runtime's allocations, for the kernel's reach, or {@code null}
     * @param s       the launch's stream, whose capture a bad launch invalidates, or {@code null}
     */
    Works.Kernel kernelWork(SimFunction f, LaunchConfig config, KernelArgs args, Driver.Extents extents, String op,
                            SimStream s) {
        if (config == null) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, f.name + ": no launch configuration");
        }
        String problem = configProblem(config, f.maxDynamicShared);
        if (problem != null) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, f.name + " " + config + (s == null ? "" : " on " + s) + ": " + problem);
        }
        if (args == null || args.isClosed()) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, f.name + ": kernelParams " + (args == null ? "is null" : "is closed"));
        }
        if (f.params != null) {
            String mismatch = PtxParams.mismatch(f.name, f.params, args);
            if (mismatch != null) {
                throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, mismatch);
            }
        }
        int n = args.count();
        long[] words = new long[n];
        int[] sizes = new int[n];
        byte[][] wide = new byte[n][];
        for (int i = 0; i < n; i++) {
            sizes[i] = args.size(i);
            words[i] = args.word(i);
            if (sizes[i] > 8) {
                wide[i] = args.getBytes(i);
            }
        }
        return new Works.Kernel(f.name, f.kernel, config.grid(), config.block(), config.sharedMemBytes(),
                words, wide, sizes, Works.Kernel.reachOf(extents, words));
    }

    int count() {
        return modules.size();
    }

    void clear() {
        modules.clear();
        functions.clear();
    }

    /**
     * {@return what runs {@code func} of {@code m}: its twin, its PTX through the engine, or both
     * compared, as {@code sim.twins} says} A kernel neither can run is {@code NOT_FOUND}; one whose
     * PTX the engine does not implement, with no twin, is {@code NOT_SUPPORTED} naming the instruction.
     */
    private SimKernel kernelFor(SimModule m, String func, String d, String op) {
        SimKernel twin = mode == metrale.gpu.sim.SimTwinMode.OFF || func.contains("::") ? null : twin(m.name, func);
        metrale.gpu.sim.internal.ptx.PtxFunction pf = m.ptx == null ? null : m.ptx.function(func);
        PtxKernel ptx = null;
        if (pf != null && pf.isEntry() && pf.unsupported() == null) {
            ptx = m.ptxKernels.computeIfAbsent(func, n -> new PtxKernel(m.ptx, pf, m.name + "::" + n, ptxCompiled));
        }
        if (twin != null && ptx != null && mode == metrale.gpu.sim.SimTwinMode.VERIFY) {
            return new VerifyingKernel(twin, ptx);
        }
        if (twin != null) {
            return twin;
        }
        if (ptx != null) {
            return ptx;
        }
        if (pf != null && pf.unsupported() != null) {
            throw err(CudaError.NOT_SUPPORTED, op, d + ": no twin is registered" + (mode == metrale.gpu.sim.SimTwinMode.OFF
                    ? " (sim.twins=off)" : "") + " and the simulator's PTX engine cannot run the kernel: " + pf.unsupported());
        }
        String why = m.ptxProblem != null ? m.ptxProblem
                : m.ptx == null ? "the module is a " + m.kind + ", not PTX the simulator can run" : "no '.entry " + func + "'";
        if (mode == metrale.gpu.sim.SimTwinMode.OFF) {
            throw err(CudaError.NOT_FOUND, op, d + ": sim.twins=off and " + why);
        }
        throw err(CudaError.NOT_FOUND, op, d + ": no SimKernel is registered for '" + m.name + "::" + func
                + "'" + (twins == null ? "" : " in this runtime's " + twins + " nor in SimKernels")
                + " and " + why + "; register its Java twin with " + (twins == null ? "SimKernels" : "SimTwins")
                + ".register(\"" + m.name + "\", \"" + func + "\", launch -> ...) before looking it up, or load its PTX");
    }

    /** {@return the twin of {@code module::func}: this runtime's table first, then the process-wide one} */
    private SimKernel twin(String module, String func) {
        if (twins != null) {
            SimKernel k = twins.lookup(module, func).orElse(null);
            if (k != null) {
                return k;
            }
        }
        return SimKernels.lookup(module, func).orElse(null);
    }

    /** {@return why {@code cuLaunchKernel} rejects the configuration, or {@code null}} */
    private static String configProblem(LaunchConfig c, int maxShared) {
        Dim3 b = c.block();
        Dim3 g = c.grid();
        if (b.x() <= 0 || b.y() <= 0 || b.z() <= 0) {
            return "blockDim " + b + " has a dimension below 1";
        }
        if (b.x() > MAX_BLOCK_THREADS || b.y() > MAX_BLOCK_THREADS) {
            return "blockDim " + b + ": x and y must be at most " + MAX_BLOCK_THREADS;
        }
        if (b.z() > 64) {
            return "blockDim.z=" + b.z() + " exceeds 64";
        }
        if (b.count() > MAX_BLOCK_THREADS) {
            return "blockDim " + b + " has " + b.count() + " threads; a block has at most " + MAX_BLOCK_THREADS;
        }
        if (g.x() <= 0 || g.y() <= 0 || g.z() <= 0) {
            return "gridDim " + g + " has a dimension below 1 (or gridDim.x of 2^31 or more)";
        }
        if (g.y() > MAX_GRID_YZ || g.z() > MAX_GRID_YZ) {
            return "gridDim " + g + ": y and z must be at most " + MAX_GRID_YZ;
        }
        int smem = c.sharedMemBytes();
        if (smem < 0) {
            return "dynamic shared memory " + smem + " is negative";
        }
        if (smem > maxShared) {
            return "dynamic shared memory " + smem + " bytes exceeds the function's limit of " + maxShared + " bytes"
                    + (maxShared == SimFunction.DEFAULT_MAX_DYNAMIC_SHARED
                    ? " (opt in with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES), up to " + MAX_SHARED_OPTIN + ")"
                    : " set with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
        }
        return null;
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
