// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static metrale.gpu.cuda.internal.CudaLib.SUCCESS;
import static metrale.gpu.cuda.internal.CudaLib.check;
import static metrale.gpu.cuda.internal.CudaLib.outLong;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/** Modules, their functions and kernel launches. */
final class CuModule {

    /** A kernel has at most 32764 bytes of parameters, hence at most 32764 parameters. */
    private static final int MAX_PARAMS = 32764;

    private CuModule() {
    }

    /**
     * Loads PTX, a cubin or a fatbin. PTX must be NUL-terminated, so the image is copied with a trailing 0.
     *
     * @param name the module's name, for messages
     */
    static long loadData(String name, byte[] image) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment img = arena.allocate(image.length + 1L, 16); // zeroed: the last byte is the NUL
            MemorySegment.copy(image, 0, img, JAVA_BYTE, 0, image.length);
            return outLong(out -> LibCuda.cuModuleLoadData(out, img), "cuModuleLoadData", "module=%s, image=%d bytes",
                    name, image.length);
        }
    }

    static void unload(long module) {
        check(LibCuda.cuModuleUnload(module), "cuModuleUnload", "hmod=%#x", module);
    }

    /** {@return the function of a (mangled) name} */
    static long getFunction(long module, String func) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocateFrom(func);
            return outLong(out -> LibCuda.cuModuleGetFunction(out, module, name), "cuModuleGetFunction", "hmod=%#x, name=%s",
                    module, func);
        }
    }

    /** Sets a {@code CU_FUNC_ATTRIBUTE_*}. */
    static void setAttribute(long func, int attribute, int value) {
        check(LibCuda.cuFuncSetAttribute(func, attribute, value), "cuFuncSetAttribute", "hfunc=%#x, attrib=%d, value=%d",
                func, attribute, value);
    }

    /** {@return a kernel's parameter count}; optional: see {@link CudaLib#HAS_FUNC_GET_PARAM_COUNT} */
    static int paramCount(long func) {
        if (!CudaLib.HAS_FUNC_GET_PARAM_COUNT) {
            throw CudaLib.notSupported("cuFuncGetParamCount");
        }
        return (int) outLong(out -> LibCuda.cuFuncGetParamCount(func, out), "cuFuncGetParamCount", "func=%#x", func);
    }

    /**
     * The sizes of a kernel's {@code count} parameters, by {@code cuFuncGetParamInfo} for index 0 to
     * {@code count - 1}: every call is one that succeeds, so a run under compute-sanitizer reports
     * nothing. Optional: see {@link CudaLib#HAS_FUNC_GET_PARAM_INFO}.
     *
     * @param count the parameter count, from {@link #paramCount} or the module's PTX
     * @return each parameter's size in bytes, in order
     */
    static int[] paramSizes(long func, int count) {
        return sizes(func, count, false);
    }

    /**
     * The parameter sizes of a kernel whose count is not known (a cubin or fatbin on a driver
     * without {@code cuFuncGetParamCount}): {@code cuFuncGetParamInfo} for index 0, 1, ... until it
     * reports {@code CUDA_ERROR_INVALID_VALUE} past the last. That last call is a failing API call,
     * which compute-sanitizer reports; {@link #paramSizes} avoids it wherever the count is known.
     */
    static int[] paramSizesProbing(long func) {
        return sizes(func, MAX_PARAMS + 1, true);
    }

    private static int[] sizes(long func, int count, boolean probing) {
        if (!CudaLib.HAS_FUNC_GET_PARAM_INFO) {
            throw CudaLib.notSupported("cuFuncGetParamInfo");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment offset = arena.allocate(JAVA_LONG);
            MemorySegment size = arena.allocate(JAVA_LONG);
            String format = probing ? "func=%#x, paramIndex=%d" : "func=%#x, paramIndex=%d of " + count;
            int[] sizes = new int[Math.min(count, 8)];
            int n = 0;
            for (; n < count; n++) {
                int st = LibCuda.cuFuncGetParamInfo(func, n, offset, size);
                if (probing && st == CudaError.INVALID_VALUE.code()) {
                    break;
                }
                check(st, "cuFuncGetParamInfo", format, func, n);
                if (n == sizes.length) {
                    sizes = Arrays.copyOf(sizes, n * 2);
                }
                sizes[n] = (int) size.get(JAVA_LONG, 0);
            }
            return Arrays.copyOf(sizes, n);
        }
    }

    /**
     * {@code cuLaunchKernel} with {@code extra} NULL. The hot path: no allocation unless it fails.
     *
     * @param params the {@code void*} table, one entry per kernel parameter
     */
    static void launchKernel(long func, int gx, int gy, int gz, int bx, int by, int bz, int smem, long stream,
                             MemorySegment params) {
        int st = LibCuda.cuLaunchKernel(func, gx, gy, gz, bx, by, bz, smem, stream, params, MemorySegment.NULL);
        if (st != SUCCESS) {
            throw launchError(st, func, gx, gy, gz, bx, by, bz, smem, stream);
        }
    }

    private static GpuException launchError(int st, long func, int gx, int gy, int gz, int bx, int by, int bz,
                                            int smem, long stream) {
        return CudaLib.error(st, "cuLaunchKernel", "f=" + CudaLib.hex(func)
                + ", grid=[" + Integer.toUnsignedString(gx) + ", " + Integer.toUnsignedString(gy) + ", " + Integer.toUnsignedString(gz)
                + "], block=[" + Integer.toUnsignedString(bx) + ", " + Integer.toUnsignedString(by) + ", " + Integer.toUnsignedString(bz)
                + "], sharedMemBytes=" + Integer.toUnsignedString(smem) + ", hStream=" + CudaLib.hex(stream));
    }
}
