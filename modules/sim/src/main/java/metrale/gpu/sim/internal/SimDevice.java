// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.SimInitCheck;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import metrale.gpu.spi.MemInfo;

/**
 * A CPU simulator of one CUDA device that keeps the CUDA driver's rules (CUDA_SEMANTICS.md sections
 * 1 to 4): the same error codes for the same mistakes, work that runs as late as CUDA allows, stream
 * capture and graphs, and sticky faults. Kernels are Java twins registered with {@link SimKernels}.
 *
 * <p><b>Memory.</b> Device allocations live at fake addresses (from {@code 0xa000_0000_0000} up, in
 * one space for every simulated device of the JVM, 256-byte aligned, never reused, with 64 KiB
 * unmapped gaps), each backed by its own native segment
 * filled with a garbage byte ({@code 0xAB} by default) because CUDA does not zero memory. Managed
 * memory and page-locked host memory live at their real native addresses (unified addressing), so
 * the host may touch managed memory through {@code MemorySegment.ofAddress(ptr).reinterpret(n)} and
 * a kernel may touch page-locked memory through its device pointer. {@link #memGetInfo()} charges
 * device and managed allocations in exact bytes (a GPU rounds small ones into 2 MiB pages, so there
 * allocating 1 byte may leave free unchanged). A copy or memset whose range is not inside one live
 * allocation is {@code INVALID_VALUE} at the call; a kernel access outside its view is
 * {@code ILLEGAL_ADDRESS}, latched as a sticky fault.
 *
 * <p><b>Work.</b> Each stream is a FIFO of pending work that runs only when a call needs it:
 * stream, event and context synchronization, blocking copies, and {@code cuMemFree}/{@code
 * cuMemFreeHost} (which synchronize the device). A query ({@link #streamQuery}, {@link #eventQuery})
 * that finds work pending reports {@code NOT_READY} and then lets the device advance by one
 * operation toward that work, so a query right after an enqueue is always {@code NOT_READY} and a
 * polling loop still ends. When several streams have work ready at once, a seeded random sequence
 * (option {@code sim.seed}, {@link SimControls#setScheduleSeed}) picks the interleaving. Kernels run on the
 * thread that drains their stream, one at a time.
 *
 * <p><b>Options</b> ({@link DriverConfig}) are read once by {@link SimSettings}, which lists them.
 *
 * <p><b>Several devices.</b> Peer copies and cross-device event waits work between devices of one
 * simulated process ({@link SimPeers}); a stream-ordered peer copy runs after the stream's earlier
 * work, before the call returns, and a cross-device wait waits for the event's work before
 * returning. After {@code enablePeerAccess(peer)} this context's kernels address the peer's live
 * memory too.
 *
 * <p><b>Faults.</b> A sticky fault (a bad kernel access, an injected fault) makes every later
 * memory, stream, event, module, launch and synchronize call fail with the same error; as on CUDA
 * there is no reset. It also poisons the device's simulated process: every other device of that
 * process fails from its next call, and opening a device in it fails, as a new CUDA context does
 * after a sticky fault. The default process is the JVM's one shared simulated process; tests open
 * with {@code sim.process=fresh}. {@link SimControls#failAllocation}, {@link SimControls#faultKernel} and
 * {@link SimControls#failNextSync} inject faults for testing recovery paths.
 *
 * <p><b>Identity.</b> Device addresses and handles come from one space for the whole JVM
 * ({@link Ids}): a pointer or handle of another simulated device is never valid here.
 *
 * <p><b>Threads.</b> Every method may be called from any thread; one lock serializes them, and the
 * calling thread's identity decides the capture-mode rules and which per-thread stream handle
 * {@code 2} means.
 */
public final class SimDevice implements Driver {

    /** Option key: device memory in bytes. */
    public static final String OPT_CAPACITY = SimOptions.CAPACITY;
    /** Option key: the schedule's seed. */
    public static final String OPT_SEED = SimOptions.SEED;
    /** Option key: the SM count. */
    public static final String OPT_SMS = SimOptions.SMS;
    /** Option key: the garbage byte new memory is filled with. */
    public static final String OPT_FILL = SimOptions.FILL;
    /** Default device memory: 4 GiB. */
    public static final long DEFAULT_CAPACITY = SimOptions.DEFAULT_CAPACITY;
    /** Default SM count, an H100/H200's. */
    public static final int DEFAULT_SMS = SimOptions.DEFAULT_SMS;
    /** Default garbage byte. */
    public static final int DEFAULT_FILL = SimOptions.DEFAULT_FILL;
    /** The unmapped gap after each fake device allocation, in bytes. */
    public static final long ADDRESS_GAP = DeviceMemory.GAP;
    /** The most dynamic shared memory a function may opt in to, in bytes (sm_90). */
    public static final int MAX_SHARED_OPTIN = SimModules.MAX_SHARED_OPTIN;

