// SPDX-License-Identifier: Apache-2.0
/**
 * The metrale-gpu simulator: a CPU backend that keeps the CUDA driver's rules, so host code that
 * drives a GPU is tested without one.
 *
 * <p><b>Exports.</b> {@code metrale.gpu.sim}: {@link metrale.gpu.sim.SimControls} (reached from an
 * app with {@code gpu.unwrap(SimControls.class)} for fault injection, the schedule seed and the
 * capacity) and the kernel model apps write Java twins against ({@link metrale.gpu.sim.SimKernels},
 * {@link metrale.gpu.sim.SimKernel}, {@link metrale.gpu.sim.SimLaunch} and its views). The driver
 * and its parts live in the non-exported {@code metrale.gpu.sim.internal}, so an application cannot
 * allocate behind the runtime's ledger.
 *
 * <p><b>Provides</b> {@link metrale.gpu.spi.BackendProvider} as
 * {@link metrale.gpu.sim.SimBackendProvider}: name {@code sim}, priority 0, always available. It is
 * also listed in {@code META-INF/services} for the class path.
 *
 * <p><b>Options</b> it reads: a {@code GpuBuilder.backendOption(KEY, value)}, else the system
 * property {@code metrale.KEY}, else the environment variable shown
 * ({@link metrale.gpu.spi.DriverConfig}):
 * <ul>
 * <li>{@code sim.capacity} ({@systemProperty metrale.sim.capacity}, {@code METRALE_SIM_CAPACITY}):
 *     device memory in bytes; default 4294967296 (4 GiB).</li>
 * <li>{@code sim.seed} ({@systemProperty metrale.sim.seed}, {@code METRALE_SIM_SEED}): the seed of
 *     the schedule that interleaves ready streams; default 0.</li>
 * <li>{@code sim.sms} ({@systemProperty metrale.sim.sms}, {@code METRALE_SIM_SMS}): the SM count
 *     the device reports; default 132.</li>
 * <li>{@code sim.fill} ({@systemProperty metrale.sim.fill}, {@code METRALE_SIM_FILL}): the byte new
 *     memory is filled with, as CUDA does not zero it; default 171 (0xAB).</li>
 * <li>{@code sim.initcheck} ({@systemProperty metrale.sim.initcheck}, {@code METRALE_SIM_INITCHECK}):
 *     {@code true} records reads of device memory never written, reached through
 *     {@link metrale.gpu.sim.SimInitCheck}; default {@code false}.</li>
 * <li>{@code sim.blocks} ({@systemProperty metrale.sim.blocks}, {@code METRALE_SIM_BLOCKS}): how
 *     a grid's blocks run: {@code ordered} (default, deterministic), {@code shuffled} (one thread,
 *     an order drawn from {@code sim.seed}) or {@code parallel} (several threads).</li>
 * <li>{@code sim.process} ({@systemProperty metrale.sim.process}, {@code METRALE_SIM_PROCESS}):
 *     {@code shared} (default), the JVM's one simulated process, where a sticky fault poisons every
 *     simulator runtime of the process, open or opened later, as on a GPU; or {@code fresh}, a
 *     simulated process of the runtime's own, which is what tests use.</li>
 * <li>{@code sim.ptx} ({@systemProperty metrale.sim.ptx}, {@code METRALE_SIM_PTX}): how the PTX
 *     engine runs a kernel's own PTX: {@code compiled} (default, each kernel compiled once to JVM
 *     bytecode) or {@code interpreted}; both give the same results.</li>
 * <li>{@code sim.twins}, an object option ({@code GpuBuilder.backendOption(String, Object)} only):
 *     a {@link metrale.gpu.sim.SimTwins} table the runtime looks twins up in before
 *     {@link metrale.gpu.sim.SimKernels}.</li>
 * </ul>
 *
 * <p><b>Flags.</b> None: the simulator allocates native memory through {@code java.lang.foreign}
 * arenas but makes no downcalls.
 */
module metrale.gpu.sim {
    // Driver, DeviceInfo, CudaError and Dim3 appear in the exported signatures.
    requires transitive metrale.gpu;

    exports metrale.gpu.sim;

    provides metrale.gpu.spi.BackendProvider with metrale.gpu.sim.SimBackendProvider;
}
