/**
 * The simulator's driver ({@link metrale.gpu.sim.internal.SimDevice}) and its parts: the fake
 * address space, the scheduler, streams, events, captures, graphs, modules and the kernel launch
 * machinery. Not exported: applications reach the simulator through
 * {@link metrale.gpu.sim.SimControls} and the kernel model.
 */
package metrale.gpu.sim.internal;
