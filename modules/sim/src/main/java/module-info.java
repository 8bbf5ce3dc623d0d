/**
 * The metrale-gpu simulator: a CPU backend that keeps the CUDA driver's rules, so host code that
 * drives a GPU is tested without one.
 *
 * <p><b>Exports.</b> {@code metrale.gpu.sim}: {@link metrale.gpu.sim.SimDevice} (reached from an app
 * with {@code gpu.unwrap(SimDevice.class)} for fault injection and the schedule seed) and the kernel
 * model apps write Java twins against ({@link metrale.gpu.sim.SimKernels},
 * {@link metrale.gpu.sim.SimKernel}, {@link metrale.gpu.sim.SimLaunch} and its views). The
 * implementation classes in that package are package-private.
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
