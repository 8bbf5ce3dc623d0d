// SPDX-License-Identifier: Apache-2.0
/**
 * The metrale-gpu API: open a {@link metrale.gpu.Gpu}, own device memory, copy, launch kernels
 * on streams, capture and replay CUDA graphs, and find bugs with the allocation ledger, red zones
 * and the launch trace.
 */
package metrale.gpu;
