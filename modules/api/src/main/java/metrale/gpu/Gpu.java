// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import metrale.telemetry.Telemetry;

/**
 * A GPU runtime on one device: memory you own, copies, kernels on streams, CUDA graphs, and the
 * tools to find your own bugs (the allocation ledger, red zones, the launch trace).
 *
 * <pre>{@code
 * try (Gpu gpu = Gpu.open();                        // CUDA when a driver loads, else the simulator
 *      KernelArgs args = new KernelArgs();
 *      DeviceBuffer x = gpu.allocBuffer(4L * n)) {
 *     gpu.loadModule("saxpy", ptxBytes);
 *     KernelHandle k = gpu.kernel("saxpy", "saxpy");
 *     x.copyFrom(hostFloats);
 *     gpu.launch(k, LaunchConfig.forElements(n, 256), Stream.DEFAULT, args.clear().f32(2f).ptr(x.ptr()).i32(n));
 *     gpu.synchronize(Stream.DEFAULT);
 * }
 * }</pre>
 *
 * <p><b>Backends.</b> {@link #open()} finds backends with {@link java.util.ServiceLoader}: the one
 * named by {@link GpuBuilder#backend}, the system property {@code metrale.backend} or the
 * environment variable {@code METRALE_BACKEND}; with none named, CUDA when a driver loads and the
 * simulator otherwise. The choice is logged through {@link System.Logger}.
 *
 * <p><b>Errors.</b> Failures are {@link GpuException}s naming the CUDA error (name and number),
 * the call and its arguments. Bad host input (null, wrong sizes, closed segments) is an
 * {@link IllegalArgumentException}, {@link NullPointerException} or
 * {@link IndexOutOfBoundsException} thrown before anything reaches the device. After a sticky
 * device fault (an illegal address, a trap) every call fails fast with a
 * {@link StickyFaultException} naming the original fault; {@link #close()} still completes.
 *
 * <p><b>Threads.</b> Every method is safe to call from any thread, platform or virtual.
 *
 * <p><b>Lifecycle.</b> {@link #close()} is idempotent: it frees what the ledger still holds,
 * logs each leak with its call site, and releases the device. Any other call after it throws
 * {@link IllegalStateException}.
 */
public interface Gpu extends AutoCloseable {

    // ---- opening --------------------------------------------------------------------------

    /**
     * Opens the default backend with options from system properties and the environment.
     *
     * @return a new runtime, owned by the caller
     * @throws GpuException if no backend can be opened
     */
    static Gpu open() {
        return builder().open();
    }

    /**
     * Opens the named backend.
     *
     * @param backend {@code cuda} or {@code sim}
     * @return a new runtime, owned by the caller
     * @throws IllegalArgumentException if no backend on the path has that name, listing those there are
     * @throws GpuException if that backend is unavailable, naming why
     */
    static Gpu open(String backend) {
        return builder().backend(backend).open();
    }

    /** {@return a builder for a runtime with explicit options} */
    static GpuBuilder builder() {
        return new GpuBuilder();
    }

    /** {@return every backend on the module or class path, with whether it can be opened here} */
    static List<BackendInfo> backends() {
        return metrale.gpu.internal.Backends.discover();
    }

    /**
     * Lists the devices of the backend {@link #open()} would choose, with options from system
     * properties and the environment (the simulator's count is {@code metrale.sim.devices}).
     *
     * @return the devices, by ordinal
     * @throws GpuException if no backend is available, or it cannot list devices
     */
    static List<GpuDevice> devices() {
        return builder().devices();
    }

    /**
     * A backend found on the path.
     *
     * @param name      its name
     * @param priority  its preference when none is named
     * @param available whether it can be opened here
     * @param reason    why not, when it cannot
     */
    record BackendInfo(String name, int priority, boolean available, String reason) {
    }

    // ---- identity ---------------------------------------------------------------------------

    /** {@return the backend's name, {@code cuda} or {@code sim}} */
    String backendName();

    /** {@return the device's name, memory, SM count and compute capability} */
    DeviceInfo device();

    /** {@return the ordinal of this runtime's device among {@link #devices()}} */
    int deviceOrdinal();

    // ---- several devices -----------------------------------------------------------------------

