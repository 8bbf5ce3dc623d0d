// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import metrale.gpu.AdoptedMemory;
import metrale.gpu.Allocation;
import metrale.gpu.CaptureMode;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CapturedStep;
import metrale.gpu.DeviceInfo;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GpuOptions;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.KernelRegistry;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LiveResource;
import metrale.gpu.MemoryPool;
import metrale.gpu.OpCache;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.StepOptions;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import metrale.telemetry.CallSites;
import metrale.telemetry.Telemetry;

/**
 * The runtime core: {@link Gpu} over a {@link Driver}, holding every policy the driver does not
 * (the allocation ledger, red zones, telemetry, the fault latch, debug sync, the pinned-source
 * rule, handle bookkeeping and teardown). This class holds the doors; the rules are in its parts
 * ({@link MemoryPart}, {@link CopyPart}, {@link KernelPart}, {@link StreamPart}, {@link GraphPart},
 * {@link StepPart}, {@link PeerPart}, {@link Teardown}, and {@link Failures} for the fault latch),
 * which share one {@link Core}.
 *
 * <p><b>Gate.</b> Every call except {@link #close()}, {@link #isClosed()}, {@link #fault()},
 * {@link #liveResources()}, {@link #telemetry()} and {@link #options()} first reads one atomic
 * state: after {@link #close()} it throws {@link IllegalStateException}, after a latched sticky
 * fault {@link StickyFaultException}. A door that reaches the driver or a handle enters the gate
 * for its whole run ({@code try (var _ = gate.enter(...))}), so close waits for it; one that reads
 * only the runtime's own tables checks the gate and does not enter.
 *
 * <p><b>Launch path.</b> With the launch trace, timing, debug sync and JFR off, {@link #launch}
 * takes no lock and allocates nothing: one enter and leave of the gate (its passes are made
 * once), one read of the trace flag, the driver call and a counter increment.
 */
public final class GpuRuntime implements Gpu {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /** How long {@link #close()} waits for calls in flight before it leaves the release to the last of them. */
    private static final int CLOSE_WAIT_SECONDS = 10;

    static {
        CallSites.skip("metrale.gpu.Gpu", "metrale.gpu.DeviceBuffer", "metrale.gpu.GpuBuilder", "metrale.gpu.internal.");
    }

    private final GpuOptions options;
    private final Core core;
    private final Gate gate;
    private final MemoryPart memory;
    private final CopyPart copies;
    private final KernelPart kernels;
    private final StreamPart streams;
    private final GraphPart graphs;
    private final StepPart steps;
    private final PeerPart peers;
    private final Teardown teardown;

    /** Package-private for tests, which open a runtime over a driver of their own. */
    GpuRuntime(GpuOptions options, Driver driver) {
        this.options = options;
        this.core = Core.of(options, driver);
        this.gate = core.gate();
        this.memory = new MemoryPart(core);
        this.copies = new CopyPart(core);
        this.kernels = new KernelPart(core);
        this.streams = new StreamPart(core);
        this.graphs = new GraphPart(core);
        this.steps = new StepPart(core);
        this.peers = new PeerPart(core);
        this.teardown = new Teardown(core);
    }

