// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * The CUDA driver API ({@code libcuda}): every function this backend calls, declared once, and
 * the one place a {@code CUresult} becomes a {@link GpuException}.
 *
 * <p><b>Loading.</b> The library named by {@systemProperty metrale.cuda.library} (default
 * {@code libcuda.so.1}) is opened in this class's static initializer, and every handle is a
 * {@code static final} resolved there. A missing library or required symbol fails the
 * initializer; callers reach this class only through {@link CudaBackend}, whose holder turns that
 * failure into an "unavailable" reason. A missing optional symbol leaves its handle {@code null}
 * behind a {@code HAS_...} capability flag; its wrapper then throws {@code NOT_SUPPORTED}.
 *
 * <p><b>Calls.</b> Each wrapper calls {@code invokeExact} with the exact types, checks the status
 * and throws through {@link #error}; no raw status leaves this class except as a
 * {@link CudaError}. Opaque handles ({@code CUcontext}, {@code CUstream}, {@code CUevent},
 * {@code CUmodule}, {@code CUfunction}, {@code CUgraph}, {@code CUgraphExec}) and
 * {@code CUdeviceptr} travel as {@code long}: on the LP64 ABIs CUDA supports, a pointer and a
 * 64-bit integer are passed the same way, and this keeps {@code MemorySegment} wrappers off the hot
 * path. {@code unsigned int} travels as {@code int} (same bits). Out-parameters live in a confined
 * {@link Arena} opened for the call: per-thread buffers would be per-virtual-thread allocations
 * anyway, and every call with an out-parameter costs microseconds in the driver.
 *
 * <p><b>Context.</b> These wrappers do not make a context current; {@link CudaDevice} does before
 * each call.
 */
public final class CudaLib {

    /** The system property naming the driver library. */
    public static final String LIBRARY_PROPERTY = "metrale.cuda.library";
    /** The library opened when {@value #LIBRARY_PROPERTY} is not set. */
    public static final String DEFAULT_LIBRARY = "libcuda.so.1";

    /** {@code CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT}. */
    static final int ATTR_MULTIPROCESSOR_COUNT = 16;
    /** {@code CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR}. */
    static final int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
    /** {@code CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR}. */
    static final int ATTR_COMPUTE_CAPABILITY_MINOR = 76;
    /** {@code CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN}. */
    static final int ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
    /** {@code CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES}. */
    static final int FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
    /** {@code CU_MEMORYTYPE_DEVICE}. */
    static final int MEMORYTYPE_DEVICE = 2;

    private static final int SUCCESS = 0;
    private static final int NOT_READY = 600;

    private static final Linker LINKER = Linker.nativeLinker();
    /** The library's name as opened, for messages. */
    static final String LIBRARY = metrale.gpu.Setting.CUDA_LIBRARY.text(null).orElse(DEFAULT_LIBRARY);
    // The driver stays loaded for the life of the process: CUDA cannot be unloaded safely while
    // any context exists, so the global arena is the library's true lifetime.
    private static final SymbolLookup LIB = SymbolLookup.libraryLookup(LIBRARY, Arena.global());

    private CudaLib() {
    }

    private static MethodHandle required(String name, FunctionDescriptor fd) {
        MemorySegment addr = LIB.find(name).orElseThrow(() -> new UnsatisfiedLinkError(
                LIBRARY + " has no symbol " + name + ": the CUDA driver is too old or not NVIDIA's"));
        return LINKER.downcallHandle(addr, fd);
    }

    private static MethodHandle optional(String name, FunctionDescriptor fd) {
        Optional<MemorySegment> addr = LIB.find(name);
        return addr.map(a -> LINKER.downcallHandle(a, fd)).orElse(null);
    }

    private static String firstPresent(String... names) {
        for (String n : names) {
            if (LIB.find(n).isPresent()) {
                return n;
            }
        }
        throw new UnsatisfiedLinkError(LIBRARY + " has none of " + String.join(", ", names));
    }

    private static FunctionDescriptor fd(MemoryLayout... args) {
        return FunctionDescriptor.of(JAVA_INT, args);
    }

    // ---- handles, in cuda.h order --------------------------------------------------------------

    private static final MethodHandle cuGetErrorName = required("cuGetErrorName", fd(JAVA_INT, ADDRESS));
    private static final MethodHandle cuGetErrorString = required("cuGetErrorString", fd(JAVA_INT, ADDRESS));
    private static final MethodHandle cuInit = required("cuInit", fd(JAVA_INT));
    private static final MethodHandle cuDriverGetVersion = required("cuDriverGetVersion", fd(ADDRESS));
    private static final MethodHandle cuDeviceGet = required("cuDeviceGet", fd(ADDRESS, JAVA_INT));
    private static final MethodHandle cuDeviceGetCount = required("cuDeviceGetCount", fd(ADDRESS));
    private static final MethodHandle cuDeviceGetName = required("cuDeviceGetName", fd(ADDRESS, JAVA_INT, JAVA_INT));
    private static final MethodHandle cuDeviceGetAttribute = required("cuDeviceGetAttribute", fd(ADDRESS, JAVA_INT, JAVA_INT));
    private static final MethodHandle cuDeviceTotalMem_v2 = required("cuDeviceTotalMem_v2", fd(ADDRESS, JAVA_INT));
    private static final MethodHandle cuDeviceGetPCIBusId = required("cuDeviceGetPCIBusId", fd(ADDRESS, JAVA_INT, JAVA_INT));
    private static final MethodHandle cuDeviceCanAccessPeer = required("cuDeviceCanAccessPeer", fd(ADDRESS, JAVA_INT, JAVA_INT));
    private static final MethodHandle cuCtxEnablePeerAccess = required("cuCtxEnablePeerAccess", fd(JAVA_LONG, JAVA_INT));
    private static final MethodHandle cuMemcpyPeer = required("cuMemcpyPeer", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemcpyPeerAsync = required("cuMemcpyPeerAsync", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuDevicePrimaryCtxRetain = required("cuDevicePrimaryCtxRetain", fd(ADDRESS, JAVA_INT));
    private static final MethodHandle cuDevicePrimaryCtxRelease_v2 = required("cuDevicePrimaryCtxRelease_v2", fd(JAVA_INT));
    private static final MethodHandle cuCtxSetCurrent = required("cuCtxSetCurrent", fd(JAVA_LONG));
    private static final MethodHandle cuCtxGetCurrent = required("cuCtxGetCurrent", fd(ADDRESS));
    private static final MethodHandle cuCtxSynchronize = required("cuCtxSynchronize", fd());
    private static final MethodHandle cuMemGetInfo_v2 = required("cuMemGetInfo_v2", fd(ADDRESS, ADDRESS));
    private static final MethodHandle cuMemAlloc_v2 = required("cuMemAlloc_v2", fd(ADDRESS, JAVA_LONG));
    private static final MethodHandle cuMemFree_v2 = required("cuMemFree_v2", fd(JAVA_LONG));
    private static final MethodHandle cuMemAllocAsync = optional("cuMemAllocAsync", fd(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemFreeAsync = optional("cuMemFreeAsync", fd(JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuDeviceGetDefaultMemPool = optional("cuDeviceGetDefaultMemPool", fd(ADDRESS, JAVA_INT));
    private static final MethodHandle cuMemPoolTrimTo = optional("cuMemPoolTrimTo", fd(JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemPoolGetAttribute = optional("cuMemPoolGetAttribute", fd(JAVA_LONG, JAVA_INT, ADDRESS));
    private static final MethodHandle cuMemPoolSetAttribute = optional("cuMemPoolSetAttribute", fd(JAVA_LONG, JAVA_INT, ADDRESS));
    private static final MethodHandle cuMemAllocManaged = required("cuMemAllocManaged", fd(ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle cuMemHostAlloc = required("cuMemHostAlloc", fd(ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle cuMemFreeHost = required("cuMemFreeHost", fd(JAVA_LONG));
    private static final MethodHandle cuMemHostGetDevicePointer_v2 = required("cuMemHostGetDevicePointer_v2", fd(ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle cuMemcpyHtoD_v2 = required("cuMemcpyHtoD_v2", fd(JAVA_LONG, ADDRESS, JAVA_LONG));
    private static final MethodHandle cuMemcpyDtoH_v2 = required("cuMemcpyDtoH_v2", fd(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemcpyDtoD_v2 = required("cuMemcpyDtoD_v2", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemcpyHtoDAsync_v2 = required("cuMemcpyHtoDAsync_v2", fd(JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemcpyDtoHAsync_v2 = required("cuMemcpyDtoHAsync_v2", fd(ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemcpyDtoDAsync_v2 = required("cuMemcpyDtoDAsync_v2", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuMemcpy2DAsync_v2 = required("cuMemcpy2DAsync_v2", fd(ADDRESS, JAVA_LONG));
    private static final MethodHandle cuMemsetD8_v2 = required("cuMemsetD8_v2", fd(JAVA_LONG, JAVA_BYTE, JAVA_LONG));
    private static final MethodHandle cuMemsetD8Async = required("cuMemsetD8Async", fd(JAVA_LONG, JAVA_BYTE, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuStreamCreate = required("cuStreamCreate", fd(ADDRESS, JAVA_INT));
    private static final MethodHandle cuStreamWaitEvent = required("cuStreamWaitEvent", fd(JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle cuStreamQuery = required("cuStreamQuery", fd(JAVA_LONG));
    private static final MethodHandle cuStreamSynchronize = required("cuStreamSynchronize", fd(JAVA_LONG));
    private static final MethodHandle cuStreamDestroy_v2 = required("cuStreamDestroy_v2", fd(JAVA_LONG));
    private static final MethodHandle cuStreamBeginCapture_v2 = required("cuStreamBeginCapture_v2", fd(JAVA_LONG, JAVA_INT));
    private static final MethodHandle cuStreamEndCapture = required("cuStreamEndCapture", fd(JAVA_LONG, ADDRESS));
    private static final MethodHandle cuStreamIsCapturing = optional("cuStreamIsCapturing", fd(JAVA_LONG, ADDRESS));
    private static final MethodHandle cuEventCreate = required("cuEventCreate", fd(ADDRESS, JAVA_INT));
    private static final MethodHandle cuEventRecord = required("cuEventRecord", fd(JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuEventQuery = required("cuEventQuery", fd(JAVA_LONG));
    private static final MethodHandle cuEventSynchronize = required("cuEventSynchronize", fd(JAVA_LONG));
    private static final MethodHandle cuEventDestroy_v2 = required("cuEventDestroy_v2", fd(JAVA_LONG));
    /** {@code cuda.h} 12.8+ maps {@code cuEventElapsedTime} to {@code _v2}; older drivers export only the plain name. */
    static final String EVENT_ELAPSED_TIME = firstPresent("cuEventElapsedTime_v2", "cuEventElapsedTime");
    private static final MethodHandle cuEventElapsedTime = required(EVENT_ELAPSED_TIME, fd(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuGraphInstantiateWithFlags = required("cuGraphInstantiateWithFlags", fd(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuGraphLaunch = required("cuGraphLaunch", fd(JAVA_LONG, JAVA_LONG));
    private static final MethodHandle cuGraphExecDestroy = required("cuGraphExecDestroy", fd(JAVA_LONG));
    private static final MethodHandle cuGraphDestroy = required("cuGraphDestroy", fd(JAVA_LONG));
    private static final MethodHandle cuGraphGetNodes = required("cuGraphGetNodes", fd(JAVA_LONG, ADDRESS, ADDRESS));
    /** {@code cuda.h} 12.3+ maps {@code cuGraphGetEdges} to {@code _v2}, which takes an edge-data array before the count. */
    private static final MethodHandle cuGraphGetEdges_v2 = optional("cuGraphGetEdges_v2", fd(JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle cuGraphGetEdges = cuGraphGetEdges_v2 != null ? null
            : required("cuGraphGetEdges", fd(JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle cuGraphExecMemsetNodeSetParams = required("cuGraphExecMemsetNodeSetParams",
            fd(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG));
    private static final MethodHandle cuGraphExecMemcpyNodeSetParams = required("cuGraphExecMemcpyNodeSetParams",
            fd(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG));
    private static final MethodHandle cuGraphExecUpdate_v2 = required("cuGraphExecUpdate_v2", fd(JAVA_LONG, JAVA_LONG, ADDRESS));
    private static final MethodHandle cuGraphNodeGetType = required("cuGraphNodeGetType", fd(JAVA_LONG, ADDRESS));
    /**
     * {@code cuda.h} 12.0+ maps {@code cuGraphExecKernelNodeSetParams} to {@code _v2}; the v1 struct is
     * the v2 struct's first 56 bytes, so one layout serves both.
     */
    static final String EXEC_KERNEL_NODE_SET_PARAMS = firstPresent("cuGraphExecKernelNodeSetParams_v2",
            "cuGraphExecKernelNodeSetParams");
    private static final MethodHandle cuGraphExecKernelNodeSetParams = required(EXEC_KERNEL_NODE_SET_PARAMS,
            fd(JAVA_LONG, JAVA_LONG, ADDRESS));
    private static final MethodHandle cuModuleLoadData = required("cuModuleLoadData", fd(ADDRESS, ADDRESS));
    private static final MethodHandle cuModuleUnload = required("cuModuleUnload", fd(JAVA_LONG));
    private static final MethodHandle cuModuleGetFunction = required("cuModuleGetFunction", fd(ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle cuFuncSetAttribute = required("cuFuncSetAttribute", fd(JAVA_LONG, JAVA_INT, JAVA_INT));
    private static final MethodHandle cuFuncGetParamInfo = optional("cuFuncGetParamInfo", fd(JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS));
    private static final MethodHandle cuFuncGetParamCount = optional("cuFuncGetParamCount", fd(JAVA_LONG, ADDRESS));
    private static final MethodHandle cuLaunchKernel = required("cuLaunchKernel", fd(JAVA_LONG,
            JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS));

    /** Whether the driver has {@code cuStreamIsCapturing} (SCALE, for one, lacks it). */
    static final boolean HAS_STREAM_IS_CAPTURING = cuStreamIsCapturing != null;
    /** Whether the driver has the stream-ordered allocator ({@code cuMemAllocAsync} and the {@code cuMemPool*} calls, CUDA 11.2+). */
    static final boolean HAS_MEM_POOLS = cuMemAllocAsync != null && cuMemFreeAsync != null && cuDeviceGetDefaultMemPool != null
            && cuMemPoolTrimTo != null && cuMemPoolGetAttribute != null && cuMemPoolSetAttribute != null;
    /** Whether the driver has {@code cuFuncGetParamInfo} (CUDA 12.4+), so launches can be checked against the kernel's signature. */
    static final boolean HAS_FUNC_GET_PARAM_INFO = cuFuncGetParamInfo != null;
    /** Whether the driver has {@code cuFuncGetParamCount} (CUDA 13.2+), so parameters are counted without a failing probe. */
    static final boolean HAS_FUNC_GET_PARAM_COUNT = cuFuncGetParamCount != null;

    /**
     * {@code CUDA_MEMCPY2D} (the {@code _v2} layout of {@code cuda.h}: {@code size_t} offsets,
     * pitches and extents; {@code CUmemorytype} is a 4-byte enum followed by padding).
     */
    static final StructLayout CUDA_MEMCPY2D = MemoryLayout.structLayout(
            JAVA_LONG.withName("srcXInBytes"),
            JAVA_LONG.withName("srcY"),
            JAVA_INT.withName("srcMemoryType"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("srcHost"),
            JAVA_LONG.withName("srcDevice"),
            ADDRESS.withName("srcArray"),
            JAVA_LONG.withName("srcPitch"),
            JAVA_LONG.withName("dstXInBytes"),
            JAVA_LONG.withName("dstY"),
            JAVA_INT.withName("dstMemoryType"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("dstHost"),
            JAVA_LONG.withName("dstDevice"),
            ADDRESS.withName("dstArray"),
            JAVA_LONG.withName("dstPitch"),
            JAVA_LONG.withName("WidthInBytes"),
            JAVA_LONG.withName("Height")).withName("CUDA_MEMCPY2D");

    /**
     * {@code CUDA_KERNEL_NODE_PARAMS_v2}: {@code kern} and {@code ctx} are ignored while {@code func} is set.
     */
    static final StructLayout CUDA_KERNEL_NODE_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("func"),
            JAVA_INT.withName("gridDimX"),
            JAVA_INT.withName("gridDimY"),
            JAVA_INT.withName("gridDimZ"),
            JAVA_INT.withName("blockDimX"),
            JAVA_INT.withName("blockDimY"),
            JAVA_INT.withName("blockDimZ"),
            JAVA_INT.withName("sharedMemBytes"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("kernelParams"),
            ADDRESS.withName("extra"),
            JAVA_LONG.withName("kern"),
            JAVA_LONG.withName("ctx")).withName("CUDA_KERNEL_NODE_PARAMS_v2");

    /** {@code CUDA_MEMSET_NODE_PARAMS}: a one-dimensional memset has height 1 and an unused pitch. */
    static final StructLayout CUDA_MEMSET_NODE_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("dst"),
            JAVA_LONG.withName("pitch"),
            JAVA_INT.withName("value"),
            JAVA_INT.withName("elementSize"),
            JAVA_LONG.withName("width"),
            JAVA_LONG.withName("height")).withName("CUDA_MEMSET_NODE_PARAMS");

    /** One params struct per thread, so a node update (once per step in a steady loop) allocates nothing. */
    private static final ThreadLocal<MemorySegment> KERNEL_NODE_PARAMS =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CUDA_KERNEL_NODE_PARAMS));

    private static final long M2D_SRC_MEMORY_TYPE = offset("srcMemoryType");
    private static final long M2D_SRC_DEVICE = offset("srcDevice");
    private static final long M2D_SRC_PITCH = offset("srcPitch");
    private static final long M2D_DST_MEMORY_TYPE = offset("dstMemoryType");
    private static final long M2D_DST_DEVICE = offset("dstDevice");
    private static final long M2D_DST_PITCH = offset("dstPitch");
    private static final long M2D_WIDTH = offset("WidthInBytes");
    private static final long M2D_HEIGHT = offset("Height");

    private static long offset(String field) {
        return CUDA_MEMCPY2D.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    // ---- errors -----------------------------------------------------------------------------

    /**
     * Turns a failed status into the exception every caller throws: the {@link CudaError} and raw
     * code, the native function's name, its arguments and the driver's own name and text for the
     * code ({@code cuGetErrorName}/{@code cuGetErrorString}). The only place this backend makes a
     * {@link GpuException} from a {@code CUresult}.
     *
     * @param status   the {@code CUresult}, not 0
     * @param function the driver function's exported name, e.g. {@code cuMemAlloc_v2}
     * @param args     the call's arguments as {@code name=value} pairs
     * @return the exception, for the caller to throw
     */
    static GpuException error(int status, String function, String args) {
        StringBuilder details = new StringBuilder(args);
        String name = errorText(cuGetErrorName, status);
        String text = errorText(cuGetErrorString, status);
        if (name != null || text != null) {
            details.append(details.isEmpty() ? "" : "; ").append("driver: ")
                    .append(name == null ? "?" : name).append(": ").append(text == null ? "?" : text);
        }
        if (status == CudaError.INVALID_CONTEXT.code()) {
            details.append("; no usable context is current on this thread: this backend binds its context before "
                    + "every call, so another library changed it or the runtime was closed; call Gpu.bindToThread()");
        }
        return new GpuException(CudaError.of(status), status, function, details.toString(), null);
    }

    /** {@return the driver's text for {@code status}, or {@code null} when it has none (an unknown code, or a driver shutting down)} */
    private static String errorText(MethodHandle getter, int status) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int st = (int) getter.invokeExact(status, out);
            MemorySegment s = out.get(ADDRESS, 0);
            // The driver returns a pointer to a static NUL-terminated string of unknown length.
            return st == SUCCESS && !s.equals(MemorySegment.NULL) ? s.reinterpret(4096).getString(0) : null;
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    private static AssertionError unreachable(Throwable t) {
        return new AssertionError("should not reach here", t);
    }

    private static GpuException notSupported(String function) {
        return new GpuException(CudaError.NOT_SUPPORTED, function, LIBRARY + " does not export " + function);
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    // ---- initialization and devices ----------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuInit(unsigned int Flags); }
     *
     * @param flags must be 0
     */
    static void init(int flags) {
        int st;
        try {
            st = (int) cuInit.invokeExact(flags);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuInit", "flags=" + flags);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDriverGetVersion(int *driverVersion); }
     *
     * @return the CUDA version the driver supports, e.g. 13000
     */
    static int driverGetVersion() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuDriverGetVersion.invokeExact(out);
            if (st != SUCCESS) {
                throw error(st, "cuDriverGetVersion", "");
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceGetCount(int *count); }
     *
     * @return the number of CUDA devices
     */
    static int deviceGetCount() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuDeviceGetCount.invokeExact(out);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceGetCount", "");
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceGet(CUdevice *device, int ordinal); }
     *
     * @param ordinal the device's index
     * @return the {@code CUdevice}
     */
    static int deviceGet(int ordinal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuDeviceGet.invokeExact(out, ordinal);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceGet", "ordinal=" + ordinal);
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceGetName(char *name, int len, CUdevice dev); }
     *
     * @param device the device
     * @return its name, e.g. {@code NVIDIA H200}
     */
    static String deviceGetName(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(256);
            int st = (int) cuDeviceGetName.invokeExact(out, 256, device);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceGetName", "len=256, dev=" + device);
            }
            return out.getString(0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev); }
     *
     * @param attribute a {@code CU_DEVICE_ATTRIBUTE_*} number
     * @param device    the device
     * @return the attribute's value
     */
    static int deviceGetAttribute(int attribute, int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuDeviceGetAttribute.invokeExact(out, attribute, device);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceGetAttribute", "attrib=" + attribute + ", dev=" + device);
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev); }
     *
     * @param device the device
     * @return its memory in bytes
     */
    static long deviceTotalMem(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuDeviceTotalMem_v2.invokeExact(out, device);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceTotalMem_v2", "dev=" + device);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev); }
     *
     * @param device the device
     * @return {@code domain:bus:device.function}, e.g. {@code 0000:19:00.0}
     */
    static String deviceGetPCIBusId(int device) {
        try (Arena arena = Arena.ofConfined()) {
            // 13 characters plus NUL are enough (cuda.h); 64 leaves room.
            MemorySegment out = arena.allocate(64);
            int st = (int) cuDeviceGetPCIBusId.invokeExact(out, 64, device);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceGetPCIBusId", "len=64, dev=" + device);
            }
            return out.getString(0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev); }
     *
     * @param device the accessing device
     * @param peer   the device whose memory would be accessed
     * @return whether {@code device} can access {@code peer}'s memory directly
     */
    static boolean deviceCanAccessPeer(int device, int peer) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuDeviceCanAccessPeer.invokeExact(out, device, peer);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceCanAccessPeer", "dev=" + device + ", peerDev=" + peer);
            }
            return out.get(JAVA_INT, 0) != 0;
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags); }
     * Applies to the current context.
     *
     * @param peerCtx the peer's context
     */
    static void ctxEnablePeerAccess(long peerCtx) {
        int st;
        try {
            st = (int) cuCtxEnablePeerAccess.invokeExact(peerCtx, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuCtxEnablePeerAccess", "peerContext=" + hex(peerCtx) + ", Flags=0");
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount); }
     *
     * @param dst    destination address
     * @param dstCtx its context
     * @param src    source address
     * @param srcCtx its context
     * @param bytes  the count
     */
    static void memcpyPeer(long dst, long dstCtx, long src, long srcCtx, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyPeer.invokeExact(dst, dstCtx, src, srcCtx, bytes);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyPeer", "dstDevice=" + hex(dst) + ", dstContext=" + hex(dstCtx) + ", srcDevice="
                    + hex(src) + ", srcContext=" + hex(srcCtx) + ", ByteCount=" + bytes);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream); }
     *
     * @param dst    destination address
     * @param dstCtx its context
     * @param src    source address
     * @param srcCtx its context
     * @param bytes  the count
     * @param stream the stream
     */
    static void memcpyPeerAsync(long dst, long dstCtx, long src, long srcCtx, long bytes, long stream) {
        int st;
        try {
            st = (int) cuMemcpyPeerAsync.invokeExact(dst, dstCtx, src, srcCtx, bytes, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyPeerAsync", "dstDevice=" + hex(dst) + ", dstContext=" + hex(dstCtx) + ", srcDevice="
                    + hex(src) + ", srcContext=" + hex(srcCtx) + ", ByteCount=" + bytes + ", hStream=" + hex(stream));
        }
    }

    // ---- contexts ----------------------------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev); }
     * Does not make the context current.
     *
     * @param device the device
     * @return the primary context
     */
    static long devicePrimaryCtxRetain(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuDevicePrimaryCtxRetain.invokeExact(out, device);
            if (st != SUCCESS) {
                throw error(st, "cuDevicePrimaryCtxRetain", "dev=" + device);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev); }
     * The last release destroys the context and everything allocated in it.
     *
     * @param device the device
     * @return {@link CudaError#SUCCESS}, or the failure; never throws, for close paths
     */
    static CudaError devicePrimaryCtxRelease(int device) {
        try {
            return CudaError.of((int) cuDevicePrimaryCtxRelease_v2.invokeExact(device));
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuCtxSetCurrent(CUcontext ctx); }
     * Called before every context call: on the H200 it costs about as much as a JNI-free downcall.
     *
     * @param ctx the context, or 0 to unbind
     */
    static void ctxSetCurrent(long ctx) {
        int st;
        try {
            st = (int) cuCtxSetCurrent.invokeExact(ctx);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuCtxSetCurrent", "ctx=" + hex(ctx));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuCtxGetCurrent(CUcontext *pctx); }
     *
     * @param out an 8-byte scratch segment owned by the caller
     * @return the current context of the calling thread, 0 when none
     */
    static long ctxGetCurrent(MemorySegment out) {
        int st;
        try {
            st = (int) cuCtxGetCurrent.invokeExact(out);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuCtxGetCurrent", "");
        }
        return out.get(JAVA_LONG, 0);
    }

    /** {@snippet lang=c : CUresult cuCtxSynchronize(void); } */
    static void ctxSynchronize() {
        int st;
        try {
            st = (int) cuCtxSynchronize.invokeExact();
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuCtxSynchronize", "");
        }
    }

    // ---- memory ------------------------------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuMemGetInfo_v2(size_t *free, size_t *total); }
     *
     * @return {@code {free, total}} in bytes
     */
    static long[] memGetInfo() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 2);
            int st = (int) cuMemGetInfo_v2.invokeExact(out, out.asSlice(8));
            if (st != SUCCESS) {
                throw error(st, "cuMemGetInfo_v2", "");
            }
            return new long[] {out.getAtIndex(JAVA_LONG, 0), out.getAtIndex(JAVA_LONG, 1)};
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * The status of {@code cuMemGetInfo_v2}, which waits for nothing, is not a capture-unsafe call,
     * and reports a sticky error latched in the current context.
     *
     * @return the status, as a {@link CudaError}
     */
    static CudaError memGetInfoStatus() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 2);
            return CudaError.of((int) cuMemGetInfo_v2.invokeExact(out, out.asSlice(8)));
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize); }
     *
     * @param bytes the size
     * @return the device address
     */
    static long memAlloc(long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuMemAlloc_v2.invokeExact(out, bytes);
            if (st != SUCCESS) {
                throw error(st, "cuMemAlloc_v2", "bytesize=" + bytes);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream); }
     *
     * @param bytes  the size
     * @param stream the stream
     * @return the device address
     */
    static long memAllocAsync(long bytes, long stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuMemAllocAsync.invokeExact(out, bytes, stream);
            if (st != SUCCESS) {
                throw error(st, "cuMemAllocAsync", "bytesize=" + bytes + ", hStream=" + hex(stream));
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream); }
     *
     * @param ptr    an address from {@link #memAllocAsync}
     * @param stream the stream
     */
    static void memFreeAsync(long ptr, long stream) {
        int st;
        try {
            st = (int) cuMemFreeAsync.invokeExact(ptr, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemFreeAsync", "dptr=" + hex(ptr) + ", hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev); }
     *
     * @param device the device
     * @return its default memory pool
     */
    static long deviceGetDefaultMemPool(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int st = (int) cuDeviceGetDefaultMemPool.invokeExact(out, device);
            if (st != SUCCESS) {
                throw error(st, "cuDeviceGetDefaultMemPool", "dev=" + device);
            }
            return out.get(ADDRESS, 0).address();
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep); }
     *
     * @param pool           the pool
     * @param minBytesToKeep bytes it may keep
     */
    static void memPoolTrimTo(long pool, long minBytesToKeep) {
        int st;
        try {
            st = (int) cuMemPoolTrimTo.invokeExact(pool, minBytesToKeep);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemPoolTrimTo", "pool=" + hex(pool) + ", minBytesToKeep=" + minBytesToKeep);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value); }
     * for the attributes whose value is a {@code cuuint64_t} (4 to 8).
     *
     * @param pool the pool
     * @param attr the attribute
     * @return its value
     */
    static long memPoolGetAttribute(long pool, int attr) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuMemPoolGetAttribute.invokeExact(pool, attr, out);
            if (st != SUCCESS) {
                throw error(st, "cuMemPoolGetAttribute", "pool=" + hex(pool) + ", attr=" + attr);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value); }
     * for the attributes whose value is a {@code cuuint64_t} (4 to 8).
     *
     * @param pool  the pool
     * @param attr  the attribute
     * @param value its value
     */
    static void memPoolSetAttribute(long pool, int attr, long value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = arena.allocate(JAVA_LONG);
            in.set(JAVA_LONG, 0, value);
            int st = (int) cuMemPoolSetAttribute.invokeExact(pool, attr, in);
            if (st != SUCCESS) {
                throw error(st, "cuMemPoolSetAttribute", "pool=" + hex(pool) + ", attr=" + attr + ", value=" + Long.toUnsignedString(value));
            }
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags); }
     *
     * @param bytes the size
     * @param flags {@code CU_MEM_ATTACH_GLOBAL} 1 or {@code CU_MEM_ATTACH_HOST} 2
     * @return the address
     */
    static long memAllocManaged(long bytes, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuMemAllocManaged.invokeExact(out, bytes, flags);
            if (st != SUCCESS) {
                throw error(st, "cuMemAllocManaged", "bytesize=" + bytes + ", flags=" + flags);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemFree_v2(CUdeviceptr dptr); }
     *
     * @param ptr a base address, or 0
     */
    static void memFree(long ptr) {
        int st;
        try {
            st = (int) cuMemFree_v2.invokeExact(ptr);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemFree_v2", "dptr=" + hex(ptr));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags); }
     *
     * @param bytes the size
     * @param flags {@code PORTABLE} 1, {@code DEVICEMAP} 2, {@code WRITECOMBINED} 4
     * @return the host address, 0 for size 0
     */
    static long memHostAlloc(long bytes, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int st = (int) cuMemHostAlloc.invokeExact(out, bytes, flags);
            if (st != SUCCESS) {
                throw error(st, "cuMemHostAlloc", "bytesize=" + bytes + ", Flags=" + flags);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemFreeHost(void *p); }
     *
     * @param host the host address from {@link #memHostAlloc}, or 0
     */
    static void memFreeHost(long host) {
        int st;
        try {
            st = (int) cuMemFreeHost.invokeExact(host);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemFreeHost", "p=" + hex(host));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags); }
     *
     * @param host  a page-locked host address
     * @param flags must be 0
     * @return the device address
     */
    static long memHostGetDevicePointer(long host, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuMemHostGetDevicePointer_v2.invokeExact(out, host, flags);
            if (st != SUCCESS) {
                throw error(st, "cuMemHostGetDevicePointer_v2", "p=" + hex(host) + ", Flags=" + flags);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    // ---- copies and memset ---------------------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount); }
     *
     * @param dst   device address
     * @param src   native host memory, at least {@code bytes} long
     * @param bytes the count
     */
    static void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyHtoD_v2.invokeExact(dst, src, bytes);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyHtoD_v2", "dstDevice=" + hex(dst) + ", srcHost=" + hex(src.address()) + ", ByteCount=" + bytes);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount); }
     *
     * @param dst   native host memory, at least {@code bytes} long
     * @param src   device address
     * @param bytes the count
     */
    static void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyDtoH_v2.invokeExact(dst, src, bytes);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyDtoH_v2", "dstHost=" + hex(dst.address()) + ", srcDevice=" + hex(src) + ", ByteCount=" + bytes);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount); }
     *
     * @param dst   device address
     * @param src   device address
     * @param bytes the count
     */
    static void memcpyDtoD(long dst, long src, long bytes) {
        int st;
        try {
            st = (int) cuMemcpyDtoD_v2.invokeExact(dst, src, bytes);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyDtoD_v2", "dstDevice=" + hex(dst) + ", srcDevice=" + hex(src) + ", ByteCount=" + bytes);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream); }
     *
     * @param dst    device address
     * @param src    native host memory
     * @param bytes  the count
     * @param stream the stream
     */
    static void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        int st;
        try {
            st = (int) cuMemcpyHtoDAsync_v2.invokeExact(dst, src, bytes, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyHtoDAsync_v2", "dstDevice=" + hex(dst) + ", srcHost=" + hex(src.address())
                    + ", ByteCount=" + bytes + ", hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream); }
     *
     * @param dst    native host memory
     * @param src    device address
     * @param bytes  the count
     * @param stream the stream
     */
    static void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        int st;
        try {
            st = (int) cuMemcpyDtoHAsync_v2.invokeExact(dst, src, bytes, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyDtoHAsync_v2", "dstHost=" + hex(dst.address()) + ", srcDevice=" + hex(src)
                    + ", ByteCount=" + bytes + ", hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream); }
     *
     * @param dst    device address
     * @param src    device address
     * @param bytes  the count
     * @param stream the stream
     */
    static void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        int st;
        try {
            st = (int) cuMemcpyDtoDAsync_v2.invokeExact(dst, src, bytes, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemcpyDtoDAsync_v2", "dstDevice=" + hex(dst) + ", srcDevice=" + hex(src)
                    + ", ByteCount=" + bytes + ", hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream); }
     * Device to device; X and Y offsets are 0 (the addresses carry them).
     *
     * @param dst        destination base
     * @param dstPitch   destination pitch in bytes
     * @param src        source base
     * @param srcPitch   source pitch in bytes
     * @param widthBytes bytes per row
     * @param height     rows
     * @param stream     the stream
     */
    static void memcpy2DAsyncDtoD(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(CUDA_MEMCPY2D); // zeroed: offsets, host and array fields stay 0
            p.set(JAVA_INT, M2D_SRC_MEMORY_TYPE, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, M2D_SRC_DEVICE, src);
            p.set(JAVA_LONG, M2D_SRC_PITCH, srcPitch);
            p.set(JAVA_INT, M2D_DST_MEMORY_TYPE, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, M2D_DST_DEVICE, dst);
            p.set(JAVA_LONG, M2D_DST_PITCH, dstPitch);
            p.set(JAVA_LONG, M2D_WIDTH, widthBytes);
            p.set(JAVA_LONG, M2D_HEIGHT, height);
            int st = (int) cuMemcpy2DAsync_v2.invokeExact(p, stream);
            if (st != SUCCESS) {
                throw error(st, "cuMemcpy2DAsync_v2", "srcDevice=" + hex(src) + ", srcPitch=" + srcPitch
                        + ", dstDevice=" + hex(dst) + ", dstPitch=" + dstPitch + ", WidthInBytes=" + widthBytes
                        + ", Height=" + height + ", hStream=" + hex(stream));
            }
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N); }
     *
     * @param ptr   device address
     * @param value the byte
     * @param bytes the count
     */
    static void memsetD8(long ptr, byte value, long bytes) {
        int st;
        try {
            st = (int) cuMemsetD8_v2.invokeExact(ptr, value, bytes);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemsetD8_v2", "dstDevice=" + hex(ptr) + ", uc=" + (value & 0xff) + ", N=" + bytes);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream); }
     *
     * @param ptr    device address
     * @param value  the byte
     * @param bytes  the count
     * @param stream the stream
     */
    static void memsetD8Async(long ptr, byte value, long bytes, long stream) {
        int st;
        try {
            st = (int) cuMemsetD8Async.invokeExact(ptr, value, bytes, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuMemsetD8Async", "dstDevice=" + hex(ptr) + ", uc=" + (value & 0xff) + ", N=" + bytes
                    + ", hStream=" + hex(stream));
        }
    }

    // ---- streams and events --------------------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags); }
     *
     * @param flags 0 or {@code CU_STREAM_NON_BLOCKING} 1
     * @return the stream
     */
    static long streamCreate(int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuStreamCreate.invokeExact(out, flags);
            if (st != SUCCESS) {
                throw error(st, "cuStreamCreate", "Flags=" + flags);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuStreamDestroy_v2(CUstream hStream); }
     *
     * @param stream the stream
     */
    static void streamDestroy(long stream) {
        int st;
        try {
            st = (int) cuStreamDestroy_v2.invokeExact(stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuStreamDestroy_v2", "hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuStreamSynchronize(CUstream hStream); }
     *
     * @param stream the stream
     */
    static void streamSynchronize(long stream) {
        int st;
        try {
            st = (int) cuStreamSynchronize.invokeExact(stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuStreamSynchronize", "hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuStreamQuery(CUstream hStream); }
     *
     * @param stream the stream
     * @return {@code true} when done, {@code false} for {@code CUDA_ERROR_NOT_READY}
     */
    static boolean streamQuery(long stream) {
        int st;
        try {
            st = (int) cuStreamQuery.invokeExact(stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st == SUCCESS) {
            return true;
        }
        if (st == NOT_READY) {
            return false;
        }
        throw error(st, "cuStreamQuery", "hStream=" + hex(stream));
    }

    /**
     * {@snippet lang=c : CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags); }
     *
     * @param stream the waiting stream
     * @param event  the event
     * @param flags  0 or {@code CU_EVENT_WAIT_EXTERNAL} 1
     */
    static void streamWaitEvent(long stream, long event, int flags) {
        int st;
        try {
            st = (int) cuStreamWaitEvent.invokeExact(stream, event, flags);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuStreamWaitEvent", "hStream=" + hex(stream) + ", hEvent=" + hex(event) + ", Flags=" + flags);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags); }
     *
     * @param flags {@code BLOCKING_SYNC} 1, {@code DISABLE_TIMING} 2, {@code INTERPROCESS} 4
     * @return the event
     */
    static long eventCreate(int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuEventCreate.invokeExact(out, flags);
            if (st != SUCCESS) {
                throw error(st, "cuEventCreate", "Flags=" + flags);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuEventRecord(CUevent hEvent, CUstream hStream); }
     *
     * @param event  the event
     * @param stream the stream
     */
    static void eventRecord(long event, long stream) {
        int st;
        try {
            st = (int) cuEventRecord.invokeExact(event, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuEventRecord", "hEvent=" + hex(event) + ", hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuEventQuery(CUevent hEvent); }
     *
     * @param event the event
     * @return {@code true} when done, {@code false} for {@code CUDA_ERROR_NOT_READY}
     */
    static boolean eventQuery(long event) {
        int st;
        try {
            st = (int) cuEventQuery.invokeExact(event);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st == SUCCESS) {
            return true;
        }
        if (st == NOT_READY) {
            return false;
        }
        throw error(st, "cuEventQuery", "hEvent=" + hex(event));
    }

    /**
     * {@snippet lang=c : CUresult cuEventSynchronize(CUevent hEvent); }
     *
     * @param event the event
     */
    static void eventSynchronize(long event) {
        int st;
        try {
            st = (int) cuEventSynchronize.invokeExact(event);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuEventSynchronize", "hEvent=" + hex(event));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd); }
     * The plain {@code cuEventElapsedTime} where the driver lacks {@code _v2}.
     *
     * @param start the start event
     * @param end   the end event
     * @return milliseconds
     */
    static float eventElapsedTime(long start, long end) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_FLOAT);
            int st = (int) cuEventElapsedTime.invokeExact(out, start, end);
            if (st != SUCCESS) {
                throw error(st, EVENT_ELAPSED_TIME, "hStart=" + hex(start) + ", hEnd=" + hex(end));
            }
            return out.get(JAVA_FLOAT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuEventDestroy_v2(CUevent hEvent); }
     *
     * @param event the event
     */
    static void eventDestroy(long event) {
        int st;
        try {
            st = (int) cuEventDestroy_v2.invokeExact(event);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuEventDestroy_v2", "hEvent=" + hex(event));
        }
    }

    // ---- capture and graphs --------------------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode); }
     *
     * @param stream the stream
     * @param mode   0 global, 1 thread-local, 2 relaxed
     */
    static void streamBeginCapture(long stream, int mode) {
        int st;
        try {
            st = (int) cuStreamBeginCapture_v2.invokeExact(stream, mode);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuStreamBeginCapture_v2", "hStream=" + hex(stream) + ", mode=" + mode);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph); }
     *
     * @param stream the stream
     * @return the graph
     */
    static long streamEndCapture(long stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuStreamEndCapture.invokeExact(stream, out);
            if (st != SUCCESS) {
                throw error(st, "cuStreamEndCapture", "hStream=" + hex(stream));
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus); }
     * Optional: see {@link #HAS_STREAM_IS_CAPTURING}.
     *
     * @param stream the stream
     * @return 0 none, 1 active, 2 invalidated
     */
    static int streamIsCapturing(long stream) {
        if (!HAS_STREAM_IS_CAPTURING) {
            throw notSupported("cuStreamIsCapturing");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuStreamIsCapturing.invokeExact(stream, out);
            if (st != SUCCESS) {
                throw error(st, "cuStreamIsCapturing", "hStream=" + hex(stream));
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags); }
     *
     * @param graph the graph
     * @param flags 0 for none
     * @return the executable graph
     */
    static long graphInstantiateWithFlags(long graph, long flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuGraphInstantiateWithFlags.invokeExact(out, graph, flags);
            if (st != SUCCESS) {
                throw error(st, "cuGraphInstantiateWithFlags", "hGraph=" + hex(graph) + ", flags=" + flags);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream); }
     *
     * @param exec   the executable graph
     * @param stream the stream
     */
    static void graphLaunch(long exec, long stream) {
        int st;
        try {
            st = (int) cuGraphLaunch.invokeExact(exec, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuGraphLaunch", "hGraphExec=" + hex(exec) + ", hStream=" + hex(stream));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuGraphExecDestroy(CUgraphExec hGraphExec); }
     *
     * @param exec the executable graph
     */
    static void graphExecDestroy(long exec) {
        int st;
        try {
            st = (int) cuGraphExecDestroy.invokeExact(exec);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuGraphExecDestroy", "hGraphExec=" + hex(exec));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuGraphDestroy(CUgraph hGraph); }
     *
     * @param graph the graph
     */
    static void graphDestroy(long graph) {
        int st;
        try {
            st = (int) cuGraphDestroy.invokeExact(graph);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuGraphDestroy", "hGraph=" + hex(graph));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes); }
     * Called twice: once for the count, once for the nodes.
     *
     * @param graph the graph
     * @return the nodes
     */
    static long[] graphGetNodes(long graph) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_LONG);
            int st = (int) cuGraphGetNodes.invokeExact(graph, MemorySegment.NULL, count);
            if (st != SUCCESS) {
                throw error(st, "cuGraphGetNodes", "hGraph=" + hex(graph) + ", nodes=NULL");
            }
            long n = count.get(JAVA_LONG, 0);
            if (n == 0) {
                return new long[0];
            }
            MemorySegment out = arena.allocate(JAVA_LONG, n);
            st = (int) cuGraphGetNodes.invokeExact(graph, out, count);
            if (st != SUCCESS) {
                throw error(st, "cuGraphGetNodes", "hGraph=" + hex(graph) + ", numNodes=" + n);
            }
            return out.asSlice(0, count.get(JAVA_LONG, 0) * JAVA_LONG.byteSize()).toArray(JAVA_LONG);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c :
     * CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
     *                             CUgraphEdgeData *edgeData, size_t *numEdges);
     * CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges);
     * }
     * The first where the driver has it, with {@code edgeData} NULL (a captured graph's edges carry
     * default data, so the query is not lossy). Called twice: once for the count, once for the edges.
     *
     * @param graph the graph
     * @return {@code {from, to}}: {@code to[i]} depends on {@code from[i]}
     */
    static long[][] graphGetEdges(long graph) {
        String name = cuGraphGetEdges_v2 != null ? "cuGraphGetEdges_v2" : "cuGraphGetEdges";
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_LONG);
            int st = edges(graph, MemorySegment.NULL, MemorySegment.NULL, count);
            if (st != SUCCESS) {
                throw error(st, name, "hGraph=" + hex(graph) + ", from=NULL, to=NULL");
            }
            long n = count.get(JAVA_LONG, 0);
            if (n == 0) {
                return new long[][] {new long[0], new long[0]};
            }
            MemorySegment from = arena.allocate(JAVA_LONG, n);
            MemorySegment to = arena.allocate(JAVA_LONG, n);
            st = edges(graph, from, to, count);
            if (st != SUCCESS) {
                throw error(st, name, "hGraph=" + hex(graph) + ", numEdges=" + n);
            }
            long bytes = count.get(JAVA_LONG, 0) * JAVA_LONG.byteSize();
            return new long[][] {from.asSlice(0, bytes).toArray(JAVA_LONG), to.asSlice(0, bytes).toArray(JAVA_LONG)};
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    private static int edges(long graph, MemorySegment from, MemorySegment to, MemorySegment count) throws Throwable {
        return cuGraphGetEdges_v2 != null
                ? (int) cuGraphGetEdges_v2.invokeExact(graph, from, to, MemorySegment.NULL, count)
                : (int) cuGraphGetEdges.invokeExact(graph, from, to, count);
    }

    /**
     * {@snippet lang=c : CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type); }
     *
     * @param node the node
     * @return its {@code CUgraphNodeType}
     */
    static int graphNodeGetType(long node) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int st = (int) cuGraphNodeGetType.invokeExact(node, out);
            if (st != SUCCESS) {
                throw error(st, "cuGraphNodeGetType", "hNode=" + hex(node));
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c :
     * CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
     *                                            const CUDA_KERNEL_NODE_PARAMS *nodeParams);
     * }
     * The driver copies the parameters, so {@code params} may be refilled once this returns.
     *
     * @param exec   the executable graph
     * @param node   a kernel node of the graph it was instantiated from
     * @param func   the function
     * @param gx     grid x
     * @param gy     grid y
     * @param gz     grid z
     * @param bx     block x
     * @param by     block y
     * @param bz     block z
     * @param smem   dynamic shared memory in bytes
     * @param params the {@code void*} table, one entry per kernel parameter
     */
    static void graphExecKernelNodeSetParams(long exec, long node, long func, int gx, int gy, int gz,
                                             int bx, int by, int bz, int smem, MemorySegment params) {
        MemorySegment p = KERNEL_NODE_PARAMS.get();
        p.set(JAVA_LONG, 0, func);
        p.set(JAVA_INT, 8, gx);
        p.set(JAVA_INT, 12, gy);
        p.set(JAVA_INT, 16, gz);
        p.set(JAVA_INT, 20, bx);
        p.set(JAVA_INT, 24, by);
        p.set(JAVA_INT, 28, bz);
        p.set(JAVA_INT, 32, smem);
        p.set(ADDRESS, 40, params);
        p.set(ADDRESS, 48, MemorySegment.NULL);
        p.set(JAVA_LONG, 56, 0L);
        p.set(JAVA_LONG, 64, 0L);
        int st;
        try {
            st = (int) cuGraphExecKernelNodeSetParams.invokeExact(exec, node, p);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, EXEC_KERNEL_NODE_SET_PARAMS, "hGraphExec=" + hex(exec) + ", hNode=" + hex(node)
                    + ", func=" + hex(func) + ", grid=[" + gx + ", " + gy + ", " + gz + "], block=[" + bx + ", "
                    + by + ", " + bz + "], smem=" + smem);
        }
    }

    /**
     * {@snippet lang=c :
     * CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
     *                                         const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx);
     * }
     * A one-dimensional byte memset ({@code elementSize} 1, {@code height} 1), as {@code cuMemsetD8Async} captures.
     *
     * @param exec  the executable graph
     * @param node  a memset node of the graph it was instantiated from
     * @param dst   the destination
     * @param value the byte value
     * @param bytes the byte count
     * @param ctx   the context the node runs in
     */
    static void graphExecMemsetNodeSetParams(long exec, long node, long dst, int value, long bytes, long ctx) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(CUDA_MEMSET_NODE_PARAMS);
            p.set(JAVA_LONG, 0, dst);
            p.set(JAVA_LONG, 8, 0L);
            p.set(JAVA_INT, 16, value & 0xff);
            p.set(JAVA_INT, 20, 1);
            p.set(JAVA_LONG, 24, bytes);
            p.set(JAVA_LONG, 32, 1L);
            int st = (int) cuGraphExecMemsetNodeSetParams.invokeExact(exec, node, p, ctx);
            if (st != SUCCESS) {
                throw error(st, "cuGraphExecMemsetNodeSetParams", "hGraphExec=" + hex(exec) + ", hNode=" + hex(node)
                        + ", dst=" + hex(dst) + ", value=" + (value & 0xff) + ", width=" + bytes);
            }
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /** Bytes of {@code CUDA_MEMCPY3D} ({@code cuda.h}: 25 eight-byte fields, the two {@code CUmemorytype}s padded). */
    private static final long MEMCPY3D_BYTES = 200;

    /**
     * {@snippet lang=c :
     * CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
     *                                         const CUDA_MEMCPY3D *copyParams, CUcontext ctx);
     * }
     * A one-dimensional device-to-device copy ({@code CU_MEMORYTYPE_DEVICE} both ways, height and depth 1).
     *
     * @param exec  the executable graph
     * @param node  a memcpy node of the graph it was instantiated from
     * @param src   the source
     * @param dst   the destination
     * @param bytes the byte count
     * @param ctx   the context the node runs in
     */
    static void graphExecMemcpyNodeSetParams(long exec, long node, long src, long dst, long bytes, long ctx) {
        try (Arena arena = Arena.ofConfined()) {
            // Offsets of CUDA_MEMCPY3D: srcMemoryType 32, srcDevice 48, srcPitch 72, srcHeight 80,
            // dstMemoryType 120, dstDevice 136, dstPitch 160, dstHeight 168, WidthInBytes 176, Height 184, Depth 192.
            MemorySegment p = arena.allocate(MEMCPY3D_BYTES, 8);
            p.set(JAVA_INT, 32, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, 48, src);
            p.set(JAVA_LONG, 72, bytes);
            p.set(JAVA_LONG, 80, 1L);
            p.set(JAVA_INT, 120, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, 136, dst);
            p.set(JAVA_LONG, 160, bytes);
            p.set(JAVA_LONG, 168, 1L);
            p.set(JAVA_LONG, 176, bytes);
            p.set(JAVA_LONG, 184, 1L);
            p.set(JAVA_LONG, 192, 1L);
            int st = (int) cuGraphExecMemcpyNodeSetParams.invokeExact(exec, node, p, ctx);
            if (st != SUCCESS) {
                throw error(st, "cuGraphExecMemcpyNodeSetParams", "hGraphExec=" + hex(exec) + ", hNode=" + hex(node)
                        + ", srcDevice=" + hex(src) + ", dstDevice=" + hex(dst) + ", WidthInBytes=" + bytes);
            }
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c :
     * CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo);
     * }
     * {@code CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE} is a refused update, not an error: its result is returned.
     *
     * @param exec  the executable graph
     * @param graph the graph with the new parameters
     * @return the {@code CUgraphExecUpdateResult}, 0 when the update was made
     */
    static int graphExecUpdate(long exec, long graph) {
        try (Arena arena = Arena.ofConfined()) {
            // CUgraphExecUpdateResultInfo: the result (a 4-byte enum, padded), errorNode, errorFromNode.
            MemorySegment info = arena.allocate(24, 8);
            int st = (int) cuGraphExecUpdate_v2.invokeExact(exec, graph, info);
            if (st != SUCCESS && st != CudaError.GRAPH_EXEC_UPDATE_FAILURE.code()) {
                throw error(st, "cuGraphExecUpdate_v2", "hGraphExec=" + hex(exec) + ", hGraph=" + hex(graph));
            }
            return st == SUCCESS ? 0 : info.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    // ---- modules and launches ------------------------------------------------------------------

    /**
     * {@snippet lang=c : CUresult cuModuleLoadData(CUmodule *module, const void *image); }
     * PTX must be NUL-terminated, so the image is copied with a trailing 0.
     *
     * @param name  the module's name, for messages
     * @param image PTX, cubin or fatbin bytes
     * @return the module
     */
    static long moduleLoadData(String name, byte[] image) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment img = arena.allocate(image.length + 1L, 16); // zeroed: the last byte is the NUL
            MemorySegment.copy(image, 0, img, JAVA_BYTE, 0, image.length);
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuModuleLoadData.invokeExact(out, img);
            if (st != SUCCESS) {
                throw error(st, "cuModuleLoadData", "module=" + name + ", image=" + image.length + " bytes");
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuModuleUnload(CUmodule hmod); }
     *
     * @param module the module
     */
    static void moduleUnload(long module) {
        int st;
        try {
            st = (int) cuModuleUnload.invokeExact(module);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuModuleUnload", "hmod=" + hex(module));
        }
    }

    /**
     * {@snippet lang=c : CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name); }
     *
     * @param module the module
     * @param func   the function's (mangled) name
     * @return the function
     */
    static long moduleGetFunction(long module, String func) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int st = (int) cuModuleGetFunction.invokeExact(out, module, arena.allocateFrom(func));
            if (st != SUCCESS) {
                throw error(st, "cuModuleGetFunction", "hmod=" + hex(module) + ", name=" + func);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value); }
     *
     * @param func      the function
     * @param attribute a {@code CU_FUNC_ATTRIBUTE_*} number
     * @param value     the value
     */
    static void funcSetAttribute(long func, int attribute, int value) {
        int st;
        try {
            st = (int) cuFuncSetAttribute.invokeExact(func, attribute, value);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw error(st, "cuFuncSetAttribute", "hfunc=" + hex(func) + ", attrib=" + attribute + ", value=" + value);
        }
    }

    /**
     * The number of parameters of a kernel, by
     * {@snippet lang=c : CUresult cuFuncGetParamCount(CUfunction func, size_t *paramCount); }
     * Optional: see {@link #HAS_FUNC_GET_PARAM_COUNT}.
     *
     * @param func the function
     * @return its parameter count
     */
    static int funcGetParamCount(long func) {
        if (!HAS_FUNC_GET_PARAM_COUNT) {
            throw notSupported("cuFuncGetParamCount");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_LONG);
            int st = (int) cuFuncGetParamCount.invokeExact(func, count);
            if (st != SUCCESS) {
                throw error(st, "cuFuncGetParamCount", "func=" + hex(func));
            }
            return (int) count.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * The sizes of a kernel's {@code count} parameters, by
     * {@snippet lang=c : CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize); }
     * for index 0 to {@code count - 1}: every call is one that succeeds, so a run under
     * compute-sanitizer reports nothing. Optional: see {@link #HAS_FUNC_GET_PARAM_INFO}.
     *
     * @param func  the function
     * @param count its parameter count, from {@link #funcGetParamCount} or the module's PTX
     * @return each parameter's size in bytes, in order
     */
    static int[] funcParamSizes(long func, int count) {
        if (!HAS_FUNC_GET_PARAM_INFO) {
            throw notSupported("cuFuncGetParamInfo");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment offset = arena.allocate(JAVA_LONG);
            MemorySegment size = arena.allocate(JAVA_LONG);
            int[] sizes = new int[count];
            for (int i = 0; i < count; i++) {
                int st = (int) cuFuncGetParamInfo.invokeExact(func, (long) i, offset, size);
                if (st != SUCCESS) {
                    throw error(st, "cuFuncGetParamInfo", "func=" + hex(func) + ", paramIndex=" + i + " of " + count);
                }
                sizes[i] = (int) size.get(JAVA_LONG, 0);
            }
            return sizes;
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * The parameter sizes of a kernel whose count is not known (a cubin or fatbin on a driver
     * without {@code cuFuncGetParamCount}): {@code cuFuncGetParamInfo} for index 0, 1, ... until it
     * reports {@code CUDA_ERROR_INVALID_VALUE} past the last. That last call is a failing API call,
     * which compute-sanitizer reports; {@link #funcParamSizes(long, int)} avoids it wherever the
     * count is known.
     *
     * @param func the function
     * @return each parameter's size in bytes, in order
     */
    static int[] funcParamSizesProbing(long func) {
        if (!HAS_FUNC_GET_PARAM_INFO) {
            throw notSupported("cuFuncGetParamInfo");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment offset = arena.allocate(JAVA_LONG);
            MemorySegment size = arena.allocate(JAVA_LONG);
            int[] sizes = new int[8];
            int n = 0;
            // A kernel has at most 32764 bytes of parameters, hence at most 32764 parameters.
            for (long i = 0; i <= 32764; i++) {
                int st = (int) cuFuncGetParamInfo.invokeExact(func, i, offset, size);
                if (st == CudaError.INVALID_VALUE.code()) {
                    break;
                }
                if (st != SUCCESS) {
                    throw error(st, "cuFuncGetParamInfo", "func=" + hex(func) + ", paramIndex=" + i);
                }
                if (n == sizes.length) {
                    sizes = java.util.Arrays.copyOf(sizes, n * 2);
                }
                sizes[n++] = (int) size.get(JAVA_LONG, 0);
            }
            return java.util.Arrays.copyOf(sizes, n);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c :
     * CUresult cuLaunchKernel(CUfunction f,
     *                         unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
     *                         unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
     *                         unsigned int sharedMemBytes, CUstream hStream,
     *                         void **kernelParams, void **extra);
     * }
     * The hot path: no allocation unless it fails. {@code extra} is always NULL.
     *
     * @param func   the function
     * @param gx     grid x
     * @param gy     grid y
     * @param gz     grid z
     * @param bx     block x
     * @param by     block y
     * @param bz     block z
     * @param smem   dynamic shared memory in bytes
     * @param stream the stream
     * @param params the {@code void*} table, one entry per kernel parameter
     */
    static void launchKernel(long func, int gx, int gy, int gz, int bx, int by, int bz, int smem, long stream,
                             MemorySegment params) {
        int st;
        try {
            st = (int) cuLaunchKernel.invokeExact(func, gx, gy, gz, bx, by, bz, smem, stream, params, MemorySegment.NULL);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (st != SUCCESS) {
            throw launchError(st, func, gx, gy, gz, bx, by, bz, smem, stream);
        }
    }

    private static GpuException launchError(int st, long func, int gx, int gy, int gz, int bx, int by, int bz,
                                            int smem, long stream) {
        return error(st, "cuLaunchKernel", "f=" + hex(func)
                + ", grid=[" + Integer.toUnsignedString(gx) + ", " + Integer.toUnsignedString(gy) + ", " + Integer.toUnsignedString(gz)
                + "], block=[" + Integer.toUnsignedString(bx) + ", " + Integer.toUnsignedString(by) + ", " + Integer.toUnsignedString(bz)
                + "], sharedMemBytes=" + Integer.toUnsignedString(smem) + ", hStream=" + hex(stream));
    }
}
