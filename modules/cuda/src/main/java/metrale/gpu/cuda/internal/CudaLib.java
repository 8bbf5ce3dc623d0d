// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * The checked half of the libcuda binding: the one place a {@code CUresult} becomes a
 * {@link GpuException}, the capability flags, and the device queries. The raw downcalls are
 * generated into {@link LibCuda} from {@code src/main/bindings/cuda.txt}; the checked calls are
 * grouped by area as cudarc groups them: {@link CuCtx}, {@link CuMem}, {@link CuStream},
 * {@link CuEvent}, {@link CuGraph}, {@link CuModule}.
 *
 * <p><b>Calls.</b> Every call checks its status and throws through {@link #error}; no raw status
 * leaves the checked layer except as a {@link CudaError}. Opaque handles and {@code CUdeviceptr}
 * travel as {@code long}, {@code unsigned int} as {@code int} (same bits). A call's arguments are
 * formatted into its message only when it fails, so a call without an out-parameter allocates
 * nothing. Out-parameters live in a confined {@link Arena} opened for the call: per-thread buffers
 * would be per-virtual-thread allocations anyway, and every call with an out-parameter costs
 * microseconds in the driver.
 *
 * <p><b>Context.</b> These calls do not make a context current; {@link CudaDevice} does before
 * each call.
 */
final class CudaLib {

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

    static final int SUCCESS = 0;
    static final int NOT_READY = 600;

    /** The driver library's name as opened, for messages. */
    static final String LIBRARY = LibCuda.LIB.name();

    /** Whether the driver has {@code cuStreamIsCapturing} (SCALE, for one, lacks it). */
    static final boolean HAS_STREAM_IS_CAPTURING = LibCuda.cuStreamIsCapturing$PRESENT;
    /** Whether the driver has the stream-ordered allocator ({@code cuMemAllocAsync} and the {@code cuMemPool*} calls, CUDA 11.2+). */
    static final boolean HAS_MEM_POOLS = LibCuda.cuMemAllocAsync$PRESENT && LibCuda.cuMemFreeAsync$PRESENT
            && LibCuda.cuDeviceGetDefaultMemPool$PRESENT && LibCuda.cuMemPoolTrimTo$PRESENT
            && LibCuda.cuMemPoolGetAttribute$PRESENT && LibCuda.cuMemPoolSetAttribute$PRESENT;
    /** Whether the driver has {@code cuFuncGetParamInfo} (CUDA 12.4+), so launches can be checked against the kernel's signature. */
    static final boolean HAS_FUNC_GET_PARAM_INFO = LibCuda.cuFuncGetParamInfo$PRESENT;
    /** Whether the driver has {@code cuFuncGetParamCount} (CUDA 13.2+), so parameters are counted without a failing probe. */
    static final boolean HAS_FUNC_GET_PARAM_COUNT = LibCuda.cuFuncGetParamCount$PRESENT;
    /** {@code cuda.h} 12.8+ maps {@code cuEventElapsedTime} to {@code _v2}; older drivers export only the plain name. */
    static final String EVENT_ELAPSED_TIME = LibCuda.cuEventElapsedTime_v2$SYMBOL;
    /**
     * {@code cuda.h} 12.0+ maps {@code cuGraphExecKernelNodeSetParams} to {@code _v2}; the v1 struct is
     * the v2 struct's first 56 bytes, so one layout serves both.
     */
    static final String EXEC_KERNEL_NODE_SET_PARAMS = LibCuda.cuGraphExecKernelNodeSetParams_v2$SYMBOL;

    private CudaLib() {
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
        String name = errorText(LibCuda::cuGetErrorName, status);
        String text = errorText(LibCuda::cuGetErrorString, status);
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

    /** {@code cuGetErrorName} or {@code cuGetErrorString}. */
    private interface ErrorText {
        int get(int status, MemorySegment out);
    }

    /** {@return the driver's text for {@code status}, or {@code null} when it has none (an unknown code, or a driver shutting down)} */
    private static String errorText(ErrorText getter, int status) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int st = getter.get(status, out);
            MemorySegment s = out.get(ADDRESS, 0);
            // The driver returns a pointer to a static NUL-terminated string of unknown length.
            return st == SUCCESS && !s.equals(MemorySegment.NULL) ? s.reinterpret(4096).getString(0) : null;
        }
    }

    // A failed call's arguments, formatted only then: "%#x" for handles and addresses, "%d" for counts.

    static void check(int status, String function, String args) {
        if (status != SUCCESS) {
            throw error(status, function, args);
        }
    }

    static void check(int status, String function, String format, long a) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, a));
        }
    }

    static void check(int status, String function, String format, long a, long b) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, a, b));
        }
    }

    static void check(int status, String function, String format, long a, long b, long c) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, a, b, c));
        }
    }

    static void check(int status, String function, String format, long a, long b, long c, long d) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, a, b, c, d));
        }
    }

    static void check(int status, String function, String format, long a, long b, long c, long d, long e) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, a, b, c, d, e));
        }
    }

    static void check(int status, String function, String format, long a, long b, long c, long d, long e, long f) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, a, b, c, d, e, f));
        }
    }

    /** For calls that allocate anyway (out-parameters, strings): the arguments are boxed. */
    static void check(int status, String function, String format, Object... args) {
        if (status != SUCCESS) {
            throw error(status, function, String.format(Locale.ROOT, format, args));
        }
    }

    /** A call whose result is its one out-parameter. */
    interface OutCall {
        int call(MemorySegment out);
    }

    /** {@return the {@code long} (or handle) a call writes to its out-parameter} */
    static long outLong(OutCall call, String function, String format, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            check(call.call(out), function, format, args);
            return out.get(JAVA_LONG, 0);
        }
    }

    /** {@return the {@code int} (or enum) a call writes to its out-parameter} */
    static int outInt(OutCall call, String function, String format, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            check(call.call(out), function, format, args);
            return out.get(JAVA_INT, 0);
        }
    }

    static GpuException notSupported(String function) {
        return new GpuException(CudaError.NOT_SUPPORTED, function, LibCuda.LIB.missing(function));
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    // ---- initialization and devices ----------------------------------------------------------

    static void init(int flags) {
        check(LibCuda.cuInit(flags), "cuInit", "flags=%d", flags);
    }

    /** {@return the CUDA version the driver supports, e.g. 13000} */
    static int driverGetVersion() {
        return outInt(LibCuda::cuDriverGetVersion, "cuDriverGetVersion", "");
    }

    static int deviceGetCount() {
        return outInt(LibCuda::cuDeviceGetCount, "cuDeviceGetCount", "");
    }

    /** {@return the {@code CUdevice} of an ordinal} */
    static int deviceGet(int ordinal) {
        return outInt(out -> LibCuda.cuDeviceGet(out, ordinal), "cuDeviceGet", "ordinal=%d", ordinal);
    }

    /** {@return the device's name, e.g. {@code NVIDIA H200}} */
    static String deviceGetName(int device) {
        return text(256, (out, len) -> LibCuda.cuDeviceGetName(out, len, device), "cuDeviceGetName", device);
    }

    /** {@return {@code domain:bus:device.function}, e.g. {@code 0000:19:00.0}; 13 characters and a NUL (cuda.h), 64 leave room} */
    static String deviceGetPCIBusId(int device) {
        return text(64, (out, len) -> LibCuda.cuDeviceGetPCIBusId(out, len, device), "cuDeviceGetPCIBusId", device);
    }

    /** A call that writes a NUL-terminated string of at most {@code len} bytes. */
    private interface TextCall {
        int call(MemorySegment out, int len);
    }

    private static String text(int len, TextCall call, String function, int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(len);
            check(call.call(out, len), function, "len=%d, dev=%d", len, device);
            return out.getString(0);
        }
    }

    /** {@return the value of a {@code CU_DEVICE_ATTRIBUTE_*}} */
    static int deviceGetAttribute(int attribute, int device) {
        return outInt(out -> LibCuda.cuDeviceGetAttribute(out, attribute, device), "cuDeviceGetAttribute",
                "attrib=%d, dev=%d", attribute, device);
    }

    /** {@return the device's memory in bytes} */
    static long deviceTotalMem(int device) {
        return outLong(out -> LibCuda.cuDeviceTotalMem_v2(out, device), "cuDeviceTotalMem_v2", "dev=%d", device);
    }

    /** {@return whether {@code device} can access {@code peer}'s memory directly} */
    static boolean deviceCanAccessPeer(int device, int peer) {
        return outInt(out -> LibCuda.cuDeviceCanAccessPeer(out, device, peer), "cuDeviceCanAccessPeer",
                "dev=%d, peerDev=%d", device, peer) != 0;
    }
}