    /**
     * Opens a runtime: picks the backend with {@link Backends#choose}, opens its driver with the
     * options' backend options, and wraps it.
     *
     * @param options the options
     * @return the runtime, owned by the caller
     * @throws GpuException if no backend can be opened, naming why
     */
    public static Gpu open(GpuOptions options) {
        Objects.requireNonNull(options, "options");
        BackendProvider provider = Backends.choose(options.backend());
        Driver driver = provider.open(new DriverConfig(options.backendOptions(), options.backendObjects()));
        try {
            return new GpuRuntime(options, driver);
        } catch (RuntimeException | Error e) {
            try {
                driver.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** {@return the state this runtime's parts share} For a peer runtime's parts. */
    Core core() {
        return core;
    }

    // ---- identity ---------------------------------------------------------------------------------

    @Override public String backendName() {
        try (var _ = gate.enter("backendName")) {
            return core.driver().name();
        }
    }

    @Override public DeviceInfo device() {
        gate.check("device");
        return core.info();
    }

    @Override public GpuOptions options() {
        return options;
    }

    @Override public Telemetry telemetry() {
        return core.telemetry();
    }

    @Override public <T> Optional<T> unwrap(Class<T> type) {
        try (var _ = gate.enter("unwrap")) {
            // GpuRuntime itself: how RuntimeAccess finds the runtime behind a wrapper that forwards unwrap (the test kit's).
            return Objects.requireNonNull(type, "type") == GpuRuntime.class ? Optional.of(type.cast(this))
                    : core.driver().controls(type);
        }
    }

    // ---- memory and the ledger ---------------------------------------------------------------------

    @Override public DevicePtr alloc(long bytes) {
        try (var _ = gate.enter("alloc")) {
            return memory.alloc(bytes);
        }
    }

    @Override public MemoryPool pool() {
        gate.check("pool");
        return core.pool();
    }

    @Override public DevicePtr allocManaged(long bytes) {
        try (var _ = gate.enter("allocManaged")) {
            return memory.allocManaged(bytes);
        }
    }

    @Override public void free(DevicePtr ptr) {
        try (var _ = gate.enter("free")) {
            memory.free(ptr);
        }
    }

    @Override public DevicePtr allocArena(long bytes) {
        try (var _ = gate.enter("allocArena")) {
            return memory.allocArena(bytes);
        }
    }

    @Override public void freeArena(DevicePtr ptr) {
        try (var _ = gate.enter("freeArena")) {
            memory.freeArena(ptr);
        }
    }

    @Override public void noteArenaUse(DevicePtr chunk, long usedBytes) {
        gate.check("noteArenaUse");
        memory.noteArenaUse(chunk, usedBytes);
    }

    @Override public long chunkSlackBytes() {
        gate.check("chunkSlackBytes");
        return core.arenas().slackBytes();
    }

    @Override public long liveBytes() {
        gate.check("liveBytes");
        return core.ledger().liveBytes();
    }

    @Override public int liveAllocCount() {
        gate.check("liveAllocCount");
        return core.ledger().count();
    }

    @Override public List<Allocation> liveAllocations() {
        gate.check("liveAllocations");
        return memory.liveAllocations();
    }

    @Override public void markLeaksReported() {
        // Entered, not checked: close reads what it marks.
        try (var _ = gate.enter("markLeaksReported")) {
            memory.markLeaksReported();
        }
    }

    @Override public String allocReport(int topN, long minMb) {
        gate.check("allocReport");
        return memory.allocReport(topN, minMb);
    }

    @Override public DevicePtr adoptDeviceMemory(long address, long bytes, String label) {
        gate.check("adoptDeviceMemory");
        return memory.adoptDeviceMemory(address, bytes, label);
    }

    @Override public void releaseAdoption(DevicePtr ptr) {
        gate.check("releaseAdoption");
        core.adoptions().release(Objects.requireNonNull(ptr, "ptr").address());
    }

    @Override public List<AdoptedMemory> adoptedMemory() {
        gate.check("adoptedMemory");
        return core.adoptions().snapshot();
    }

    @Override public int sweepUnreleased() {
        try (var _ = gate.enter("sweepUnreleased")) {
            return memory.sweepUnreleased();
        }
    }

    @Override public int scanRedzones() {
        try (var _ = gate.enter("scanRedzones")) {
            return memory.scanRedzones();
        }
    }

    @Override public List<RedZoneViolation> findRedzoneViolations() {
        String op = "findRedzoneViolations";
        try (var _ = gate.enter(op)) {
            return memory.findViolations(op);
        }
    }

    @Override public List<RedZoneViolation> freedRedzoneViolations() {
        try (var _ = gate.enter("freedRedzoneViolations")) {
            return memory.freedRedzoneViolations();
        }
    }

    @Override public long quarantinedBytes() {
        gate.check("quarantinedBytes");
        return core.quarantine().bytes();
    }

    @Override public void poisonRedzones(long lo, long hi) {
        try (var _ = gate.enter("poisonRedzones")) {
            memory.poisonRedzones(lo, hi);
        }
    }

    // ---- copies -----------------------------------------------------------------------------------

    @Override public void copyH2D(MemorySegment src, DevicePtr dst) {
        try (var _ = gate.enter("copyH2D")) {
            copies.copyH2D(src, dst);
        }
    }

    @Override public void copyD2H(DevicePtr src, MemorySegment dst) {
        try (var _ = gate.enter("copyD2H")) {
            copies.copyD2H(src, dst);
        }
    }

    @Override public void copyD2HOnStream(DevicePtr src, MemorySegment dst, Stream stream) {
        try (var _ = gate.enter("copyD2HOnStream")) {
            copies.copyD2HOnStream(src, dst, stream);
        }
    }

    @Override public void copyD2HAsync(DevicePtr src, MemorySegment dst, Stream stream) {
        try (var _ = gate.enter("copyD2HAsync")) {
            copies.copyD2HAsync(src, dst, stream);
        }
    }

    @Override public void copyH2DAsync(MemorySegment src, DevicePtr dst, Stream stream) {
        try (var _ = gate.enter("copyH2DAsync")) {
            copies.copyH2DAsync(src, dst, stream);
        }
    }

    @Override public void copyH2DAsyncRetained(MemorySegment src, DevicePtr dst, Stream stream) {
        try (var _ = gate.enter("copyH2DAsyncRetained")) {
            copies.copyH2DAsyncRetained(src, dst, stream);
        }
    }

    @Override public void copyD2D(DevicePtr src, DevicePtr dst, long bytes) {
        try (var _ = gate.enter("copyD2D")) {
            copies.copyD2D(src, dst, bytes);
        }
    }

    @Override public void copyD2DAsync(DevicePtr src, DevicePtr dst, long bytes, Stream stream) {
        try (var _ = gate.enter("copyD2DAsync")) {
            copies.copyD2DAsync(src, dst, bytes, stream);
        }
    }

    @Override public void copyD2D2DAsync(DevicePtr src, long srcPitch, DevicePtr dst, long dstPitch, long widthBytes,
                                         long height, Stream stream) {
        try (var _ = gate.enter("copyD2D2DAsync")) {
            copies.copyD2D2DAsync(src, srcPitch, dst, dstPitch, widthBytes, height, stream);
        }
    }

    @Override public void memset(DevicePtr ptr, int value, long bytes) {
        try (var _ = gate.enter("memset")) {
            copies.memset(ptr, value, bytes);
        }
    }

    @Override public void memsetAsync(DevicePtr ptr, int value, long bytes, Stream stream) {
        try (var _ = gate.enter("memsetAsync")) {
            copies.memsetAsync(ptr, value, bytes, stream);
        }
    }

    // ---- modules and kernels ---------------------------------------------------------------------

    @Override public void loadModule(String name, byte[] image) {
        try (var _ = gate.enterReleaser("loadModule")) {
            kernels.loadModule(name, image);
        }
    }

    @Override public boolean hasModule(String name) {
        gate.check("hasModule");
        return kernels.hasModule(name);
    }

    @Override public KernelHandle kernel(String module, String func) {
        try (var _ = gate.enter("kernel")) {
            return kernels.kernel(module, func);
        }
    }

    @Override public KernelRegistry kernelRegistry() {
        gate.check("kernelRegistry");
        return core.modules().registry();
    }

    @Override public OpCache opCache() {
        gate.check("opCache");
        return core.opCache();
    }

    @Override public byte[] compileCuda(String name, String source, String... compilerOptions) {
        try (var _ = gate.enter("compileCuda")) {
            return kernels.compileCuda(name, source, compilerOptions);
        }
    }

    @Override public void setMaxDynamicSharedMemory(KernelHandle kernel, int bytes) {
        try (var _ = gate.enter("setMaxDynamicSharedMemory")) {
            kernels.setMaxDynamicSharedMemory(kernel, bytes);
        }
    }

    @Override public void launch(KernelHandle kernel, LaunchConfig config, Stream stream, KernelArgs args) {
        try (var _ = gate.enter("launch")) {
            kernels.launch(kernel, config, stream, args);
        }
    }

    // ---- streams and events ------------------------------------------------------------------------

    @Override public Stream defaultStream() {
        gate.check("defaultStream");
        return Stream.DEFAULT;
    }

    @Override public Stream createStream() {
        return createStream(false);
    }

    @Override public Stream createStream(boolean nonBlocking) {
        try (var _ = gate.enter("createStream")) {
            return streams.createStream(nonBlocking);
        }
    }

    @Override public void destroyStream(Stream stream) {
        try (var _ = gate.enterReleaser("destroyStream")) {
            streams.destroyStream(stream);
        }
    }

    @Override public void synchronize(Stream stream) {
        try (var _ = gate.enter("synchronize")) {
            streams.synchronize(stream);
        }
    }

    @Override public void synchronize() {
        try (var _ = gate.enter("synchronize")) {
            streams.synchronize();
        }
    }

    @Override public boolean streamQuery(Stream stream) {
        try (var _ = gate.enter("streamQuery")) {
            return streams.streamQuery(stream);
        }
    }

    @Override public Event createEvent() {
        return createEvent(0);
    }

    @Override public Event createEvent(int flags) {
        try (var _ = gate.enter("createEvent")) {
            return streams.createEvent(flags);
        }
    }

    @Override public void recordEvent(Event event, Stream stream) {
        try (var _ = gate.enter("recordEvent")) {
            streams.recordEvent(event, stream);
        }
    }

    @Override public void streamWaitEvent(Stream stream, Event event) {
        try (var _ = gate.enter("streamWaitEvent")) {
            streams.streamWaitEvent(stream, event);
        }
    }

    @Override public void eventSynchronize(Event event) {
        try (var _ = gate.enter("eventSynchronize")) {
            streams.eventSynchronize(event);
        }
    }

    @Override public boolean eventQuery(Event event) {
        try (var _ = gate.enter("eventQuery")) {
            return streams.eventQuery(event);
        }
    }

    @Override public float elapsedMillis(Event start, Event end) {
        try (var _ = gate.enter("elapsedMillis")) {
            return streams.elapsedMillis(start, end);
        }
    }

    @Override public void destroyEvent(Event event) {
        try (var _ = gate.enterReleaser("destroyEvent")) {
            streams.destroyEvent(event);
        }
    }

    /** The door of {@link metrale.gpu.internal.access.RuntimeAccess#onDriverStream}, which says what it does. */
    public void onDriverStream(Stream stream, String call, long[] ranges, LongConsumer body) {
        try (var _ = gate.enter(call)) {
            streams.onDriverStream(stream, call, ranges, body);
        }
    }

    // ---- several devices: both gates, the peer's closed first ------------------------------------

    @Override public int deviceOrdinal() {
        try (var _ = gate.enter("deviceOrdinal")) {
            return core.driver().ordinal();
        }
    }

    @Override public boolean canAccessPeer(Gpu peer) {
        String op = "canAccessPeer";
        Core other = peers.peer(peer, op, "peer", true);
        try (var _ = gate.enter(op); var _ = other.gate().enter(op)) {
            return peers.canAccessPeer(other);
        }
    }

    @Override public void enablePeerAccess(Gpu peer) {
        String op = "enablePeerAccess";
        Core other = peers.peer(peer, op, "peer", false);
        try (var _ = gate.enter(op); var _ = other.gate().enter(op)) {
            peers.enablePeerAccess(other);
        }
    }

    @Override public void copyToPeer(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes) {
        peerCopy(src, dstGpu, dst, bytes, null, "copyToPeer");
    }

    @Override public void copyToPeerAsync(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes, Stream stream) {
        peerCopy(src, dstGpu, dst, bytes, Objects.requireNonNull(stream, "stream"), "copyToPeerAsync");
    }

    private void peerCopy(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes, Stream stream, String op) {
        Core other = peers.peer(dstGpu, op, "dstGpu", true);
        // A copy within one runtime enters its gate once.
        try (var _ = gate.enter(op); var _ = other == core ? null : other.gate().enter(op)) {
            peers.copy(src, other, dst, bytes, stream, op);
        }
    }

    @Override public void streamWaitEvent(Stream stream, Gpu eventGpu, Event event) {
        String op = "streamWaitEvent";
        Core other = peers.peer(eventGpu, op, "eventGpu", true);
        if (other == core) {
            streamWaitEvent(stream, event);
            return;
        }
        try (var _ = gate.enter(op); var _ = other.gate().enter(op)) {
            peers.streamWaitEvent(stream, other, event);
        }
    }

    // ---- capture and graphs ----------------------------------------------------------------------

    @Override public void beginCapture(Stream stream) {
        beginCapture(stream, CaptureMode.GLOBAL);
    }

    @Override public void beginCapture(Stream stream, CaptureMode mode) {
        try (var _ = gate.enter("beginCapture")) {
            graphs.beginCapture(stream, mode);
        }
    }

    @Override public GraphHandle endCapture(Stream stream) {
        try (var _ = gate.enter("endCapture")) {
            return graphs.endCapture(stream);
        }
    }

    @Override public void abortCaptureIfActive(Stream stream) {
        try (var _ = gate.enter("abortCaptureIfActive")) {
            graphs.abortCaptureIfActive(stream);
        }
    }

    @Override public boolean streamIsCapturing(Stream stream) {
        try (var _ = gate.enter("streamIsCapturing")) {
            return graphs.streamIsCapturing(stream);
        }
    }

    @Override public CaptureStatus captureStatus(Stream stream) {
        try (var _ = gate.enter("captureStatus")) {
            return graphs.captureStatus(stream);
        }
    }

    @Override public void launchGraph(GraphHandle graph, Stream stream) {
        try (var _ = gate.enter("launchGraph")) {
            graphs.launchGraph(graph, stream);
        }
    }

    @Override public void destroyGraph(GraphHandle graph) {
        try (var _ = gate.enterReleaser("destroyGraph")) {
            graphs.destroyGraph(graph);
        }
    }

    @Override public CapturedStep capturedStep(String name, CapturedStep.Region region, StepOptions options) {
        // Entered, not checked: close takes the inventory it adds to.
        try (var _ = gate.enter("capturedStep")) {
            return steps.open(this, name, region, options);
        }
    }

    // ---- device ------------------------------------------------------------------------------------

    @Override public long totalMemory() {
        gate.check("totalMemory");
        return core.info().totalMemory();
    }

    @Override public long freeMemory() {
        try (var _ = gate.enter("freeMemory")) {
            return memory.freeMemory();
        }
    }

    @Override public long deviceFreeMemory() {
        try (var _ = gate.enter("deviceFreeMemory")) {
            return memory.deviceFreeMemory();
        }
    }

    @Override public int smCount() {
        gate.check("smCount");
        return core.info().smCount();
    }

    @Override public void bindToThread() {
        try (var _ = gate.enter("bindToThread")) {
            streams.bindToThread();
        }
    }

    @Override public boolean debugSyncKernels() {
        gate.check("debugSyncKernels");
        return core.debugSync();
    }

    // ---- pinned host memory ------------------------------------------------------------------------

    @Override public MemorySegment allocHostPinned(long bytes) {
        try (var _ = gate.enter("allocHostPinned")) {
            return memory.allocHostPinned(bytes);
        }
    }

    @Override public void freeHostPinned(MemorySegment host) {
        try (var _ = gate.enterReleaser("freeHostPinned")) {
            memory.freeHostPinned(host);
        }
    }

    @Override public DevicePtr hostPtrToDevice(MemorySegment host) {
        try (var _ = gate.enter("hostPtrToDevice")) {
            return memory.hostPtrToDevice(host);
        }
    }

    @Override public boolean isPinned(MemorySegment host) {
        gate.check("isPinned");
        return core.pinned().contains(Objects.requireNonNull(host, "host"));
    }

    // ---- faults and teardown ----------------------------------------------------------------------

    @Override public Optional<StickyFaultException> fault() {
        return gate.fault("fault");
    }

    @Override public boolean isClosed() {
        return gate.isClosed();
    }

    /** {@inheritDoc} Not gated: after close it returns the inventory close took. */
    @Override public List<LiveResource> liveResources() {
        return core.resources().list();
    }

    /** The door of {@link metrale.gpu.internal.access.RuntimeAccess#track}. {@return what takes the resource off the list} */
    public Runnable track(LiveResource.Kind kind, String handle) {
        // Entered, not checked: close takes the inventory it adds to.
        try (var _ = gate.enter("track " + kind.label())) {
            return core.resources().other(kind, handle);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Closing shuts the gate first, so every later call throws {@link IllegalStateException}
     * naming this close, then waits up to {@value #CLOSE_WAIT_SECONDS} seconds for the calls
     * already inside to return, and only then synchronizes the context and releases everything.
     * If calls are still inside after that wait (a synchronize on a kernel that does not end, say),
     * close returns and the last of them releases everything as it leaves.
     */
    @Override public void close() {
        String site = CallSites.caller();
        if (gate.close(teardown::release, TimeUnit.SECONDS.toNanos(CLOSE_WAIT_SECONDS), site) && !gate.released()) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close at " + site + ": " + gate.inFlight()
                    + " call(s) still in flight after " + CLOSE_WAIT_SECONDS + " s; the last to return releases the runtime");
        }
    }

    @Override public String toString() {
        return "Gpu[" + core.info() + (isClosed() ? ", closed" : "") + "]";
    }
}