    private final SimLock lock = new SimLock();
    private final SimProcess process;
    private final int ordinal;
    private final int smCount;
    private final DeviceMemory memory;
    /** Pool blocks released, and memory held, while work enqueued before was pending. */
    private final BlockEnds ends;
    private final Engine engine;
    private final Scheduler scheduler;
    private final SimStream legacy;
    // The parts, one owner per rule set, each guarded by the lock.
    private final SimStreams streams;
    private final SimEvents events = new SimEvents();
    private final CaptureRules rules = new CaptureRules();
    /** The graphs, their nodes and executable graphs, and the rules of updating an exec. */
    private final SimGraphs graphs;
    /** The loaded modules and functions, and the rules of a launch's function and configuration. */
    private final SimModules modules;
    private final AllocRules allocs;
    private final CopyRules copies;
    /** The default pool of {@code cuMemAllocAsync}. */
    private final SimAsyncPool asyncPool;
    /** The peer contexts this one may address, and the copy between two contexts. */
    private final SimPeers peers;
    /** The sticky error, and the waits that run pending work and latch its faults. */
    private final FaultLatch latch;
    /** The one holder of the knobs, and of the faults they inject. */
    private final SimControlsImpl controls;
    /** The runtime's allocations, for the reach of a kernel ({@link #allocationExtents}); {@code null} when not told. */
    private volatile Extents extents;
    private boolean closed;
    private List<String> liveAtClose = List.of();

    /** Opens a simulated device with the default options. */
    public SimDevice() {
        this(DriverConfig.empty());
    }

    /**
     * Opens a simulated device.
     *
     * @param config options: {@code sim.capacity}, {@code sim.seed}, {@code sim.sms}, {@code sim.fill},
     *               {@code sim.process}, {@code sim.twins}
     * @throws IllegalArgumentException if an option is not a number, out of range, or of the wrong type
     * @throws GpuException the sticky error of the simulated process, if a fault has poisoned it
     */
    public SimDevice(DriverConfig config) {
        this(config, null);
    }

    /**
     * Opens a simulated device in {@code in}, or in the one option {@code sim.process} names when
     * it is {@code null}.
     */
    SimDevice(DriverConfig config, SimProcess in) {
        SimSettings o = SimSettings.parse(Objects.requireNonNull(config, "config"), in);
        this.process = o.process();
        this.modules = new SimModules(o.twins(), o.twinMode(), o.ptxCompiled());
        this.ordinal = o.ordinal();
        this.smCount = o.sms();
        this.memory = new DeviceMemory(o.capacity(), o.fill());
        this.allocs = new AllocRules(memory);
        this.copies = new CopyRules(memory);
        this.asyncPool = new SimAsyncPool(memory);
        this.graphs = new SimGraphs(memory);
        if (o.initCheck()) {
            memory.init = new InitCheck();
        }
        this.engine = new Engine(memory, o.seed());
        engine.ordinal = ordinal;
        engine.processMemories = process.memories;
        this.legacy = new SimStream(1, SimStream.Kind.LEGACY, false, "the legacy default stream");
        this.scheduler = new Scheduler(engine, legacy);
        this.ends = new BlockEnds(memory, scheduler);
        this.streams = new SimStreams(legacy);
        this.latch = new FaultLatch(process, scheduler, engine);
        this.controls = new SimControlsImpl(this, lock, memory, engine, scheduler);
        this.peers = new SimPeers(process, ordinal, lock, memory, engine, this::check);
        this.engine.blockOrder = o.blockOrder();
        // Last, once nothing can fail: close() takes it out again.
        process.memories.put(memory, ordinal);
    }

    // ---- controls -------------------------------------------------------------------------------

    /**
     * {@return {@link SimControls} or {@link SimInitCheck} when asked for it} The controls are a
     * separate object ({@link SimControlsImpl}), so an application holding them cannot reach the driver.
     */
    @Override
    public <T> Optional<T> controls(Class<T> type) {
        return type.isInstance(controls) ? Optional.of(type.cast(controls)) : Optional.empty();
    }

    /** {@return the simulated process this device lives in} */
    SimProcess process() {
        return process;
    }

    /** {@return this device's controls, the one holder of its knobs} */
    public SimControls simControls() {
        return controls;
    }

    // ---- identity -----------------------------------------------------------------------------

    @Override
    public String name() {
        return "sim";
    }

    @Override
    public DeviceInfo deviceInfo() {
        try (var _ = lock.hold()) {
            return new DeviceInfo("sim", "metrale simulator", memory.capacity(), smCount, 9, 0, MAX_SHARED_OPTIN);
        }
    }

    /** The simulator has no per-thread context: a no-op. */
    @Override
    public void bindToThread() {
        // Nothing to make current.
    }

    // ---- memory -------------------------------------------------------------------------------

    @Override
    public long memAlloc(long bytes) {
        String op = "cuMemAlloc_v2";
        try (var _ = enter(op)) {
            rules.checkUnsafe(op, "bytes=" + bytes);
            if (bytes == 0) {
                throw err(CudaError.INVALID_VALUE, op, "bytes=0: an allocation needs at least one byte");
            }
            return allocs.allocate(Alloc.Kind.DEVICE, bytes, controls.allocationAttempt(), op, "bytes=" + bytes);
        }
    }