    /**
     * {@return whether this runtime's device can access {@code peer}'s memory directly
     * ({@code cuDeviceCanAccessPeer})} {@code false} for the same device.
     *
     * @param peer an open runtime of the same backend
     * @throws IllegalArgumentException if {@code peer} is of another backend or closed
     */
    boolean canAccessPeer(Gpu peer);

    /**
     * Lets kernels and copies of this runtime address {@code peer}'s memory
     * ({@code cuCtxEnablePeerAccess}); a second call for the same peer is a no-op. Peer copies
     * ({@link #copyToPeer}) work without it.
     *
     * @param peer an open runtime of the same backend on another device
     * @throws IllegalArgumentException if {@code peer} is this runtime's device, of another backend or closed
     * @throws GpuException {@code PEER_ACCESS_UNSUPPORTED} where the devices cannot reach each other
     */
    void enablePeerAccess(Gpu peer);

    /**
     * Copies {@code bytes} from this runtime's memory to {@code dstGpu}'s ({@code cuMemcpyPeer});
     * returns when the copy is done, like {@link #copyD2D}. Both ranges are checked against the
     * ledger of their own runtime first. {@code dstGpu} may be this runtime.
     *
     * @param src    the source, in this runtime's memory
     * @param dstGpu the destination's runtime, of the same backend
     * @param dst    the destination, in {@code dstGpu}'s memory
     * @param bytes  the count; 0 is a no-op
     * @throws GpuException {@code INVALID_VALUE} naming the side whose range is not live memory of its runtime
     */
    void copyToPeer(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes);

    /**
     * As {@link #copyToPeer}, ordered on {@code stream} of this runtime
     * ({@code cuMemcpyPeerAsync}). Work on {@code dstGpu} is not ordered with it: record an event
     * on {@code stream} and wait for it there with {@link #streamWaitEvent(Stream, Gpu, Event)}.
     * The simulator runs the copy after the stream's earlier work, before the call returns.
     *
     * @param src    the source, in this runtime's memory
     * @param dstGpu the destination's runtime
     * @param dst    the destination, in {@code dstGpu}'s memory
     * @param bytes  the count; 0 is a no-op
     * @param stream a stream of this runtime
     */
    void copyToPeerAsync(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes, Stream stream);

    /**
     * Orders work across devices: later work on {@code stream} (of this runtime) waits for the work
     * recorded before {@code event} on {@code eventGpu} ({@code cuStreamWaitEvent} with another
     * context's event). The simulator waits for that work before the call returns.
     *
     * @param stream   a stream of this runtime
     * @param eventGpu the runtime that created {@code event}; may be this one
     * @param event    an event of {@code eventGpu}
     */
    void streamWaitEvent(Stream stream, Gpu eventGpu, Event event);

    /** {@return the options this runtime was opened with} */
    GpuOptions options();

    /** {@return this runtime's telemetry: launch trace, kernel audit, counters, timing} */
    Telemetry telemetry();

    /**
     * {@return the backend's controls, if it has controls of the given type} The simulator
     * exposes fault injection, schedules, capacity and its clock as {@code metrale.gpu.sim.SimControls}.
     * The driver itself is never returned: nothing can allocate behind the ledger.
     *
     * @param type the controls' type, for example {@code metrale.gpu.sim.SimControls}
     * @param <T>  the type
     */
    <T> Optional<T> unwrap(Class<T> type);

    /**
     * Declares device memory another library allocated in this runtime's context (a cuBLAS
     * workspace, an NCCL buffer, memory of another runtime on the same device), so this runtime's
     * copies, memsets, pointer checks and collectives accept pointers into it. The runtime never
     * frees it: not at {@link #close()}, not at {@link #sweepUnreleased()}; {@link #adoptedMemory()}
     * and {@link #allocReport} list it as foreign with the caller's site. Its owner frees it, after
     * {@link #releaseAdoption}. The range is taken on trust: that it is live device memory of this
     * context stays the caller's promise, as with CUDA's own calls.
     *
     * <p>With {@link #unwrap} (which never returns the driver) this is the door between the runtime
     * and other libraries: device pointers go out as {@link DevicePtr#address()}, and pointers from
     * other libraries come in through this call. {@link Stream#handle()} is the runtime's id, not a
     * {@code CUstream}: work handed to another library is ordered by a {@link #synchronize(Stream)} first.
     *
     * @param address the range's first byte, as the other library returned it
     * @param bytes   the range's length, at least 1
     * @param label   what it is, for reports, e.g. {@code "cuBLAS workspace"}
     * @return the pointer to the range
     * @throws IllegalArgumentException when {@code bytes} is not positive or {@code label} is blank
     * @throws GpuException {@code INVALID_VALUE} for a null address, a range that overlaps one
     *                      already adopted, or a range that is this runtime's own memory (a ledger
     *                      allocation, an arena chunk, page-locked memory)
     */
    DevicePtr adoptDeviceMemory(long address, long bytes, String label);

