// SPDX-License-Identifier: Apache-2.0
/**
 * The test kit. Annotate a test method with {@link metrale.gpu.testing.GpuTest} and give it a
 * {@link metrale.gpu.Gpu} parameter:
 *
 * <pre>{@code
 * @GpuTest(redZoneBytes = 256)
 * void stepKeepsTheBoundary(Gpu gpu) {
 *     DevicePtr p = gpu.alloc(4096);
 *     // ...
 *     gpu.free(p);
 * }
 * }</pre>
 *
 * <p>The method runs once per backend ({@code [sim]}, and {@code [cuda]} where a driver loads),
 * each time on a fresh runtime; afterwards the runtime is checked ({@link metrale.gpu.testing.GpuChecks})
 * and closed.
 */
package metrale.gpu.testing;
