/**
 * The CPU simulator of a CUDA device, as applications see it: {@link metrale.gpu.sim.SimControls}
 * (fault injection, schedule seed, capacity), and the kernel model apps use to write Java twins of
 * their CUDA kernels: {@link metrale.gpu.sim.SimKernels}, {@link metrale.gpu.sim.SimKernel},
 * {@link metrale.gpu.sim.SimLaunch}, the thread and block bodies, and the bounds-checked views.
 * The driver itself is in the module's non-exported {@code internal} package.
 */
package metrale.gpu.sim;