    /**
     * Ends an adoption: pointers into the range are refused again ({@code INVALID_VALUE}), and the
     * memory is its owner's to free. Nothing is freed.
     *
     * @param ptr the pointer {@link #adoptDeviceMemory} returned
     * @throws GpuException {@code INVALID_VALUE} when no adoption starts at {@code ptr}
     */
    void releaseAdoption(DevicePtr ptr);

    /** {@return the adopted foreign ranges, by address} */
    List<AdoptedMemory> adoptedMemory();

    // ---- memory and the ledger -------------------------------------------------------------

    /**
     * Allocates device memory and records it in the ledger with the caller's {@code file:line}.
     * With red zones on, a pad follows the buffer (see {@link GpuOptions#redZoneBytes()}). By
     * default ({@link GpuOptions#allocator()} {@code caching}) the memory is a block of
     * {@link #pool()} taken on the default stream; {@code allocator=driver} makes it a
     * {@code cuMemAlloc} of its own.
     *
     * @param bytes at least 1
     * @return the base pointer
     * @throws GpuException {@code OUT_OF_MEMORY} naming the bytes requested and the device's free and total memory
     */
    DevicePtr alloc(long bytes);

    /**
     * Allocates unified (managed) memory, attached globally, and records it in the ledger.
     *
     * @param bytes at least 1
     * @return the base pointer, valid on host and device
     */
    DevicePtr allocManaged(long bytes);

    /**
     * Allocates like {@link #alloc} and wraps the result in an owner that frees it on close.
     *
     * @param bytes at least 1
     * @return the owner
     */
    default DeviceBuffer allocBuffer(long bytes) {
        return new DeviceBuffer(this, alloc(bytes), bytes);
    }

    /**
     * Frees a pointer from {@link #alloc} or {@link #allocManaged}. It leaves the ledger before the
     * driver frees it. {@link DevicePtr#NULL} is a no-op. A pointer the ledger does not hold
     * (unknown, interior, already freed, or an arena chunk) is a {@link GpuException} with
     * {@code INVALID_VALUE}, and nothing is freed. During teardown, statuses 4, 201 and 709 are
     * not errors.
     *
     * <p>A pool block (the default allocator's) goes back to the pool in the order of the stream
     * it was allocated on, the default stream for {@link #alloc}: work of that stream enqueued
     * before the free may still use it, as work of blocking streams ordered with the default
     * stream may. Work on a non-blocking stream is not ordered with it: free such memory after
     * that work is synchronized, or tell the pool with {@link MemoryPool#recordStream}, as
     * PyTorch's caching allocator asks ({@code cuMemFree} of {@code allocator=driver} waits for
     * the device instead). The simulator reports a reuse that breaks this order as a
     * {@link PoolRace}.
     *
     * @param ptr the base pointer
     */
    void free(DevicePtr ptr);

    /**
     * {@return the runtime's stream-ordered memory pool} Its blocks are on the ledger like
     * {@link #alloc} buffers. With {@link GpuOptions#allocator()} {@code caching} or {@code cuda},
     * {@link #alloc(long)} allocates from it on the default stream.
     */
    MemoryPool pool();

    /**
     * Allocates from {@link #pool()} for work on {@code stream}: {@code pool().alloc(bytes, stream)}.
     *
     * @param bytes  at least 1
     * @param stream the stream that uses it
     * @return the block's base
     */
    default DevicePtr alloc(long bytes, Stream stream) {
        return pool().alloc(bytes, stream);
    }

