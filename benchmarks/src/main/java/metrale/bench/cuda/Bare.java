// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import metrale.gpu.Setting;

/**
 * The baselines' own binding of the few CUDA driver functions they call: downcall handles made
 * here with {@link Linker}, independent of the runtime's binding, each wrapper one
 * {@code invokeExact} and a status compare. No context is made current (the benchmarks' thread
 * already has the runtime's primary context current, since every runtime call binds it), nothing
 * is checked beyond the status, and out-parameters live in a segment allocated once.
 *
 * <p>Loading this class opens the library the settings table's {@link Setting#CUDA_LIBRARY} names
 * ({@code libcuda.so.1} unless {@code metrale.cuda.library} / {@code METRALE_CUDA_LIBRARY} say
 * otherwise), resolved as the runtime's binding resolves it; benchmarks reach it only after
 * {@link CudaFixture#open} found a driver, so a machine without one never loads it.
 */
public final class Bare {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIB = SymbolLookup.libraryLookup(
            Setting.CUDA_LIBRARY.text(null).orElseThrow(), Arena.global());

    private static MethodHandle handle(String name, MemoryLayout... args) {
        MemorySegment addr = LIB.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libcuda has no " + name));
        return LINKER.downcallHandle(addr, FunctionDescriptor.of(JAVA_INT, args));
    }

