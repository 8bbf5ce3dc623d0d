// SPDX-License-Identifier: Apache-2.0
/**
 * The heat-diffusion demo ({@link metrale.examples.HeatDemo}), its kernels' Java twins
 * ({@link metrale.examples.HeatKernels}) and its plain-Java reference
 * ({@link metrale.examples.HeatReference}).
 */
package metrale.examples;