    /**
     * Frees a {@link #pool()} block in the order of {@code stream}: {@code pool().free(ptr, stream)}.
     *
     * @param ptr    the block's base
     * @param stream the stream whose order the free follows
     */
    default void free(DevicePtr ptr, Stream stream) {
        pool().free(ptr, stream);
    }

    /**
     * Allocates a raw chunk for a sub-allocator: never on the ledger, never red-zoned.
     *
     * @param bytes at least 1
     * @return the chunk's base
     */
    DevicePtr allocArena(long bytes);

    /**
     * Frees a chunk from {@link #allocArena}; an unknown chunk is {@code INVALID_VALUE} and nothing is freed.
     *
     * @param ptr the chunk's base
     */
    void freeArena(DevicePtr ptr);

    /**
     * Tells the runtime how many bytes of an arena chunk its sub-allocator uses, for {@link #chunkSlackBytes()}.
     *
     * @param chunk     a chunk from {@link #allocArena}
     * @param usedBytes bytes in use, at most the chunk's size
     */
    void noteArenaUse(DevicePtr chunk, long usedBytes);

    /** {@return bytes allocated in arena chunks but not in use, as last noted} */
    long chunkSlackBytes();

    /** {@return bytes held by live ledger entries} */
    long liveBytes();

    /** {@return the number of live ledger entries} */
    int liveAllocCount();

    /** {@return the live ledger entries, oldest first} */
    List<Allocation> liveAllocations();

    /**
     * Marks the allocations live now as reported by the caller, such as a test kit that names each
     * leak in its failure. {@link #close()} still frees them, but logs them at DEBUG instead of
     * repeating each one at WARNING. Allocations made later are logged as before.
     *
     * <pre>{@code
     * List<Allocation> leaks = gpu.liveAllocations();
     * leaks.forEach(a -> report.add("leak: " + a));
     * gpu.markLeaksReported();
     * gpu.close();   // frees them without a second WARNING per leak
     * }</pre>
     */
    void markLeaksReported();

    /**
     * {@return live bytes grouped by call site, largest first}: one line per site with its bytes
     * and count, the top {@code topN} sites whose total is at least {@code minMb} MiB; a line saying
     * how many live allocations have their site when some do not (at {@link LeakDetection#SAMPLED}:
     * {@code 3 of 40 live allocations have their site; 37 unsampled (leakDetection=sampled, 1 in 128)});
     * then, when there are any, the adopted foreign ranges ({@link #adoptDeviceMemory}) with their
     * labels and sites.
     *
     * @param topN  the most sites to list
     * @param minMb the smallest total to list, in MiB; 0 lists every site
     */
    String allocReport(int topN, long minMb);

    /** {@return how many ledger entries were freed} Frees every live ledger entry (teardown). */
    int sweepUnreleased();

    /**
     * {@return the number of buffers whose red zone was overwritten} Each is logged with its buffer
     * and allocation site. 0 when red zones are off.
     */
    int scanRedzones();

    /** {@return the buffers whose red zone was overwritten, oldest first; empty when red zones are off} */
    List<RedZoneViolation> findRedzoneViolations();

    /**
     * {@return the red-zone damage found in buffers when they were freed, oldest first; empty when
     * red zones are off}
     *
     * <p>Every free with red zones on ({@link #free}, {@code pool().free(p)} and
     * {@code pool().free(p, stream)}) synchronizes the context and reads the buffer's pad back
     * before its memory can be reused, so an overflow by any stream's work is found, and logs each
     * damaged pad with the buffer's allocation site and the free's. A free during a capture is
     * scanned at the first {@link #synchronize()}, {@link #synchronize(Stream)}, free or call of
     * this method after the capture ends. At most 1024 are kept.
     */
    List<RedZoneViolation> freedRedzoneViolations();

    /**
     * {@return the bytes of freed device memory held back from reuse, red-zone pads included}
     * Not counted by {@link #liveBytes()} nor listed by {@link #liveAllocations()}; the pool's
     * {@link MemoryPool#stats()} count held blocks as allocated until they are given back. See
     * {@link GpuOptions#quarantineBytes()}.
     */
    long quarantinedBytes();

    /**
     * Refills the red zones of live buffers with creation index in {@code [lo, hi)}.
     *
     * @param lo the first creation index
     * @param hi one past the last
     */
    void poisonRedzones(long lo, long hi);

