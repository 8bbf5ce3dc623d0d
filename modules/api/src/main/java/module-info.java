// SPDX-License-Identifier: Apache-2.0
/**
 * The metrale-gpu API that applications {@code requires}: {@link metrale.gpu.Gpu} and its values,
 * the runtime core that holds every policy, and the driver SPI that backends implement.
 *
 * <p><b>Exports.</b> {@code metrale.gpu} is the API. {@code metrale.gpu.spi} is exported for
 * backend modules ({@code metrale.gpu.cuda}, {@code metrale.gpu.sim}); applications need not
 * touch it, and it names nothing of the core. The runtime core lives in the non-exported
 * {@code metrale.gpu.internal}. One door of the core, {@code metrale.gpu.internal.access}, is
 * exported to {@code metrale.gpu.nccl} alone, which hands a runtime's streams and memory to NCCL
 * through it; no other module can read it. {@code metrale.gpu.internal.ffi}, the loader the
 * native bindings share, is exported to {@code metrale.gpu.cuda} and {@code metrale.gpu.nccl}
 * only.
 *
 * <p><b>Backends.</b> Put {@code metrale.gpu.sim} and/or {@code metrale.gpu.cuda} on the module
 * path; {@link metrale.gpu.Gpu#open()} finds them with {@link java.util.ServiceLoader}.
 *
 * <p><b>Options</b>, each declared once in the settings table {@link metrale.gpu.Setting} with its
 * grammar (a {@link metrale.gpu.GpuBuilder} call wins over the property, the property over the
 * environment variable):
 * <ul>
 * <li>{@systemProperty metrale.backend} / {@code METRALE_BACKEND}: {@code cuda} or {@code sim};
 *     default: CUDA when a driver loads, else the simulator.</li>
 * <li>{@systemProperty metrale.redzone} / {@code METRALE_REDZONE}: red-zone bytes after each
 *     buffer; default 0 (off).</li>
 * <li>{@systemProperty metrale.redzone.minIdx} / {@code METRALE_REDZONE_MIN_IDX}: first creation
 *     index that gets a red zone; default 0.</li>
 * <li>{@systemProperty metrale.quarantine} / {@code METRALE_QUARANTINE}: bytes of freed device
 *     memory held back from reuse; default 64 MiB when red zones are on, else 0.</li>
 * <li>{@systemProperty metrale.debugSync} / {@code METRALE_DEBUG_SYNC}: synchronize after every
 *     launch; default false.</li>
 * <li>{@systemProperty metrale.d2h.trace} / {@code METRALE_D2H_TRACE}: collect device-to-host
 *     copy sites; default false.</li>
 * <li>{@systemProperty metrale.timing} / {@code METRALE_TIMING}: per-kernel timing spans;
 *     default false.</li>
 * <li>{@systemProperty metrale.leakDetection} / {@code METRALE_LEAK_DETECTION}: how much of the
 *     creation sites of allocations and resources is recorded: {@code off}, {@code sampled}
 *     (default) or {@code all}; {@code metrale.allocSites} / {@code METRALE_ALLOC_SITES} is its
 *     deprecated predecessor, still read.</li>
 * <li>{@systemProperty metrale.leakDetection.sample} / {@code METRALE_LEAK_DETECTION_SAMPLE}: at
 *     {@code sampled}, one allocation in this many walks its stack; default 128;
 *     {@code metrale.allocSites.sample} / {@code METRALE_ALLOC_SITES_SAMPLE} is its deprecated
 *     predecessor, still read.</li>
 * <li>{@systemProperty metrale.allocator} / {@code METRALE_ALLOCATOR}: what {@code Gpu.alloc}
 *     uses: {@code driver} (default), {@code caching} (the runtime's pool) or {@code cuda}
 *     ({@code cuMemAllocAsync}).</li>
 * </ul>
 *
 * <p><b>Flags.</b> None for this module; the CUDA backend needs
 * {@code --enable-native-access=metrale.gpu.cuda}.
 */
// The qualified exports name metrale.gpu.cuda and metrale.gpu.nccl, which are built after this
// module: not missing modules.
@SuppressWarnings("module")
module metrale.gpu {
    // Telemetry types (Telemetry, LaunchTrace, ...) appear in the API's signatures.
    requires transitive metrale.telemetry;

    exports metrale.gpu;
    exports metrale.gpu.spi;
    // The collectives run NCCL on the runtime's driver streams: a friend's door, checked by the module system.
    exports metrale.gpu.internal.access to metrale.gpu.nccl;
    // The loader the CUDA and NCCL bindings share; it makes no restricted call itself.
    exports metrale.gpu.internal.ffi to metrale.gpu.cuda, metrale.gpu.nccl;

    uses metrale.gpu.spi.BackendProvider;
}
