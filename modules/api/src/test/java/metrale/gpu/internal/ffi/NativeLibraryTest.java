// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import metrale.gpu.Setting;
import org.junit.jupiter.api.Test;

/** The loader's wording of each failure, and linking, without any GPU library. */
class NativeLibraryTest {

    private static final NativeLibrary.Downcalls LINK = (s, fd) -> Linker.nativeLinker().downcallHandle(s, fd);

    /** A library of the given symbols only; their addresses are never called. */
    private static NativeLibrary.Opener fake(Set<String> exported) {
        return name -> symbol -> exported.contains(symbol) ? Optional.of(MemorySegment.ofAddress(8)) : Optional.empty();
    }

    private static NativeLibrary.Spec spec(List<String> defaults, List<List<String>> required) {
        // NCCL_LIBRARY has no default value of its own, so the spec's names are the ones tried.
        return new NativeLibrary.Spec("the test library", Setting.NCCL_LIBRARY, defaults, "the test kit",
                "the test library is too old", required, Map.of("fooNew", "TEST 2.0"));
    }

    @Test
    void aLibraryThatDoesNotLoadNamesEachNameTriedWithTheOsErrorAndTheProperty() {
        NativeLibrary lib = NativeLibrary.open(spec(List.of("libmetrale-none-a.so", "libmetrale-none-b.so"), List.of()),
                getClass().getModule(), n -> SymbolLookup.libraryLookup(n, Arena.global()), LINK);
        assertThat(lib.failure()).hasValueSatisfying(why -> assertThat(why)
                .startsWith("the test library did not load (tried libmetrale-none-a.so: ")
                .contains("; libmetrale-none-b.so")
                .endsWith("); install the test kit or set -Dmetrale.nccl.library=/path/to/libmetrale-none-a.so"));
        if (System.getProperty("os.name").startsWith("Linux")) {
            assertThat(lib.failure().orElseThrow()).as("dlerror's text").contains("cannot open shared object file");
        }
        assertThat(lib.name()).isEqualTo("libmetrale-none-a.so");
        assertThat(lib.has("anything")).isFalse();
        assertThatThrownBy(() -> lib.link("anything", FunctionDescriptor.ofVoid()))
                .isInstanceOf(UnsatisfiedLinkError.class).hasMessage(lib.failure().orElseThrow());
    }

    @Test
    void aMissingRequiredSymbolNamesTheSymbolTheLibraryTheVersionAndTheHint() {
        NativeLibrary lib = NativeLibrary.open(spec(List.of("libfake.so"), List.of(List.of("bar"), List.of("fooNew", "fooOld"))),
                getClass().getModule(), fake(Set.of("bar")), LINK);
        assertThat(lib.failure()).hasValue("libfake.so has no symbol fooNew or fooOld (TEST 2.0+): the test library is too old");
    }

    @Test
    void anyNameOfAFunctionWillDoAndTheFirstPresentIsBound() {
        NativeLibrary lib = NativeLibrary.open(spec(List.of("libfake.so"), List.of(List.of("fooNew", "fooOld"))),
                getClass().getModule(), fake(Set.of("fooOld")), LINK);
        assertThat(lib.failure()).isEmpty();
        assertThat(lib.firstPresent("fooNew", "fooOld")).isEqualTo("fooOld");
        assertThat(lib.has("fooNew")).isFalse();
        assertThat(lib.missing("fooNew")).isEqualTo("libfake.so has no symbol fooNew (TEST 2.0+): the test library is too old");
        assertThatThrownBy(() -> lib.link("fooNew", FunctionDescriptor.ofVoid()))
                .isInstanceOf(UnsatisfiedLinkError.class).hasMessage(lib.missing("fooNew"));
    }

    @Test
    void aLinkedFunctionIsCalled() throws Throwable {
        NativeLibrary lib = NativeLibrary.open(spec(List.of("libc"), List.of(List.of("strlen"))), getClass().getModule(),
                n -> Linker.nativeLinker().defaultLookup(), LINK);
        assertThat(lib.failure()).isEmpty();
        MethodHandle strlen = lib.link("strlen", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
        try (Arena a = Arena.ofConfined()) {
            assertThat((long) strlen.invokeExact(a.allocateFrom("metrale"))).isEqualTo(7L);
        }
    }

    @Test
    void nativeAccessIsReportedOnlyWhereItIsMissing() {
        // The tests run with --enable-native-access=ALL-UNNAMED.
        assertThat(NativeLibrary.nativeAccessProblem(getClass().getModule())).isNull();
        assertThat(NativeLibrary.nativeAccessProblem(Object.class.getModule())).isNull();
    }
}