    // ---- copies ------------------------------------------------------------------------------

    /**
     * Copies all of {@code src} to the device; blocking.
     *
     * @param src host memory (heap or native), alive
     * @param dst device destination
     */
    void copyH2D(MemorySegment src, DevicePtr dst);

    /**
     * Copies a float array to the device; blocking.
     *
     * @param src the values
     * @param dst device destination
     */
    default void copyH2D(float[] src, DevicePtr dst) {
        copyH2D(MemorySegment.ofArray(Objects.requireNonNull(src, "src")), dst);
    }

    /**
     * Copies an int array to the device; blocking.
     *
     * @param src the values
     * @param dst device destination
     */
    default void copyH2D(int[] src, DevicePtr dst) {
        copyH2D(MemorySegment.ofArray(Objects.requireNonNull(src, "src")), dst);
    }

    /**
     * Copies a long array to the device; blocking.
     *
     * @param src the values
     * @param dst device destination
     */
    default void copyH2D(long[] src, DevicePtr dst) {
        copyH2D(MemorySegment.ofArray(Objects.requireNonNull(src, "src")), dst);
    }

    /**
     * Copies a double array to the device; blocking.
     *
     * @param src the values
     * @param dst device destination
     */
    default void copyH2D(double[] src, DevicePtr dst) {
        copyH2D(MemorySegment.ofArray(Objects.requireNonNull(src, "src")), dst);
    }

    /**
     * Copies a byte array to the device; blocking.
     *
     * @param src the values
     * @param dst device destination
     */
    default void copyH2D(byte[] src, DevicePtr dst) {
        copyH2D(MemorySegment.ofArray(Objects.requireNonNull(src, "src")), dst);
    }

    /**
     * Copies {@code dst.byteSize()} bytes from the device; blocking (a hidden sync point, counted).
     *
     * @param src device source
     * @param dst host memory, alive
     */
    void copyD2H(DevicePtr src, MemorySegment dst);

    /**
     * Copies into a float array; blocking.
     *
     * @param src device source
     * @param dst the destination, filled entirely
     */
    default void copyD2H(DevicePtr src, float[] dst) {
        copyD2H(src, MemorySegment.ofArray(Objects.requireNonNull(dst, "dst")));
    }

    /**
     * Copies into an int array; blocking.
     *
     * @param src device source
     * @param dst the destination, filled entirely
     */
    default void copyD2H(DevicePtr src, int[] dst) {
        copyD2H(src, MemorySegment.ofArray(Objects.requireNonNull(dst, "dst")));
    }

    /**
     * Copies into a long array; blocking.
     *
     * @param src device source
     * @param dst the destination, filled entirely
     */
    default void copyD2H(DevicePtr src, long[] dst) {
        copyD2H(src, MemorySegment.ofArray(Objects.requireNonNull(dst, "dst")));
    }

    /**
     * Copies into a double array; blocking.
     *
     * @param src device source
     * @param dst the destination, filled entirely
     */
    default void copyD2H(DevicePtr src, double[] dst) {
        copyD2H(src, MemorySegment.ofArray(Objects.requireNonNull(dst, "dst")));
    }

    /**
     * Copies into a byte array; blocking.
     *
     * @param src device source
     * @param dst the destination, filled entirely
     */
    default void copyD2H(DevicePtr src, byte[] dst) {
        copyD2H(src, MemorySegment.ofArray(Objects.requireNonNull(dst, "dst")));
    }

    /**
     * Copies from the device ordered on {@code stream}, then waits for that stream.
     *
     * @param src    device source
     * @param dst    host memory, alive
     * @param stream the stream to order on and wait for
     */
    void copyD2HOnStream(DevicePtr src, MemorySegment dst, Stream stream);

    /**
     * Enqueues a copy from the device and returns without waiting: synchronize {@code stream}
     * before reading {@code dst}, and keep it alive until then.
     *
     * @param src    device source
     * @param dst    native host memory (page-locked for true asynchrony)
     * @param stream the stream
     */
    void copyD2HAsync(DevicePtr src, MemorySegment dst, Stream stream);