    @Override
    public long memAllocManaged(long bytes, int flags) {
        String op = "cuMemAllocManaged";
        String d = "bytes=" + bytes + ", flags=" + flags;
        try (var _ = enter(op)) {
            rules.checkUnsafe(op, d);
            if (bytes == 0) {
                throw err(CudaError.INVALID_VALUE, op, d + ": an allocation needs at least one byte");
            }
            if (flags != 1 && flags != 2) {
                throw err(CudaError.INVALID_VALUE, op, d + ": flags must be CU_MEM_ATTACH_GLOBAL (1) or CU_MEM_ATTACH_HOST (2)");
            }
            return allocs.allocate(Alloc.Kind.MANAGED, bytes, controls.allocationAttempt(), op, d);
        }
    }

    @Override
    public void memFree(long ptr) {
        String op = "cuMemFree_v2";
        try (var _ = enter(op)) {
            rules.checkUnsafe(op, "ptr=" + hex(ptr));
            if (ptr == 0) {
                return;
            }
            Alloc a = allocs.freeable(ptr, op);
            // cuMemFree synchronizes: work still using the memory finishes first.
            latch.runAll(op, "ptr=" + hex(ptr));
            asyncPool.freedNow(ptr, a.size);
            memory.free(a);
        }
    }

    @Override
    public MemInfo memGetInfo() {
        try (var _ = enter("cuMemGetInfo_v2")) {
            return new MemInfo(memory.free(), memory.capacity());
        }
    }

    // ---- stream-ordered allocation ------------------------------------------------------------

