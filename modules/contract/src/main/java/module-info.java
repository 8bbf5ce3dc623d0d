// SPDX-License-Identifier: Apache-2.0
/**
 * The backend-agnostic contract suite of metrale-gpu: abstract JUnit 5 and jqwik classes that
 * every backend runs through one small subclass each, the kernels they launch ({@code contract.cu}
 * with its PTX and sm_90 cubin, and {@code ops.cu} with its PTX, as resources of package
 * {@code metrale.gpu.contract}), and the two
 * services the tests of this project find through {@link java.util.ServiceLoader}. A backend's
 * build depends on this module with test scope.
 *
 * <p><b>Services.</b> Both are also listed in {@code META-INF/services}, so the class path (where
 * the project's tests run) finds them as the module path does; having this module on either path
 * is what turns them on.
 * <ul>
 * <li>{@link metrale.gpu.spi.BackendProvider}: {@link metrale.gpu.contract.CountingDriverProvider},
 *     backend {@value metrale.gpu.contract.CountingDriver#BACKEND}, which wraps the backend named by
 *     option {@value metrale.gpu.contract.CountingDriver#INNER} and counts its driver calls. Its
 *     priority is the lowest and it is available only where another backend is, so an automatic
 *     choice never lands on it.</li>
 * <li>{@link java.lang.System.LoggerFinder}: {@link metrale.gpu.contract.TestLog}, which keeps the
 *     records of the {@code metrale.*} loggers for the tests that make the runtime warn on purpose,
 *     and writes them to the folder named by {@systemProperty metrale.test.log.dir} (the build sets
 *     {@code target/metrale-test-log}) instead of to the console.</li>
 * </ul>
 *
 * <p><b>Flags.</b> None; the backend under test may need its own ({@code --enable-native-access}
 * for CUDA).
 */
module metrale.gpu.contract {
    // The suite's signatures name Gpu, GpuBuilder, the SPI's Driver and the telemetry types.
    requires transitive metrale.gpu;
    // A backend's subclasses are JUnit Jupiter and jqwik test classes, and assert with AssertJ.
    requires transitive org.junit.jupiter.api;
    requires transitive net.jqwik.api;
    requires transitive org.assertj.core;

    exports metrale.gpu.contract;

    // CountingDriverProvider opens the backend it wraps by name.
    uses metrale.gpu.spi.BackendProvider;

    provides metrale.gpu.spi.BackendProvider with metrale.gpu.contract.CountingDriverProvider;
    provides java.lang.System.LoggerFinder with metrale.gpu.contract.TestLog;
}