    /**
     * Enqueues a copy to the device. The caller may drop {@code src} on return: if it is
     * page-locked memory this runtime allocated (which the copy reads later), this waits for the
     * stream before returning and warns once per runtime; use {@link #copyH2DAsyncRetained} to skip the wait.
     *
     * @param src    native host memory
     * @param dst    device destination
     * @param stream the stream
     */
    void copyH2DAsync(MemorySegment src, DevicePtr dst, Stream stream);

    /**
     * Enqueues a copy to the device without waiting: the caller keeps {@code src} alive and unchanged until its next sync of {@code stream}.
     *
     * @param src    native host memory
     * @param dst    device destination
     * @param stream the stream
     */
    void copyH2DAsyncRetained(MemorySegment src, DevicePtr dst, Stream stream);

    /**
     * Copies between device buffers, ordered on the legacy default stream, without host
     * synchronization. Recorded in the launch trace as {@code d2d}.
     *
     * @param src   device source
     * @param dst   device destination
     * @param bytes the count
     */
    void copyD2D(DevicePtr src, DevicePtr dst, long bytes);

    /**
     * Enqueues a device-to-device copy. Recorded in the launch trace as {@code d2d}.
     *
     * @param src    device source
     * @param dst    device destination
     * @param bytes  the count
     * @param stream the stream
     */
    void copyD2DAsync(DevicePtr src, DevicePtr dst, long bytes, Stream stream);

    /**
     * Enqueues a 2D device-to-device copy of {@code height} rows of {@code widthBytes}.
     *
     * @param src        source base
     * @param srcPitch   source row pitch, at least {@code widthBytes}
     * @param dst        destination base
     * @param dstPitch   destination row pitch, at least {@code widthBytes}
     * @param widthBytes bytes per row
     * @param height     rows
     * @param stream     the stream
     */
    void copyD2D2DAsync(DevicePtr src, long srcPitch, DevicePtr dst, long dstPitch, long widthBytes, long height, Stream stream);

    /**
     * Sets bytes on the device, ordered on the legacy default stream, without host synchronization.
     *
     * @param ptr   device address
     * @param value the byte, 0 to 255
     * @param bytes the count
     */
    void memset(DevicePtr ptr, int value, long bytes);

    /**
     * Enqueues a memset. Recorded in the launch trace as {@code memset}.
     *
     * @param ptr    device address
     * @param value  the byte, 0 to 255
     * @param bytes  the count
     * @param stream the stream
     */
    void memsetAsync(DevicePtr ptr, int value, long bytes, Stream stream);

    // ---- modules and kernels -----------------------------------------------------------------

    /**
     * Loads a module (PTX, cubin or fatbin) under a name. Loading a name again replaces it.
     *
     * @param name  the name {@link #kernel} will look it up by
     * @param image the image
     */
    void loadModule(String name, byte[] image);

    /**
     * {@return whether a module of that name is loaded}
     *
     * @param name the module's name
     */
    boolean hasModule(String name);

    /**
     * Looks up a kernel, each call (nothing is cached here): the lookup is recorded in the kernel
     * audit with the caller's site, the handle is named {@code module::func} for the launch
     * trace, and it is published in {@link #opCache()}.
     *
     * @param module a loaded module's name
     * @param func   the function's name
     * @return the handle
     * @throws GpuException {@code NOT_FOUND} for an unknown function or module
     */
    KernelHandle kernel(String module, String func);

    /** {@return the loaded modules and the functions looked up in each} */
    KernelRegistry kernelRegistry();

    /** {@return the per-runtime cache of kernel handles and per-op state} */
    OpCache opCache();

    /**
     * Compiles CUDA C source to PTX at run time (NVRTC); load the result with {@link #loadModule}.
     *
     * @param name    the program's name
     * @param source  CUDA C source
     * @param options NVRTC options
     * @return the PTX
     * @throws GpuException {@code NOT_SUPPORTED} where the backend cannot compile; {@code INVALID_SOURCE} with the compiler log
     */
    byte[] compileCuda(String name, String source, String... options);

    /**
     * Opts a kernel in to more than 48 KiB of dynamic shared memory.
     *
     * @param kernel the kernel
     * @param bytes  the most dynamic shared memory it will be launched with
     */
    void setMaxDynamicSharedMemory(KernelHandle kernel, int bytes);

