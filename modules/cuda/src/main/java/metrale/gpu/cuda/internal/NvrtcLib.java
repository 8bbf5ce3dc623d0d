// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * NVRTC ({@code libnvrtc}), the optional run-time CUDA C compiler: every function this backend
 * calls, declared once, and the one place an {@code nvrtcResult} becomes a {@link GpuException}.
 *
 * <p>The library is the one named by {@systemProperty metrale.nvrtc.library}, else the first of
 * {@code libnvrtc.so}, {@code libnvrtc.so.13}, {@code libnvrtc.so.12} that loads. It is opened on
 * first use ({@link Holder}); where none loads, {@link #compile} throws {@code NOT_SUPPORTED}
 * naming what was tried. NVRTC needs no context.
 */
final class NvrtcLib {

    /** The system property naming the NVRTC library. */
    static final String LIBRARY_PROPERTY = "metrale.nvrtc.library";

    /** {@code NVRTC_ERROR_COMPILATION}. */
    private static final int NVRTC_ERROR_COMPILATION = 6;

    private NvrtcLib() {
    }

    /** Loads NVRTC on first use; a failure is kept as the reason, never thrown from class init. */
    private static final class Holder {
        static final String NAME;
        static final String FAILURE;
        static final MethodHandle CREATE;
        static final MethodHandle COMPILE;
        static final MethodHandle PTX_SIZE;
        static final MethodHandle PTX;
        static final MethodHandle LOG_SIZE;
        static final MethodHandle LOG;
        static final MethodHandle DESTROY;
        static final MethodHandle ERROR_STRING;

        static {
            String prop = metrale.gpu.Setting.NVRTC_LIBRARY.text(null).orElse(null);
            List<String> candidates = prop != null
                    ? List.of(prop) : List.of("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12");
            SymbolLookup lib = null;
            String name = null;
            List<String> why = new ArrayList<>();
            for (String c : candidates) {
                try {
                    // Loaded for the life of the process, like the driver.
                    lib = SymbolLookup.libraryLookup(c, Arena.global());
                    name = c;
                    break;
                } catch (IllegalArgumentException e) {
                    why.add(c + ": " + e.getMessage());
                }
            }
            MethodHandle[] h = new MethodHandle[8];
            String failure = null;
            if (lib == null) {
                failure = "NVRTC did not load (tried " + String.join("; ", why) + "); set -D" + LIBRARY_PROPERTY
                        + "=/path/to/libnvrtc.so";
            } else {
                try {
                    Linker linker = Linker.nativeLinker();
                    SymbolLookup l = lib;
                    String n = name;
                    java.util.function.BiFunction<String, FunctionDescriptor, MethodHandle> get = (sym, fd) ->
                            linker.downcallHandle(l.find(sym).orElseThrow(
                                    () -> new UnsatisfiedLinkError(n + " has no symbol " + sym)), fd);
                    h[0] = get.apply("nvrtcCreateProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
                    h[1] = get.apply("nvrtcCompileProgram", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS));
                    h[2] = get.apply("nvrtcGetPTXSize", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
                    h[3] = get.apply("nvrtcGetPTX", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
                    h[4] = get.apply("nvrtcGetProgramLogSize", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
                    h[5] = get.apply("nvrtcGetProgramLog", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
                    h[6] = get.apply("nvrtcDestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));
                    h[7] = get.apply("nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
                } catch (UnsatisfiedLinkError e) {
                    failure = e.getMessage();
                    java.util.Arrays.fill(h, null);
                }
            }
            NAME = name;
            FAILURE = failure;
            CREATE = h[0];
            COMPILE = h[1];
            PTX_SIZE = h[2];
            PTX = h[3];
            LOG_SIZE = h[4];
            LOG = h[5];
            DESTROY = h[6];
            ERROR_STRING = h[7];
        }
    }

    /** {@return why NVRTC is unavailable, or {@code null} when it loaded} */
    static String unavailableReason() {
        return Holder.FAILURE;
    }

    /**
     * Compiles CUDA C to PTX with
     * {@snippet lang=c :
     * nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
     *                                int numHeaders, const char * const *headers, const char * const *includeNames);
     * nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char * const *options);
     * nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *logSizeRet);
     * nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log);
     * nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet);
     * nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx);
     * nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);
     * }
     *
     * @param name    the program's name, as the log shows it
     * @param source  CUDA C source
     * @param options compiler options
     * @return the PTX without its trailing NUL
     * @throws GpuException {@code NOT_SUPPORTED} when NVRTC did not load, {@code INVALID_SOURCE}
     *         holding the compiler log when compilation fails
     */
    static byte[] compile(String name, String source, List<String> options) {
        if (Holder.FAILURE != null) {
            throw new GpuException(CudaError.NOT_SUPPORTED, "nvrtcCreateProgram", Holder.FAILURE);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment progOut = arena.allocate(JAVA_LONG);
            check((int) Holder.CREATE.invokeExact(progOut, arena.allocateFrom(source), arena.allocateFrom(name),
                    0, MemorySegment.NULL, MemorySegment.NULL), "nvrtcCreateProgram", "name=" + name);
            long prog = progOut.get(JAVA_LONG, 0);
            try {
                MemorySegment opts = arena.allocate(ADDRESS, Math.max(1, options.size()));
                for (int i = 0; i < options.size(); i++) {
                    opts.setAtIndex(ADDRESS, i, arena.allocateFrom(options.get(i)));
                }
                int st = (int) Holder.COMPILE.invokeExact(prog, options.size(), opts);
                if (st != 0) {
                    String log = log(prog, arena);
                    if (st == NVRTC_ERROR_COMPILATION) {
                        throw new GpuException(CudaError.INVALID_SOURCE, "nvrtcCompileProgram",
                                "name=" + name + ", options=" + options + ", log:\n" + log);
                    }
                    throw error(st, "nvrtcCompileProgram", "name=" + name + ", options=" + options + ", log:\n" + log);
                }
                MemorySegment size = arena.allocate(JAVA_LONG);
                check((int) Holder.PTX_SIZE.invokeExact(prog, size), "nvrtcGetPTXSize", "name=" + name);
                long n = size.get(JAVA_LONG, 0);
                MemorySegment ptx = arena.allocate(Math.max(1, n));
                check((int) Holder.PTX.invokeExact(prog, ptx), "nvrtcGetPTX", "name=" + name);
                // The size counts the trailing NUL.
                long len = n > 0 && ptx.get(JAVA_BYTE, n - 1) == 0 ? n - 1 : n;
                return ptx.asSlice(0, len).toArray(JAVA_BYTE);
            } finally {
                progOut.set(JAVA_LONG, 0, prog);
                int ignored = (int) Holder.DESTROY.invokeExact(progOut); // a failed destroy leaks one program; nothing to report it to
            }
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("should not reach here", t);
        }
    }

    private static String log(long prog, Arena arena) throws Throwable {
        MemorySegment size = arena.allocate(JAVA_LONG);
        if ((int) Holder.LOG_SIZE.invokeExact(prog, size) != 0) {
            return "(no log)";
        }
        long n = size.get(JAVA_LONG, 0);
        if (n <= 1) {
            return "";
        }
        MemorySegment buf = arena.allocate(n);
        if ((int) Holder.LOG.invokeExact(prog, buf) != 0) {
            return "(no log)";
        }
        return buf.getString(0);
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
        String text;
        try {
            MemorySegment s = (MemorySegment) Holder.ERROR_STRING.invokeExact(status);
            text = s.equals(MemorySegment.NULL) ? "?" : s.reinterpret(4096).getString(0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("should not reach here", t);
        }
        CudaError e = switch (status) {
            case 1 -> CudaError.OUT_OF_MEMORY;
            case 3, 4, 5 -> CudaError.INVALID_VALUE;
            case NVRTC_ERROR_COMPILATION -> CudaError.INVALID_SOURCE;
            default -> CudaError.UNKNOWN;
        };
        return new GpuException(e, e == CudaError.UNKNOWN ? status : e.code(), function,
                args + "; nvrtc: " + text + " (nvrtcResult " + status + ")", null);
    }

    /** {@return the loaded library's name, or {@code null}} */
    static String libraryName() {
        return Holder.NAME;
    }
}
