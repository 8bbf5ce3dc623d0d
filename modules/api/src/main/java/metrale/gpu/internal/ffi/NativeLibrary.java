// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
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
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import metrale.gpu.Setting;

/**
 * The one loader of the native bindings (libcuda, NVRTC, NCCL): opens a library once, checks that
 * it exports every function its binding requires, links functions on demand, and is the one place
 * that words a missing library, a missing symbol or missing native access.
 *
 * <p>{@link #open} never throws: whatever stops the library from being used is kept as
 * {@link #failure()}, so a backend reports itself unavailable with the reason instead of failing
 * its class initializer. The library stays loaded for the life of the process: CUDA cannot be
 * unloaded safely while a context exists, and NCCL communicators may live until exit.
 */
public final class NativeLibrary {

    /**
     * What a generated binding declares of its library, from the directives of its prototype list.
     *
     * @param title    what the library is, as a message's subject, e.g. {@code the CUDA driver library}
     * @param setting  the setting that names the library; its value replaces {@code defaults}
     * @param defaults the names tried in order when the setting is not given; at least one
     * @param install  what to install, e.g. {@code the NVIDIA driver}
     * @param hint     why a symbol may be missing, e.g. {@code the CUDA driver is too old or not NVIDIA's}
     * @param required each required function as its exported names, any one of which will do
     * @param since    the version that added a function, by exported name, for messages
     */
    public record Spec(String title, Setting setting, List<String> defaults, String install, String hint,
                       List<List<String>> required, Map<String, String> since) {
    }

    /** {@code SymbolLookup.libraryLookup(name, Arena.global())}, called in the binding's module. */
    @FunctionalInterface
    public interface Opener {
        /**
         * Opens a library.
         *
         * @param name a library name or path
         * @return its symbols
         * @throws IllegalArgumentException when it does not load
         */
        SymbolLookup open(String name);
    }

    /** {@code Linker.nativeLinker().downcallHandle(symbol, descriptor)}, called in the binding's module. */
    @FunctionalInterface
    public interface Downcalls {
        /**
         * Links a function.
         *
         * @param symbol     the function's address
         * @param descriptor its signature
         * @return the downcall handle
         */
        MethodHandle link(MemorySegment symbol, FunctionDescriptor descriptor);
    }

    /** {@code RTLD_LAZY}, as the JDK opens libraries. */
    private static final int RTLD_LAZY = 1;
    /** The most of a loader's message that is read. */
    private static final long MAX_TEXT = 4096;

    private final Spec spec;
    private final String name;
    private final SymbolLookup symbols;
    private final String failure;
    private final Downcalls downcalls;

    private NativeLibrary(Spec spec, String name, SymbolLookup symbols, String failure, Downcalls downcalls) {
        this.spec = spec;
        this.name = name;
        this.symbols = symbols;
        this.failure = failure;
        this.downcalls = downcalls;
    }

    /**
     * Opens the library a binding declares: the setting's value, else each default name in turn
     * until one loads. Never throws.
     *
     * @param spec      the declaration
     * @param module    the binding's module, which must have native access
     * @param opener    the binding's {@code SymbolLookup.libraryLookup}
     * @param downcalls the binding's {@code Linker.downcallHandle}
     * @return the library, loaded or holding the reason it cannot be used
     */
    public static NativeLibrary open(Spec spec, Module module, Opener opener, Downcalls downcalls) {
        List<String> names = spec.setting().text(null).map(String::trim).filter(s -> !s.isEmpty())
                .map(List::of).orElse(spec.defaults());
        String noAccess = nativeAccessProblem(module);
        if (noAccess != null) {
            return new NativeLibrary(spec, names.getFirst(), null, noAccess, downcalls);
        }
        List<String> tried = new ArrayList<>();
        try {
            for (String n : names) {
                SymbolLookup lookup;
                try {
                    lookup = opener.open(n);
                } catch (IllegalArgumentException e) {
                    tried.add(osError(n, downcalls).orElse(n + ": " + e.getMessage()));
                    continue;
                }
                NativeLibrary lib = new NativeLibrary(spec, n, lookup, null, downcalls);
                for (List<String> any : spec.required()) {
                    if (any.stream().noneMatch(lib::has)) {
                        return new NativeLibrary(spec, n, lookup, lib.missing(any), downcalls);
                    }
                }
                return lib;
            }
        } catch (RuntimeException | LinkageError e) {
            tried.add(e.toString());
        }
        return new NativeLibrary(spec, names.getFirst(), null, spec.title() + " did not load (tried "
                + String.join("; ", tried) + "); install " + spec.install() + " or set -D" + spec.setting().property()
                + "=/path/to/" + spec.defaults().getFirst(), downcalls);
    }