    /**
     * Launches a kernel; asynchronous. The hot path: with telemetry off it allocates nothing.
     * With the launch trace on it records one entry; with debug sync on it synchronizes the
     * stream afterwards so a fault names its kernel.
     *
     * @param kernel the kernel
     * @param config grid, block and dynamic shared memory
     * @param stream the stream
     * @param args   the arguments; may be refilled once this returns
     */
    void launch(KernelHandle kernel, LaunchConfig config, Stream stream, KernelArgs args);

    // ---- streams and events ----------------------------------------------------------------

    /** {@return the stream this runtime uses by default ({@link Stream#DEFAULT})} */
    Stream defaultStream();

    /** {@return a new blocking stream} */
    Stream createStream();

    /**
     * {@return a new stream}
     *
     * @param nonBlocking whether it is exempt from the legacy default stream's implicit synchronization
     */
    Stream createStream(boolean nonBlocking);

    /**
     * Destroys a stream; its pending work still completes.
     *
     * @param stream the stream
     */
    void destroyStream(Stream stream);

    /**
     * Waits for a stream's work; counted as a stream sync.
     *
     * @param stream the stream
     */
    void synchronize(Stream stream);

    /** Waits for all work on the device ({@code cuCtxSynchronize}); counted as a stream sync. */
    void synchronize();

    /**
     * {@return whether all of the stream's work is done}
     *
     * @param stream the stream
     */
    boolean streamQuery(Stream stream);

    /** {@return a new event with timing enabled} */
    Event createEvent();

    /**
     * {@return a new event}
     *
     * @param flags {@code cuEventCreate} flags: 1 blocking sync, 2 disable timing
     */
    Event createEvent(int flags);

    /**
     * Records an event on a stream.
     *
     * @param event  the event
     * @param stream the stream
     */
    void recordEvent(Event event, Stream stream);

    /**
     * Makes later work on {@code stream} wait for the event's work.
     *
     * @param stream the stream
     * @param event  the event
     */
    void streamWaitEvent(Stream stream, Event event);

    /**
     * Waits for the work before the event's record.
     *
     * @param event the event
     */
    void eventSynchronize(Event event);

    /**
     * {@return whether the work before the event's record is done}
     *
     * @param event the event
     */
    boolean eventQuery(Event event);

    /**
     * {@return milliseconds between two completed events}
     *
     * @param start the earlier event
     * @param end   the later event
     */
    float elapsedMillis(Event start, Event end);

    /**
     * Destroys an event.
     *
     * @param event the event
     */
    void destroyEvent(Event event);

    // ---- capture and graphs ------------------------------------------------------------------

    /**
     * Begins capturing {@code stream} in {@link CaptureMode#GLOBAL} mode: work enqueued on it is
     * recorded into a graph, not run.
     *
     * @param stream a stream from {@link #createStream} (not the legacy default stream)
     */
    void beginCapture(Stream stream);

    /**
     * Begins capturing {@code stream} in the given mode.
     *
     * @param stream a stream from {@link #createStream}
     * @param mode   which unsafe calls the capture forbids
     */
    void beginCapture(Stream stream, CaptureMode mode);

    /**
     * Ends a capture and instantiates the graph.
     *
     * @param stream the capturing stream
     * @return the instantiated graph
     * @throws GpuException {@code STREAM_CAPTURE_INVALIDATED} if an illegal call invalidated it (the stream is usable again)
     */
    GraphHandle endCapture(Stream stream);

    /**
     * Ends a capture if one is active on {@code stream}, discarding the graph; never throws for
     * capture errors. For cleanup paths.
     *
     * @param stream the stream
     */
    void abortCaptureIfActive(Stream stream);

    /**
     * {@return whether {@code stream} is capturing} A failed query counts as capturing; under a
     * driver without {@code cuStreamIsCapturing} this is {@code false}.
     *
     * @param stream the stream
     */
    boolean streamIsCapturing(Stream stream);

    /**
     * {@return the stream's capture status}
     *
     * @param stream the stream
     */
    CaptureStatus captureStatus(Stream stream);

    /**
     * Replays a graph on a stream with the argument values it captured.
     *
     * @param graph  the graph
     * @param stream the stream
     */
    void launchGraph(GraphHandle graph, Stream stream);

    /**
     * Destroys a graph; a running replay still completes.
     *
     * @param graph the graph
     */
    void destroyGraph(GraphHandle graph);