    private static final MethodHandle cuLaunchKernel = handle("cuLaunchKernel", JAVA_LONG,
            JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle cuGraphLaunch = handle("cuGraphLaunch", JAVA_LONG, JAVA_LONG);
    private static final MethodHandle cuMemAlloc_v2 = handle("cuMemAlloc_v2", ADDRESS, JAVA_LONG);
    private static final MethodHandle cuMemFree_v2 = handle("cuMemFree_v2", JAVA_LONG);
    private static final MethodHandle cuMemAllocAsync = handle("cuMemAllocAsync", ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle cuMemFreeAsync = handle("cuMemFreeAsync", JAVA_LONG, JAVA_LONG);
    private static final MethodHandle cuMemcpyHtoD_v2 = handle("cuMemcpyHtoD_v2", JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle cuMemcpyDtoH_v2 = handle("cuMemcpyDtoH_v2", ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle cuMemcpyDtoD_v2 = handle("cuMemcpyDtoD_v2", JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle cuStreamSynchronize = handle("cuStreamSynchronize", JAVA_LONG);
    private static final MethodHandle cuCtxSynchronize = handle("cuCtxSynchronize");
    private static final MethodHandle cuStreamBeginCapture_v2 = handle("cuStreamBeginCapture_v2", JAVA_LONG, JAVA_INT);
    private static final MethodHandle cuStreamEndCapture = handle("cuStreamEndCapture", JAVA_LONG, ADDRESS);
    private static final MethodHandle cuGraphInstantiateWithFlags = handle("cuGraphInstantiateWithFlags", ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle cuGraphExecDestroy = handle("cuGraphExecDestroy", JAVA_LONG);
    private static final MethodHandle cuGraphDestroy = handle("cuGraphDestroy", JAVA_LONG);
    private static final MethodHandle cuModuleLoadData = handle("cuModuleLoadData", ADDRESS, ADDRESS);
    private static final MethodHandle cuModuleGetFunction = handle("cuModuleGetFunction", ADDRESS, JAVA_LONG, ADDRESS);
    private static final MethodHandle cuModuleUnload = handle("cuModuleUnload", JAVA_LONG);
    private static final MethodHandle cuStreamCreate = handle("cuStreamCreate", ADDRESS, JAVA_INT);
    private static final MethodHandle cuStreamDestroy_v2 = handle("cuStreamDestroy_v2", JAVA_LONG);

    /** One out-parameter slot per thread that calls the allocating wrappers; allocated once. */
    private static final ThreadLocal<MemorySegment> OUT = ThreadLocal.withInitial(() -> Arena.global().allocate(JAVA_LONG));

    private Bare() {
    }

    private static void check(int st, String function) {
        if (st != 0) {
            throw new IllegalStateException(function + " failed with CUresult " + st);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    /**
     * {@code cuLaunchKernel(f, grid, block, smem, stream, params, NULL)}.
     *
     * @param f      the {@code CUfunction}
     * @param gx     grid x
     * @param gy     grid y
     * @param gz     grid z
     * @param bx     block x
     * @param by     block y
     * @param bz     block z
     * @param smem   dynamic shared memory, bytes
     * @param stream the {@code CUstream}
     * @param params the {@code void**} argument table
     */
    public static void launchKernel(long f, int gx, int gy, int gz, int bx, int by, int bz, int smem, long stream,
                                    MemorySegment params) {
        int st;
        try {
            st = (int) cuLaunchKernel.invokeExact(f, gx, gy, gz, bx, by, bz, smem, stream, params, MemorySegment.NULL);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuLaunchKernel");
    }

    /**
     * {@code cuGraphLaunch}.
     *
     * @param exec   the {@code CUgraphExec}
     * @param stream the {@code CUstream}
     */
    public static void graphLaunch(long exec, long stream) {
        int st;
        try {
            st = (int) cuGraphLaunch.invokeExact(exec, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuGraphLaunch");
    }

    /**
     * {@code cuMemAlloc_v2}.
     *
     * @param bytes the size
     * @return the device pointer
     */
    public static long memAlloc(long bytes) {
        MemorySegment out = OUT.get();
        int st;
        try {
            st = (int) cuMemAlloc_v2.invokeExact(out, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemAlloc_v2");
        return out.get(JAVA_LONG, 0);
    }

    /**
     * {@code cuMemFree_v2}.
     *
     * @param ptr the device pointer
     */
    public static void memFree(long ptr) {
        int st;
        try {
            st = (int) cuMemFree_v2.invokeExact(ptr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemFree_v2");
    }

    /**
     * {@code cuMemAllocAsync} from the device's default pool.
     *
     * @param bytes  the size
     * @param stream the {@code CUstream}
     * @return the device pointer
     */
    public static long memAllocAsync(long bytes, long stream) {
        MemorySegment out = OUT.get();
        int st;
        try {
            st = (int) cuMemAllocAsync.invokeExact(out, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemAllocAsync");
        return out.get(JAVA_LONG, 0);
    }

    /**
     * {@code cuMemFreeAsync}.
     *
     * @param ptr    the device pointer
     * @param stream the {@code CUstream}
     */
    public static void memFreeAsync(long ptr, long stream) {
        int st;
        try {
            st = (int) cuMemFreeAsync.invokeExact(ptr, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemFreeAsync");
    }

    /**
     * {@code cuMemcpyHtoD_v2}.
     *
     * @param dst   the device pointer
     * @param src   native host memory
     * @param bytes the size
     */
    public static void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyHtoD_v2.invokeExact(dst, src, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemcpyHtoD_v2");
    }

    /**
     * {@code cuMemcpyDtoH_v2}.
     *
     * @param dst   native host memory
     * @param src   the device pointer
     * @param bytes the size
     */
    public static void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyDtoH_v2.invokeExact(dst, src, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemcpyDtoH_v2");
    }

    /**
     * {@code cuMemcpyDtoD_v2} (asynchronous with respect to the host).
     *
     * @param dst   the destination device pointer
     * @param src   the source device pointer
     * @param bytes the size
     */
    public static void memcpyDtoD(long dst, long src, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyDtoD_v2.invokeExact(dst, src, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuMemcpyDtoD_v2");
    }

    /**
     * {@code cuStreamSynchronize}.
     *
     * @param stream the {@code CUstream}
     */
    public static void streamSynchronize(long stream) {
        int st;
        try {
            st = (int) cuStreamSynchronize.invokeExact(stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuStreamSynchronize");
    }

    /** {@code cuCtxSynchronize}. */
    public static void ctxSynchronize() {
        int st;
        try {
            st = (int) cuCtxSynchronize.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(st, "cuCtxSynchronize");
    }

    /**
     * Captures what {@code body} enqueues on {@code stream} ({@code CU_STREAM_CAPTURE_MODE_GLOBAL})
     * and instantiates it.
     *
     * @param stream the {@code CUstream} to capture
     * @param body   enqueues the work
     * @return {@code {CUgraph, CUgraphExec}}
     */
    public static long[] capture(long stream, Runnable body) {
        MemorySegment out = OUT.get();
        try {
            check((int) cuStreamBeginCapture_v2.invokeExact(stream, 0), "cuStreamBeginCapture_v2");
            body.run();
            check((int) cuStreamEndCapture.invokeExact(stream, out), "cuStreamEndCapture");
            long graph = out.get(JAVA_LONG, 0);
            check((int) cuGraphInstantiateWithFlags.invokeExact(out, graph, 0L), "cuGraphInstantiateWithFlags");
            return new long[] {graph, out.get(JAVA_LONG, 0)};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Loads a module image into the current context, outside any runtime.
     *
     * @param image PTX (NUL-terminated here), cubin or fatbin
     * @return the {@code CUmodule}
     */
    public static long moduleLoad(byte[] image) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment img = a.allocate(image.length + 1L);
            MemorySegment.copy(image, 0, img, JAVA_BYTE, 0, image.length);
            MemorySegment out = a.allocate(JAVA_LONG);
            check((int) cuModuleLoadData.invokeExact(out, img), "cuModuleLoadData");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@return the {@code CUfunction} {@code name} of {@code module}}
     *
     * @param module a {@code CUmodule} from {@link #moduleLoad}
     * @param name   the entry's name
     */
    public static long moduleGetFunction(long module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check((int) cuModuleGetFunction.invokeExact(out, module, a.allocateFrom(name)), "cuModuleGetFunction");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Unloads what {@link #moduleLoad} loaded.
     *
     * @param module the {@code CUmodule}
     */
    public static void moduleUnload(long module) {
        try {
            check((int) cuModuleUnload.invokeExact(module), "cuModuleUnload");
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@return a new {@code CUstream} of the current context, outside any runtime}
     *
     * @param flags {@code CU_STREAM_NON_BLOCKING} is 1
     */
    public static long streamCreate(int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check((int) cuStreamCreate.invokeExact(out, flags), "cuStreamCreate");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Destroys what {@link #streamCreate} made.
     *
     * @param stream the {@code CUstream}
     */
    public static void streamDestroy(long stream) {
        try {
            check((int) cuStreamDestroy_v2.invokeExact(stream), "cuStreamDestroy_v2");
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Destroys what {@link #capture} made.
     *
     * @param graphAndExec {@code {CUgraph, CUgraphExec}}
     */
    public static void destroyGraph(long[] graphAndExec) {
        try {
            check((int) cuGraphExecDestroy.invokeExact(graphAndExec[1]), "cuGraphExecDestroy");
            check((int) cuGraphDestroy.invokeExact(graphAndExec[0]), "cuGraphDestroy");
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
