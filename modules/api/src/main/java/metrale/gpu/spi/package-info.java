// SPDX-License-Identifier: Apache-2.0
/**
 * The driver SPI: the raw device operations a backend implements.
 *
 * <p>A backend module {@code provides} a {@link metrale.gpu.spi.BackendProvider}; the runtime core
 * in {@code metrale.gpu} finds it with {@link java.util.ServiceLoader}, opens a
 * {@link metrale.gpu.spi.Driver}, and layers every policy (ledger, red zones, telemetry, the fault
 * latch, debug sync) on top. A driver holds no policy: it does what the CUDA driver API call of
 * the same name does, with CUDA's error codes, and nothing more.
 */
package metrale.gpu.spi;