    /**
     * Makes a captured step: a region run eagerly with the launch trace first, then as a CUDA
     * graph while its trace agrees, updated in place or recaptured when it changes (see
     * {@link CapturedStep}).
     * {@snippet :
     * try (CapturedStep step = gpu.capturedStep("heat", (g, s) -> {
     *         g.launch(stencil, cfg, s, args.clear().ptr(a).ptr(b).i32(n));
     *         g.launch(stencil, cfg, s, args.clear().ptr(b).ptr(a).i32(n));
     *     }, StepOptions.defaults().verifyEvery(1000))) {
     *     for (int i = 0; i < steps; i++) {
     *         step.run(stream);
     *     }
     * }
     * }
     *
     * @param name    a name for reports
     * @param region  the work of one step
     * @param options eager runs, verification interval, reporting
     * @return the step, owned by the caller
     */
    CapturedStep capturedStep(String name, CapturedStep.Region region, StepOptions options);

    /**
     * {@return a captured step with {@link StepOptions#defaults()}}
     *
     * @param name   a name for reports
     * @param region the work of one step
     */
    default CapturedStep capturedStep(String name, CapturedStep.Region region) {
        return capturedStep(name, region, StepOptions.defaults());
    }

    // ---- device ------------------------------------------------------------------------------

    /** {@return the device's total memory in bytes} */
    long totalMemory();

    /** {@return what this runtime can still use: the device's free memory plus arena slack} */
    long freeMemory();

    /** {@return the device's free memory in bytes, as the driver reports it} */
    long deviceFreeMemory();

    /** {@return the number of streaming multiprocessors} */
    int smCount();

    /** Makes this runtime's context current on the calling thread. Calls do this themselves; this is for native code the app calls. */
    void bindToThread();

    /** {@return whether each launch is followed by a stream sync ({@link GpuOptions#debugSync()})} */
    boolean debugSyncKernels();

    // ---- pinned host memory ------------------------------------------------------------------

    /**
     * Allocates page-locked host memory, registered so {@link #copyH2DAsync} knows it.
     *
     * @param bytes at least 1
     * @return the memory, valid until {@link #freeHostPinned} or {@link #close()}
     */
    MemorySegment allocHostPinned(long bytes);

    /**
     * Frees page-locked memory from {@link #allocHostPinned}; anything else is {@code INVALID_VALUE}.
     *
     * @param host the segment {@link #allocHostPinned} returned
     */
    void freeHostPinned(MemorySegment host);

    /**
     * {@return the device address of page-locked host memory}
     *
     * @param host memory from {@link #allocHostPinned}, or a slice of it
     */
    DevicePtr hostPtrToDevice(MemorySegment host);

    /**
     * {@return whether all of {@code host} lies in page-locked memory from {@link #allocHostPinned}}
     *
     * @param host any segment
     */
    boolean isPinned(MemorySegment host);

    // ---- faults and teardown -----------------------------------------------------------------

    /** {@return the latched sticky fault, if one was latched} */
    Optional<StickyFaultException> fault();

    /** {@return whether {@link #close()} has been called} */
    boolean isClosed();

    /**
     * {@return the resources this runtime created that are not released yet, oldest first, each
     * with its kind, handle and creation site}: page-locked host memory, streams, events, graphs
     * (a {@code CUgraph} and its exec), captured steps, and communicators other modules of this
     * project made over it. The default streams are not listed (nobody creates them); device
     * memory is listed by {@link #liveAllocations()}. A captured step's graph is listed as a graph
     * beside the step, created where the step first captured.
     *
     * <p>Readable after {@link #close()}: it then returns what close found still live (and
     * released), so a leak report can be made after the runtime is closed. Sites follow
     * {@link GpuOptions#leakDetection()} ({@code ?} when off, {@value LeakDetection#UNSAMPLED_SITE} for one
     * {@code sampled} did not walk); recording one costs a stack walk at
     * each create, never at a launch or copy.
     */
    List<LiveResource> liveResources();

    /**
     * Frees what the ledger still holds (logging each leak with its site), frees pinned memory,
     * streams, events and graphs this runtime made, and releases the device. Idempotent; never
     * throws, even after a sticky fault.
     */
    @Override
    void close();
}
