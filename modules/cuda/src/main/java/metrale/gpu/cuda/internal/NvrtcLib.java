// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * The checked half of the NVRTC binding, the optional run-time CUDA C compiler: {@link #compile},
 * and the one place an {@code nvrtcResult} becomes a {@link GpuException}. The raw downcalls are
 * generated into {@link LibNvrtc} from {@code src/main/bindings/nvrtc.txt}.
 *
 * <p>The library is the one named by {@systemProperty metrale.nvrtc.library}, else the first of
 * {@code libnvrtc.so}, {@code libnvrtc.so.13}, {@code libnvrtc.so.12} that loads, opened on first
 * use; where none loads, {@link #compile} throws {@code NOT_SUPPORTED} naming what was tried.
 * NVRTC needs no context.
 */
final class NvrtcLib {

    /** {@code NVRTC_ERROR_COMPILATION}. */
    private static final int NVRTC_ERROR_COMPILATION = 6;

    private NvrtcLib() {
    }

    /**
     * Compiles CUDA C to PTX: create the program, compile it, read the PTX (or the log), destroy it.
     *
     * @param name    the program's name, as the log shows it
     * @param source  CUDA C source
     * @param options compiler options
     * @return the PTX without its trailing NUL
     * @throws GpuException {@code NOT_SUPPORTED} when NVRTC did not load, {@code INVALID_SOURCE}
     *         holding the compiler log when compilation fails
     */
    static byte[] compile(String name, String source, List<String> options) {
        if (LibNvrtc.LIB.failure().isPresent()) {
            throw new GpuException(CudaError.NOT_SUPPORTED, "nvrtcCreateProgram", LibNvrtc.LIB.failure().get());
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment progOut = arena.allocate(JAVA_LONG);
            check(LibNvrtc.nvrtcCreateProgram(progOut, arena.allocateFrom(source), arena.allocateFrom(name),
                    0, MemorySegment.NULL, MemorySegment.NULL), "nvrtcCreateProgram", "name=" + name);
            long prog = progOut.get(JAVA_LONG, 0);
            try {
                MemorySegment opts = arena.allocate(ADDRESS, Math.max(1, options.size()));
                for (int i = 0; i < options.size(); i++) {
                    opts.setAtIndex(ADDRESS, i, arena.allocateFrom(options.get(i)));
                }
                int st = LibNvrtc.nvrtcCompileProgram(prog, options.size(), opts);
                if (st != 0) {
                    String args = "name=" + name + ", options=" + options + ", log:\n" + log(prog, arena);
                    throw st == NVRTC_ERROR_COMPILATION
                            ? new GpuException(CudaError.INVALID_SOURCE, "nvrtcCompileProgram", args)
                            : error(st, "nvrtcCompileProgram", args);
                }
                MemorySegment size = arena.allocate(JAVA_LONG);
                check(LibNvrtc.nvrtcGetPTXSize(prog, size), "nvrtcGetPTXSize", "name=" + name);
                long n = size.get(JAVA_LONG, 0);
                MemorySegment ptx = arena.allocate(Math.max(1, n));
                check(LibNvrtc.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX", "name=" + name);
                // The size counts the trailing NUL.
                long len = n > 0 && ptx.get(JAVA_BYTE, n - 1) == 0 ? n - 1 : n;
                return ptx.asSlice(0, len).toArray(JAVA_BYTE);
            } finally {
                progOut.set(JAVA_LONG, 0, prog);
                LibNvrtc.nvrtcDestroyProgram(progOut); // a failed destroy leaks one program; nothing to report it to
            }
        }
    }

    private static String log(long prog, Arena arena) {
        MemorySegment size = arena.allocate(JAVA_LONG);
        if (LibNvrtc.nvrtcGetProgramLogSize(prog, size) != 0) {
            return "(no log)";
        }
        long n = size.get(JAVA_LONG, 0);
        if (n <= 1) {
            return "";
        }
        MemorySegment buf = arena.allocate(n);
        return LibNvrtc.nvrtcGetProgramLog(prog, buf) != 0 ? "(no log)" : buf.getString(0);
    }

    private static void check(int status, String function, String args) {
        if (status != 0) {
            throw error(status, function, args);
        }
    }

    /**
     * Turns a failed {@code nvrtcResult} into an exception: out of memory, bad input, program or
     * option, and a failed compilation map to their {@link CudaError}s; the rest to
     * {@code UNKNOWN} with the raw code.
     */
    private static GpuException error(int status, String function, String args) {
        MemorySegment s = LibNvrtc.nvrtcGetErrorString(status);
        String text = s.equals(MemorySegment.NULL) ? "?" : s.reinterpret(4096).getString(0);
        CudaError e = switch (status) {
            case 1 -> CudaError.OUT_OF_MEMORY;
            case 3, 4, 5 -> CudaError.INVALID_VALUE;
            case NVRTC_ERROR_COMPILATION -> CudaError.INVALID_SOURCE;
            default -> CudaError.UNKNOWN;
        };
        return new GpuException(e, e == CudaError.UNKNOWN ? status : e.code(), function,
                args + "; nvrtc: " + text + " (nvrtcResult " + status + ")", null);
    }
}
