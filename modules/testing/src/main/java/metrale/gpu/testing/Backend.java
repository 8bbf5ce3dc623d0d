// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

/**
 * A backend a {@link GpuTest} runs on.
 *
 * <pre>{@code
 * @GpuTest(backends = Backend.SIM)              // a simulator-only test: no [cuda] run
 * void usesTheSimulatorsClock(Gpu gpu, SimControls sim) { ... }
 *
 * @GpuTest
 * void reportsItsBackend(Gpu gpu, Backend backend) {
 *     assertEquals(backend.id(), gpu.backendName());
 * }
 * }</pre>
 */
public enum Backend {
    /** The CPU simulator, {@code metrale.gpu.sim}: always available. */
    SIM("sim"),
    /** The CUDA driver, {@code metrale.gpu.cuda}: where a driver loads. */
    CUDA("cuda");

    private final String id;

    Backend(String id) {
        this.id = id;
    }

    /** {@return the name {@code Gpu.open} knows it by: {@code sim} or {@code cuda}} */
    public String id() {
        return id;
    }
}
