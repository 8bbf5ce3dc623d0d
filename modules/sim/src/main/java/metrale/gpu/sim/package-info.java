/**
 * The CPU simulator of a CUDA device: {@link metrale.gpu.sim.SimDevice} (the driver, with its fault
 * injection), and the kernel model apps use to write Java twins of their CUDA kernels:
 * {@link metrale.gpu.sim.SimKernels}, {@link metrale.gpu.sim.SimKernel},
 * {@link metrale.gpu.sim.SimLaunch}, the thread and block bodies, and the bounds-checked views.
 */
package metrale.gpu.sim;
