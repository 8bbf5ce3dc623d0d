// SPDX-License-Identifier: Apache-2.0
/**
 * The metrale-gpu test kit: GPU host code tested like the rest of an application's Java code.
 *
 * <p><b>Exports</b> {@code metrale.gpu.testing}: the JUnit 5 extension ({@link metrale.gpu.testing.GpuTest},
 * {@link metrale.gpu.testing.GpuExtension}) that gives each test a fresh simulator runtime, runs the
 * same test on CUDA where a driver loads, and fails a test that leaked device memory, damaged a red
 * zone, latched a fault it did not declare or read memory it never wrote, naming the sites;
 * {@link metrale.gpu.testing.TestGpus} and {@link metrale.gpu.testing.GpuChecks} for the same
 * runtimes and checks in jqwik properties; and {@link metrale.gpu.testing.GpuArbitraries}.
 *
 * <p><b>Requires</b> JUnit Jupiter's API and jqwik's API, which appear in its signatures (hence
 * {@code transitive}), and the simulator, whose twins and controls a test uses. It reads the system
 * property {@systemProperty metrale.gpu.required} (default {@code false}): when {@code true}, a
 * test's CUDA run fails instead of being skipped where no driver loads.
 *
 * <p><b>Flags.</b> None of its own; the CUDA backend, when it is on the path, needs
 * {@code --enable-native-access=metrale.gpu.cuda}.
 */
module metrale.gpu.testing {
    requires transitive metrale.gpu;
    // Twins, fault injection and the schedule seed are the simulator's types.
    requires transitive metrale.gpu.sim;
    requires transitive org.junit.jupiter.api;
    requires transitive net.jqwik.api;

    exports metrale.gpu.testing;
}