    /**
     * The one wording of missing native access, for a binding's module.
     *
     * @param module the module that makes the restricted calls
     * @return what is wrong and the flag that fixes it, or {@code null} when native access is enabled
     */
    public static String nativeAccessProblem(Module module) {
        if (module.isNativeAccessEnabled()) {
            return null;
        }
        String flag = module.isNamed() ? module.getName() : "ALL-UNNAMED";
        return "native access is not enabled for " + (module.isNamed() ? "module " + flag : "the class path")
                + ": start java with --enable-native-access=" + flag;
    }

    /**
     * The loader's reason for {@code name} not loading: {@code dlerror()} of a second
     * {@code dlopen}, since the JDK's exception says only "Cannot open library". Empty where libc
     * lacks the functions or the second attempt loads. The text is copied out with {@code strnlen}
     * and {@code memcpy}: reading it in place would take {@code reinterpret}, a restricted method.
     */
    private static Optional<String> osError(String name, Downcalls downcalls) {
        SymbolLookup libc = Linker.nativeLinker().defaultLookup();
        List<MemorySegment> fns = new ArrayList<>();
        for (String f : List.of("dlopen", "dlerror", "strnlen", "memcpy")) {
            Optional<MemorySegment> a = libc.find(f);
            if (a.isEmpty()) {
                return Optional.empty();
            }
            fns.add(a.get());
        }
        MethodHandle dlopen = downcalls.link(fns.get(0), FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        MethodHandle dlerror = downcalls.link(fns.get(1), FunctionDescriptor.of(ADDRESS));
        MethodHandle strnlen = downcalls.link(fns.get(2), FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG));
        MethodHandle memcpy = downcalls.link(fns.get(3), FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment handle = (MemorySegment) dlopen.invokeExact(arena.allocateFrom(name), RTLD_LAZY);
            MemorySegment text = handle.equals(MemorySegment.NULL) ? (MemorySegment) dlerror.invokeExact() : MemorySegment.NULL;
            if (text.equals(MemorySegment.NULL)) {
                return Optional.empty();
            }
            long n = (long) strnlen.invokeExact(text, MAX_TEXT);
            MemorySegment copy = arena.allocate(n + 1);
            MemorySegment ignored = (MemorySegment) memcpy.invokeExact(copy, text, n);
            String why = copy.getString(0);
            return Optional.of(why.startsWith(name) ? why : name + ": " + why);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("should not reach here", t);
        }
    }

    /** {@return why the library cannot be used (not loaded, no native access, a required symbol missing), or empty when it can} */
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    /** {@return the library's name as opened, or the first name tried when none loaded} */
    public String name() {
        return name;
    }

    /**
     * Whether the library exports a symbol.
     *
     * @param symbol the exported name
     * @return {@code true} when the library loaded and exports it
     */
    public boolean has(String symbol) {
        return symbols != null && symbols.find(symbol).isPresent();
    }

    /**
     * The first of several exported names of one function that the library has, for a function
     * that newer headers map to a {@code _v2}.
     *
     * @param names the names, newest first
     * @return the first the library exports, else the first
     */
    public String firstPresent(String... names) {
        for (String n : names) {
            if (has(n)) {
                return n;
            }
        }
        return names[0];
    }

    /**
     * The one wording of a missing symbol: which symbol, which library, since when it exists and
     * why it may be missing.
     *
     * @param symbol the exported name
     * @return e.g. {@code libcuda.so.1 has no symbol cuFuncGetParamInfo (CUDA 12.4+): the CUDA driver is too old}
     */
    public String missing(String symbol) {
        return missing(List.of(symbol));
    }

    private String missing(List<String> any) {
        String since = any.stream().map(spec.since()::get).filter(Objects::nonNull).findFirst()
                .map(s -> " (" + s + "+)").orElse("");
        return name + " has no symbol " + String.join(" or ", any) + since + ": " + spec.hint();
    }

    /**
     * Links a function; generated holders call this once each, on the function's first call.
     *
     * @param symbol     the exported name
     * @param descriptor its signature
     * @return the downcall handle
     * @throws UnsatisfiedLinkError naming {@link #failure()} or the missing symbol
     */
    public MethodHandle link(String symbol, FunctionDescriptor descriptor) {
        if (symbols == null) {
            throw new UnsatisfiedLinkError(failure);
        }
        MemorySegment address = symbols.find(symbol).orElseThrow(() -> new UnsatisfiedLinkError(missing(symbol)));
        return downcalls.link(address, descriptor);
    }

    @Override
    public String toString() {
        return "NativeLibrary[" + name + (failure == null ? "" : ": " + failure) + "]";
    }
}