    @Override
    public boolean supportsMemPools() {
        return true;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Each call is a fresh address range, valid at once, that draws first on the bytes the pool
     * keeps reserved ({@link SimAsyncPool}). A capturing stream is refused with {@code STREAM_CAPTURE_UNSUPPORTED}: memory-allocation graph
     * nodes are not simulated.
     */
    @Override
    public long memAllocAsync(long bytes, long stream) {
        String op = "cuMemAllocAsync";
        String d = "bytes=" + bytes + ", stream=" + hex(stream);
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            if (s.capture != null) {
                throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, d + ": the simulator does not capture allocation nodes");
            }
            if (bytes == 0) {
                throw err(CudaError.INVALID_VALUE, op, d + ": an allocation needs at least one byte");
            }
            return asyncPool.allocate(bytes, () -> allocs.allocate(Alloc.Kind.DEVICE, bytes, controls.allocationAttempt(), op, d));
        }
    }

    /** {@inheritDoc} The memory is released when the stream's work before the call has run; later use faults. */
    @Override
    public void memFreeAsync(long ptr, long stream) {
        String op = "cuMemFreeAsync";
        String d = "ptr=" + hex(ptr) + ", stream=" + hex(stream);
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            if (s.capture != null) {
                throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, d + ": the simulator does not capture free nodes");
            }
            scheduler.enqueue(s, asyncPool.freeAsync(ptr, op, d), null);
        }
    }

    /**
     * {@inheritDoc} The block is an allocation of its own at once: views, copies, memsets and PTX
     * accesses see exactly its bytes.
     */
    @Override
    public void poolBlockCarved(long ptr, long bytes) {
        String op = "pool block carve";
        try (var _ = enter(op)) {
            memory.carve(ptr, bytes, op);
        }
    }

    /**
     * {@inheritDoc} Stricter in when it ends than CUDA needs: the block stays reachable until every
     * operation enqueued before the release, on any stream, has run, since work of another stream
     * may still use it until the pool hands the memory out again.
     */
    @Override
    public void poolBlockReleased(long ptr, long stream) {
        try (var _ = enter("pool block release")) {
            ends.release(ptr);
        }
    }

    /** {@inheritDoc} The PTX engine then faults at an access into the pad; twins' views still reach it. */
    @Override
    public void redZone(long ptr, long bytes, long pad) {
        try (var _ = enter("red zone")) {
            Alloc a = memory.heldAt(ptr);
            if (a != null && bytes >= 0 && bytes <= a.size) {
                a.buffer = bytes;
            }
        }
    }

    /**
     * {@inheritDoc} Like a release, it takes effect once every operation enqueued before it, on any
     * stream, has run: a kernel that touches the memory after that faults, naming it as held.
     */
    @Override
    public void memoryHeld(long ptr) {
        try (var _ = enter("quarantine hold")) {
            ends.hold(ptr);
        }
    }

    @Override
    public void memPoolTrimTo(long minBytesToKeep) {
        try (var _ = enter("cuMemPoolTrimTo")) {
            asyncPool.trimTo(minBytesToKeep);
        }
    }

    @Override
    public long memPoolGetAttribute(int attr) {
        String op = "cuMemPoolGetAttribute";
        try (var _ = enter(op)) {
            return asyncPool.attribute(attr, op);
        }
    }

    @Override
    public void memPoolSetAttribute(int attr, long value) {
        String op = "cuMemPoolSetAttribute";
        try (var _ = enter(op)) {
            asyncPool.setAttribute(attr, value, op);
        }
    }

    @Override
    public boolean detectsStreamOrderViolations() {
        return true;
    }

    @Override
    public void allocationExtents(Extents extents) {
        this.extents = extents;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The simulator knows every pending operation and its dependencies: pending work that
     * touches the range and is not an ancestor of the stream's next operation (its tail, and the
     * implicit legacy-stream dependencies that operation will get) is unordered with the new owner.
     */
    @Override
    public String streamOrderViolation(long ptr, long bytes, long stream) {
        String op = "streamOrderViolation";
        try (var _ = enter(op)) {
            SimStream t = streams.get(stream, op);
            return scheduler.unorderedWith(t, ptr, bytes);
        }
    }

    @Override
    public MemorySegment memHostAlloc(long bytes, int flags) {
        String op = "cuMemHostAlloc";
        String d = "bytes=" + bytes + ", flags=" + flags;
        try (var _ = enter(op)) {
            rules.checkUnsafe(op, d);
            return allocs.hostAlloc(bytes, flags, op, d);
        }
    }

    @Override
    public void memFreeHost(MemorySegment host) {
        String op = "cuMemFreeHost";
        try (var _ = enter(op)) {
            rules.checkUnsafe(op, "host=" + host);
            if (host == null || host.address() == 0) {
                return;
            }
            String d = "host=" + hex(host.address());
            Alloc a = allocs.pinnedBase(host, op, d);
            latch.runAll(op, d);
            memory.free(a);
        }
    }

    @Override
    public long memHostGetDevicePointer(MemorySegment host) {
        String op = "cuMemHostGetDevicePointer_v2";
        try (var _ = enter(op)) {
            return allocs.devicePointer(host, op);
        }
    }

    // ---- copies and memset ----------------------------------------------------------------------

    @Override
    public void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        String op = "cuMemcpyHtoD_v2";
        String d = "dst=" + hex(dst) + ", bytes=" + bytes;
        legacyCopy(op, d, bytes, () -> {
            copies.checkHost(null, src, bytes, op, d, "source");
            copies.checkDevice(null, dst, bytes, op, d, "destination");
            latch.runUntil(op, d, scheduler.enqueue(legacy, new Works.CopyH2D(op, dst, src, bytes), null));
        });
    }

    @Override
    public void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        String op = "cuMemcpyDtoH_v2";
        String d = "src=" + hex(src) + ", bytes=" + bytes;
        legacyCopy(op, d, bytes, () -> {
            copies.checkHost(null, dst, bytes, op, d, "destination");
            copies.checkDevice(null, src, bytes, op, d, "source");
            latch.runUntil(op, d, scheduler.enqueue(legacy, new Works.CopyD2H(op, dst, src, bytes), null));
        });
    }

    @Override
    public void memcpyDtoD(long dst, long src, long bytes) {
        String op = "cuMemcpyDtoD_v2";
        String d = "dst=" + hex(dst) + ", src=" + hex(src) + ", bytes=" + bytes;
        legacyCopy(op, d, bytes, () -> {
            copies.checkDevice(null, src, bytes, op, d, "source");
            copies.checkDevice(null, dst, bytes, op, d, "destination");
            scheduler.enqueue(legacy, new Works.CopyD2D(op, dst, src, bytes), null);
        });
    }

    @Override
    public void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        String op = "cuMemcpyHtoDAsync_v2";
        streamCopy(op, stream, bytes, s -> {
            copies.checkHost(s, src, bytes, op, null, "source");
            copies.checkDevice(s, dst, bytes, op, null, "destination");
            if (s.capture != null) {
                // A captured copy reads the host when the graph runs, on whatever thread launches it.
                rules.checkReadableAnywhere(s, src, op, "dst=" + hex(dst), "source");
                submit(s, new Works.CopyH2D(op, dst, src, bytes), op, null);
            } else if (copies.isPinned(src, bytes)) {
                submit(s, new Works.CopyH2D(op, dst, src, bytes), op, null);
            } else {
                // CUDA stages pageable memory before returning (a later host change does not land)
                // and the copy completes in stream order, without waiting for the stream.
                submit(s, new Works.CopyH2D(op, dst, copies.stage(src, bytes), bytes), op, null);
            }
        });
    }

    @Override
    public void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        String op = "cuMemcpyDtoHAsync_v2";
        streamCopy(op, stream, bytes, s -> {
            copies.checkHost(s, dst, bytes, op, null, "destination");
            copies.checkDevice(s, src, bytes, op, null, "source");
            if (s.capture != null) {
                rules.checkReadableAnywhere(s, dst, op, "src=" + hex(src), "destination");
            }
            submitHostCopy(s, new Works.CopyD2H(op, dst, src, bytes), dst, bytes, op, "src=" + hex(src));
        });
    }

    @Override
    public void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        String op = "cuMemcpyDtoDAsync_v2";
        streamCopy(op, stream, bytes, s -> {
            copies.checkDevice(s, src, bytes, op, null, "source");
            copies.checkDevice(s, dst, bytes, op, null, "destination");
            submit(s, new Works.CopyD2D(op, dst, src, bytes), op, null);
        });
    }

    /**
     * The frame of a synchronous copy, which runs on the legacy stream: under the lock, the device
     * must be usable, no blocking stream may be capturing (906), and the count must not be
     * negative; a count of 0 is then a no-op, anything else goes to {@code body}, which checks the
     * operands and enqueues the work.
     */
    private void legacyCopy(String op, String d, long bytes, Runnable body) {
        try (var _ = enter(op)) {
            rules.checkLegacyWork(op, d);
            if (copies.checkCount(null, bytes, op, d)) {
                body.run();
            }
        }
    }

    /**
     * The frame of a stream-ordered copy: under the lock, the device must be usable, the stream
     * live and not in an invalidated capture, and the count not negative; a count of 0 is then a
     * no-op, anything else goes to {@code body}, which checks the operands and submits the work.
     */
    private void streamCopy(String op, long stream, long bytes, Consumer<SimStream> body) {
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            if (copies.checkCount(s, bytes, op, null)) {
                body.accept(s);
            }
        }
    }

    /**
     * Submits a stream-ordered device-to-host copy. Unless {@code host} is pinned (or the copy was
     * captured) the call waits for the copy, as CUDA does for pageable memory; {@code device}
     * ("src=0x...") names the device side in that wait's errors.
     */
    private void submitHostCopy(SimStream s, Work w, MemorySegment host, long bytes, String op, String device) {
        boolean pinned = copies.isPinned(host, bytes);
        Op o = submit(s, w, op, null);
        if (o != null && !pinned) {
            latch.runUntil(op, device + ", bytes=" + bytes + ", stream=" + s, o);
        }
    }

    @Override
    public void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream) {
        String op = "cuMemcpy2DAsync_v2";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            String d = "dst=" + hex(dst) + ", dstPitch=" + dstPitch + ", src=" + hex(src) + ", srcPitch=" + srcPitch
                    + ", widthBytes=" + widthBytes + ", height=" + height;
            Works.Copy2D w = copies.copy2D(s, dst, dstPitch, src, srcPitch, widthBytes, height, op, d);
            if (w != null) {
                submit(s, w, op, d);
            }
        }
    }

    @Override
    public void memsetD8(long ptr, int value, long bytes) {
        String op = "cuMemsetD8_v2";
        try (var _ = enter(op)) {
            String d = "ptr=" + hex(ptr) + ", value=" + value + ", bytes=" + bytes;
            rules.checkLegacyWork(op, d);
            if (value < 0 || value > 255) {
                throw err(CudaError.INVALID_VALUE, op, d + ": the value must be a byte, 0 to 255");
            }
            if (!copies.checkCount(null, bytes, op, d)) {
                return;
            }
            copies.checkDevice(null, ptr, bytes, op, d, "range");
            scheduler.enqueue(legacy, new Works.Memset(op, ptr, (byte) value, bytes), null);
        }
    }

    @Override
    public void memsetD8Async(long ptr, int value, long bytes, long stream) {
        String op = "cuMemsetD8Async";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            if (value < 0 || value > 255) {
                throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, "ptr=" + hex(ptr) + ", value=" + value + ": the value must be a byte, 0 to 255");
            }
            if (!copies.checkCount(s, bytes, op, null)) {
                return;
            }
            copies.checkDevice(s, ptr, bytes, op, null, "range");
            submit(s, new Works.Memset(op, ptr, (byte) value, bytes), op, null);
        }
    }

    // ---- streams, events, context -----------------------------------------------------------------

    @Override
    public long streamCreate(int flags) {
        String op = "cuStreamCreate";
        try (var _ = enter(op)) {
            return streams.create(flags, op);
        }
    }

    @Override
    public void streamDestroy(long stream) {
        String op = "cuStreamDestroy_v2";
        try (var _ = enter(op)) {
            streams.destroy(stream, op);
        }
    }

    @Override
    public void streamSynchronize(long stream) {
        String op = "cuStreamSynchronize";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkNotCapturing(s, op);
            rules.checkUnsafe(op, "stream=" + s);
            if (s.kind == SimStream.Kind.LEGACY) {
                rules.checkLegacyWork(op, "stream=" + s);
            }
            latch.surface(controls.takeSyncFailure(), op, s);
            latch.runUntil(op, s, s.tail());
            engine.advanceTo(s.lastEnd);
            asyncPool.synchronizedHost();
            ends.finish();
        }
    }

    @Override
    public boolean streamQuery(long stream) {
        String op = "cuStreamQuery";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkNotCapturing(s, op);
            rules.checkUnsafe(op, "stream=" + s);
            if (s.kind == SimStream.Kind.LEGACY) {
                rules.checkLegacyWork(op, "stream=" + s);
            }
            Op t = s.tail();
            if (t == null) {
                if (s.lastEnd <= engine.now) {
                    return true;
                }
                // Executed but still running on the virtual clock: the poll stands for waiting.
                engine.advanceTo(s.lastEnd);
                return false;
            }
            latch.step(op, s, t);
            return false;
        }
    }

    @Override
    public void ctxSynchronize() {
        String op = "cuCtxSynchronize";
        try (var _ = enter(op)) {
            rules.checkContextSync(op);
            latch.surface(controls.takeSyncFailure(), op, "the context");
            latch.runAll(op, "");
            asyncPool.synchronizedHost();
            ends.finish();
        }
    }

    @Override
    public long eventCreate(int flags) {
        String op = "cuEventCreate";
        try (var _ = enter(op)) {
            return events.create(flags, op);
        }
    }

    @Override
    public void eventRecord(long event, long stream) {
        String op = "cuEventRecord";
        try (var _ = enter(op)) {
            SimEvent ev = events.get(event, op);
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            if (rules.record(ev, s)) {
                return;
            }
            if (s.kind == SimStream.Kind.LEGACY) {
                rules.checkLegacyWork(op, ev + " on " + s);
            }
            ev.capturedIn = null;
            ev.capturedTails = null;
            ev.op = scheduler.enqueue(s, new Works.Marker(op + "(" + ev + ") on " + s), null);
        }
    }

    @Override
    public void streamWaitEvent(long stream, long event, int flags) {
        String op = "cuStreamWaitEvent";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            SimEvent ev = events.get(event, op);
            String d = s + " waits for " + ev + ", flags=" + flags;
            if (flags != 0 && flags != 1) {
                throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, d + ": flags must be 0 or CU_EVENT_WAIT_EXTERNAL (1)");
            }
            if (rules.waitEvent(s, ev, flags, op, d)) {
                return;
            }
            if (flags == 1) {
                throw err(CudaError.ILLEGAL_STATE, op, d + ": CU_EVENT_WAIT_EXTERNAL is valid only while the stream captures");
            }
            if (s.kind == SimStream.Kind.LEGACY) {
                rules.checkLegacyWork(op, d);
            }
            if (ev.op == null || ev.op.completeAt(engine.now)) {
                return;
            }
            // Pending, or executed but still running on the virtual clock: the stream waits for its end.
            scheduler.enqueue(s, new Works.Marker(op + "(" + s + ", " + ev + ")"), ev.op);
        }
    }

    @Override
    public void eventSynchronize(long event) {
        String op = "cuEventSynchronize";
        try (var _ = enter(op)) {
            SimEvent ev = events.get(event, op);
            rules.checkNotCaptured(ev, op);
            rules.checkUnsafe(op, ev.toString());
            latch.surface(controls.takeSyncFailure(), op, ev);
            latch.runUntil(op, ev, ev.op);
            if (ev.op != null) {
                engine.advanceTo(ev.op.end);
            }
            asyncPool.synchronizedHost();
            ends.finish();
        }
    }

    @Override
    public boolean eventQuery(long event) {
        String op = "cuEventQuery";
        try (var _ = enter(op)) {
            SimEvent ev = events.get(event, op);
            rules.checkNotCaptured(ev, op);
            rules.checkUnsafe(op, ev.toString());
            if (ev.op == null || ev.op.completeAt(engine.now)) {
                return true;
            }
            if (ev.op.done) {
                engine.advanceTo(ev.op.end);
                return false;
            }
            latch.step(op, ev, ev.op);
            return false;
        }
    }

    @Override
    public float eventElapsedTime(long start, long end) {
        String op = "cuEventElapsedTime";
        try (var _ = enter(op)) {
            return events.elapsedMillis(start, end, engine.now, rules, op);
        }
    }

    @Override
    public void eventDestroy(long event) {
        String op = "cuEventDestroy_v2";
        try (var _ = enter(op)) {
            events.destroy(event, op);
        }
    }

    // ---- capture and graphs ---------------------------------------------------------------------

    @Override
    public boolean supportsCaptureQuery() {
        return true;
    }

    @Override
    public void streamBeginCapture(long stream, int mode) {
        String op = "cuStreamBeginCapture_v2";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.begin(s, mode, op);
        }
    }

    @Override
    public long streamEndCapture(long stream) {
        String op = "cuStreamEndCapture";
        try (var _ = enter(op)) {
            return graphs.add(rules.end(streams.get(stream, op), op));
        }
    }

    @Override
    public int streamIsCapturing(long stream) {
        String op = "cuStreamIsCapturing";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            return rules.status(s, op);
        }
    }

    @Override
    public long graphInstantiate(long graph) {
        String op = "cuGraphInstantiateWithFlags";
        try (var _ = enter(op)) {
            return graphs.instantiate(graph, op);
        }
    }

    @Override
    public void graphLaunch(long exec, long stream) {
        String op = "cuGraphLaunch";
        try (var _ = enter(op)) {
            SimExec x = graphs.exec(exec, op, "exec=");
            SimStream s = streams.get(stream, op);
            if (s.capture != null && s.capture.invalidated) {
                // The H200 answers a graph launch into an invalidated capture with 900, not the 901
                // of every other enqueue.
                throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, "stream=" + s + ": " + s.capture
                        + " was invalidated earlier; end the capture (it reports 901) and begin again");
            }
            if (s.capture != null) {
                s.capture.add(s, x.run);
                return;
            }
            if (s.kind == SimStream.Kind.LEGACY) {
                rules.checkLegacyWork(op, "exec=" + hex(exec));
            }
            x.lastLaunch = scheduler.enqueue(s, x.run, x.lastLaunch);
        }
    }

    @Override
    public void graphExecDestroy(long exec) {
        String op = "cuGraphExecDestroy";
        try (var _ = enter(op)) {
            graphs.destroyExec(exec, op);
        }
    }

    @Override
    public void graphDestroy(long graph) {
        String op = "cuGraphDestroy";
        try (var _ = enter(op)) {
            graphs.destroy(graph, op);
        }
    }

    @Override
    public long[] graphGetNodes(long graph) {
        String op = "cuGraphGetNodes";
        try (var _ = enter(op)) {
            return graphs.nodes(graph, op);
        }
    }

    @Override
    public long[][] graphGetEdges(long graph) {
        String op = "cuGraphGetEdges_v2";
        try (var _ = enter(op)) {
            return graphs.edges(graph, op);
        }
    }

    @Override
    public int graphNodeType(long node) {
        String op = "cuGraphNodeGetType";
        try (var _ = enter(op)) {
            return graphs.nodeType(node, op);
        }
    }

    @Override
    public void graphExecKernelNodeSetParams(long exec, long node, long func, LaunchConfig config, KernelArgs args) {
        String op = "cuGraphExecKernelNodeSetParams_v2";
        try (var _ = enter(op)) {
            graphs.setKernel(exec, node, func, modules.find(func), f -> modules.kernelWork(f, config, args, extents, op, null), op);
        }
    }

    @Override
    public void graphExecMemsetNodeSetParams(long exec, long node, long ptr, int value, long bytes) {
        String op = "cuGraphExecMemsetNodeSetParams";
        try (var _ = enter(op)) {
            graphs.setMemset(exec, node, ptr, value, bytes, op);
        }
    }

    @Override
    public void graphExecCopyNodeSetParams(long exec, long node, long src, long dst, long bytes) {
        String op = "cuGraphExecMemcpyNodeSetParams";
        try (var _ = enter(op)) {
            graphs.setCopy(exec, node, src, dst, bytes, op);
        }
    }

    @Override
    public int graphExecUpdate(long exec, long graph) {
        String op = "cuGraphExecUpdate_v2";
        try (var _ = enter(op)) {
            return graphs.update(exec, graph, op);
        }
    }

    // ---- modules and launches -------------------------------------------------------------------

    @Override
    public long moduleLoadData(String name, byte[] image) {
        String op = "cuModuleLoadData";
        try (var _ = enter(op)) {
            return modules.load(name, image, op);
        }
    }

    @Override
    public void moduleUnload(long module) {
        String op = "cuModuleUnload";
        try (var _ = enter(op)) {
            modules.unload(module, op);
        }
    }

    @Override
    public long moduleGetFunction(long module, String func) {
        String op = "cuModuleGetFunction";
        try (var _ = enter(op)) {
            return modules.getFunction(module, func, op);
        }
    }

    @Override
    public void funcSetMaxDynamicSharedMemory(long func, int bytes) {
        String op = "cuFuncSetAttribute";
        try (var _ = enter(op)) {
            modules.setMaxDynamicShared(func, bytes, op);
        }
    }

    @Override
    public void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args) {
        String op = "cuLaunchKernel";
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            SimFunction f = modules.function(func, op, s);
            submit(s, modules.kernelWork(f, config, args, extents, op, s), op, f.name);
        }
    }

    @Override
    public byte[] compileToPtx(String name, String source, String... options) {
        throw err(CudaError.NOT_SUPPORTED, "nvrtcCompileProgram", "program=" + name
                + ": the simulator cannot compile CUDA C; load PTX or SimKernels.image(module) and register SimKernel twins");
    }

    // ---- several devices ------------------------------------------------------------------------

    /**
     * {@return option {@code sim.devices}, checked}
     *
     * @param config the options
     * @throws IllegalArgumentException if it is not in [1, {@value SimOptions#MAX_DEVICES}]
     */
    public static int deviceCount(DriverConfig config) {
        return SimSettings.deviceCount(config);
    }

    /**
     * {@return the simulated devices {@code config} describes} Every device can access every other.
     *
     * @param config the options: {@code sim.devices}, {@code sim.capacity}
     */
    public static List<metrale.gpu.GpuDevice> devices(DriverConfig config) {
        return SimPeers.devices(config);
    }

    @Override
    public int ordinal() {
        return ordinal;
    }

    /** {@return this context's peers} */
    SimPeers peers() {
        return peers;
    }

    @Override
    public boolean canAccessPeer(Driver peer) {
        return peers.canAccess(peers.peer(peer, "cuDeviceCanAccessPeer").peers);
    }

    @Override
    public void enablePeerAccess(Driver peer) {
        String op = "cuCtxEnablePeerAccess";
        SimDevice p = peers.peer(peer, op);
        try (var _ = enter(op)) {
            peers.enable(p.peers, op);
        }
    }

    @Override
    public void memcpyPeer(long dst, Driver dstDriver, long src, long bytes) {
        String op = "cuMemcpyPeer";
        SimDevice p = peers.peer(dstDriver, op);
        if (bytes < 0) {
            throw err(CudaError.INVALID_VALUE, op, "bytes=" + bytes + " is negative");
        }
        // As cuMemcpy: the copy follows the earlier work of both contexts' legacy streams (which
        // follow every blocking stream).
        drainBefore(1, op, "a peer copy");
        if (p != this) {
            p.drainBefore(1, op, "a peer copy");
        }
        peers.copy(op, dst, p.peers, src, bytes);
    }

    @Override
    public void memcpyPeerAsync(long dst, Driver dstDriver, long src, long bytes, long stream) {
        String op = "cuMemcpyPeerAsync";
        SimDevice p = peers.peer(dstDriver, op);
        if (bytes < 0) {
            throw err(CudaError.INVALID_VALUE, op, "bytes=" + bytes + " is negative");
        }
        // The stream's earlier work first (with the implicit waits of its kind); the copy itself
        // then runs at once, which is one of the orders CUDA allows (nothing later on the stream
        // can start before it).
        drainBefore(stream, op, "a peer copy");
        peers.copy(op, dst, p.peers, src, bytes);
    }

    /**
     * Runs everything a new operation on {@code stream} would wait for (its earlier work and, by its
     * kind, the legacy stream's or the blocking streams'), for work the simulator then does at once.
     */
    private void drainBefore(long stream, String op, String what) {
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            rules.checkInvalidated(s, op);
            if (s.capture != null) {
                throw CaptureRules.bad(s, CudaError.NOT_SUPPORTED, op, "the simulator cannot capture " + what + " into a graph");
            }
            Op o = submit(s, new Works.Marker(op + " on " + s), op, null);
            latch.runUntil(op, s, o);
        }
    }

    @Override
    public void streamWaitPeerEvent(long stream, Driver eventDriver, long event) {
        String op = "cuStreamWaitEvent";
        if (eventDriver == this) {
            streamWaitEvent(stream, event, 0);
            return;
        }
        SimDevice p = peers.peer(eventDriver, op);
        try (var _ = enter(op)) {
            SimStream s = streams.get(stream, op);
            if (s.capture != null) {
                throw CaptureRules.bad(s, CudaError.NOT_SUPPORTED, op, "the simulator cannot capture a wait for another device's event");
            }
        }
        // The event's work completes before anything later on the stream: here, before the call returns.
        p.eventSynchronize(event);
    }

    @Override
    public CudaError probe() {
        try (var _ = lock.hold()) {
            return latch.probe(!closed);
        }
    }

    @Override
    public void close() {
        try (var _ = lock.hold()) {
            if (closed) {
                return;
            }
            closed = true;
            process.memories.remove(memory);
            liveAtClose = describeLive();
            scheduler.discardAll();
            memory.freeAll();
            streams.clear();
            events.clear();
            modules.clear();
            graphs.clear();
            rules.clear();
        }
    }

    /**
     * {@return what this device still held when {@link #close()} was first called, one line per kind
     * with its count (device, managed and page-locked allocations, streams, events, modules, graphs,
     * graph execs)} A runtime that released everything before closing its driver leaves it empty;
     * it is empty before close too. Under the lock.
     */
    List<String> liveAtClose() {
        return liveAtClose;
    }

    /** {@return whether {@link #close()} was called} Under the lock. */
    boolean isClosed() {
        return closed;
    }

    private List<String> describeLive() {
        List<String> out = new ArrayList<>();
        for (Alloc.Kind k : Alloc.Kind.values()) {
            int n = memory.liveCount(k);
            if (n > 0) {
                out.add(n + " " + k.label + " allocation(s)");
            }
        }
        String[] kinds = {"stream(s)", "event(s)", "module(s)", "graph(s)", "graph exec(s)"};
        int[] counts = {streams.count(), events.count(), modules.count(), graphs.graphCount(), graphs.execCount()};
        for (int i = 0; i < kinds.length; i++) {
            if (counts[i] > 0) {
                out.add(counts[i] + " " + kinds[i]);
            }
        }
        return List.copyOf(out);
    }

    // ---- helpers ----------------------------------------------------------------------------------

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /**
     * Every call starts here: {@return the lock's token, held} A closed device or a latched sticky
     * fault fails the call, with the lock released again.
     */
    private SimLock.Held enter(String op) {
        SimLock.Held held = lock.hold();
        try {
            check(op);
        } catch (RuntimeException e) {
            held.close();
            throw e;
        }
        return held;
    }

    /** Under the lock: a closed device or a latched sticky fault fails the call. */
    private void check(String op) {
        if (closed) {
            throw err(CudaError.CONTEXT_IS_DESTROYED, op, "the SimDevice is closed");
        }
        latch.check(op);
    }

    /** Work on a capturing stream is recorded; otherwise enqueued. {@return the operation, or {@code null} when recorded} */
    private Op submit(SimStream s, Work w, String op, String d) {
        if (s.capture != null) {
            s.capture.add(s, w);
            return null;
        }
        if (s.kind == SimStream.Kind.LEGACY) {
            rules.checkLegacyWork(op, d == null ? w.describe() : d);
        }
        return scheduler.enqueue(s, w, null);
    }
}
