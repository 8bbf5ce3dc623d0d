// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.Allocation;
import metrale.gpu.CaptureMode;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
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
import metrale.gpu.OpCache;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.StepOptions;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import metrale.gpu.spi.MemInfo;
import metrale.gpu.spi.ModuleImages;
import metrale.telemetry.CallSites;
import metrale.telemetry.Counters;
import metrale.telemetry.KernelTiming;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.Telemetry;
import metrale.telemetry.TraceEntry;

/**
 * The runtime core: {@link Gpu} over a {@link Driver}, holding every policy the driver does not
 * (the allocation ledger, red zones, telemetry, the fault latch, debug sync, the pinned-source
 * rule, handle bookkeeping and teardown).
 *
 * <p><b>Gate.</b> Every call except {@link #close()}, {@link #isClosed()}, {@link #fault()},
 * {@link #telemetry()} and {@link #options()} first reads one atomic state: after {@link #close()}
 * it throws {@link IllegalStateException}, after a latched sticky fault {@link StickyFaultException}.
 *
 * <p><b>Fault latch.</b> When a driver call fails, the runtime probes the context
 * ({@link Driver#probe()}); if the error or the probe is sticky, the failure is latched with the
 * runtime call during which it surfaced and that call's site. The call itself throws the original
 * failure (for an illegal address, with the ledger entry nearest the faulting address added).
 *
 * <p><b>Counters.</b> The stream-sync counter counts the syncs an app asks for:
 * {@link #synchronize(Stream)}, {@link #synchronize()} and {@link #eventSynchronize(Event)}. The
 * syncs the runtime adds itself (debug sync, timing spans, the pinned-source rule) are not counted.
 * Every device-to-host copy, blocking or not, counts as a D2H copy.
 *
 * <p><b>Timing.</b> With {@link GpuOptions#timing()} on, each launch is a span that ends after
 * the runtime synchronizes the launch's stream, so it covers the kernel's execution (and whatever
 * was queued before it on that stream), not just the enqueue. On a capturing stream the span
 * covers the enqueue only, since a sync would invalidate the capture; debug sync likewise skips
 * capturing streams.
 *
 * <p><b>Launch path.</b> With the launch trace, timing, debug sync and JFR off, {@link #launch}
 * takes no lock and allocates nothing: one read of the gate, one read of the trace flag, the
 * driver call and a counter increment.
 */
public final class GpuRuntime implements Gpu {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /** {@code CU_MEM_ATTACH_GLOBAL}. */
    private static final int ATTACH_GLOBAL = 1;
    /** {@code CU_MEMHOSTALLOC_DEVICEMAP}: mapped, so {@link #hostPtrToDevice} works without unified addressing too. */
    private static final int HOST_DEVICEMAP = 2;

    /** How long {@link #close()} waits for calls in flight before it leaves the release to the last of them. */
    private static final int CLOSE_WAIT_SECONDS = 10;

    /** How far from an allocation a faulting address may be for the fault report to name it. */
    private static final long NEAR = 1 << 20;

    private static final Pattern HEX = Pattern.compile("0x([0-9a-fA-F]{1,16})");

    static {
        CallSites.skip("metrale.gpu.Gpu", "metrale.gpu.DeviceBuffer", "metrale.gpu.GpuBuilder", "metrale.gpu.internal.");
    }

    private final GpuOptions options;
    private final Driver driver;
    private final DeviceInfo info;
    private final Telemetry telemetry;
    private final LaunchTrace trace;
    private final Counters counters;
    private final KernelTiming timing;
    private final boolean timingOn;
    private final boolean debugSync;
    private final boolean allocSites;
    private final boolean checkPointers;
    private final AllocSites sites;
    private final Resources resources;

    private final Gate gate = new Gate();
    private final Ledger ledger = new Ledger();
    /** Indices of the ledger entries a caller has reported as leaks itself (markLeaksReported). */
    private final Set<Long> reportedLeaks = ConcurrentHashMap.newKeySet();
    private final RedZones redZones;
    private final Quarantine quarantine;
    private final ArenaTable arenas = new ArenaTable();
    private final Adoptions adoptions = new Adoptions();
    private final PinnedRegistry pinned = new PinnedRegistry();
    private final HandleTable streams = new HandleTable();
    private final HandleTable events = new HandleTable();
    private final HandleTable functions = new HandleTable();
    private final HandleTable graphs = new HandleTable();
    private final Modules modules = new Modules();
    private final Object moduleLoadLock = new Object();
    private final OpCache opCache = new OpCache();
    private final AtomicBoolean pinnedSourceWarned = new AtomicBoolean();
    private final PoolFront pool;
    /** Whether {@link #alloc(long)} allocates from {@link #pool}. */
    private final boolean pooled;
    /** Threads running a captured step's traced run, and each one's recorder. */
    private final AtomicInteger stepTracers = new AtomicInteger();
    private final ThreadLocal<StepRecorder> stepRecorder = new ThreadLocal<>();

    private GpuRuntime(GpuOptions options, Driver driver) {
        this.options = options;
        this.driver = driver;
        this.info = driver.deviceInfo();
        this.telemetry = options.telemetry();
        this.trace = telemetry.trace();
        this.counters = telemetry.counters();
        this.timing = telemetry.timing();
        this.timingOn = options.timing();
        this.debugSync = options.debugSync();
        this.allocSites = options.allocSites();
        this.checkPointers = options.checkPointers();
        this.sites = new AllocSites(allocSites, options.allocSiteSample());
        // Its own sampling count, so creating streams and events does not move which allocation is walked.
        this.resources = new Resources(new AllocSites(allocSites, options.allocSiteSample()));
        this.redZones = new RedZones(options.redZoneBytes(), options.redZoneMinIndex());
        this.quarantine = new Quarantine(driver, redZones, options.quarantineBytes());
        this.pool = new PoolFront(options.allocator(), driver, ledger, redZones, quarantine, gate,
                sites, this::liveStream, this::fail);
        this.pooled = !"driver".equals(options.allocator());
        if (options.d2hTrace()) {
            counters.setD2hSiteTrace(true);
        }
        if (timingOn) {
            timing.setEnabled(true);
        }
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

    // ---- failure handling ----------------------------------------------------------------------

    /**
     * Runs the fault latch for a failed driver call.
     *
     * @param call the runtime call, e.g. {@code launch heat::jacobi}
     * @return what the call should throw: {@code e}, {@code e} enriched when it latched, or a
     *         refusal if another thread latched first
     */
    private RuntimeException fail(GpuException e, String call) {
        Gate.Latched s = gate.latched();
        if (s != null) {
            return e.error().isSticky() ? refuseLatched(s, call) : e;
        }
        CudaError probe = probe();
        if (!e.error().isSticky() && !probe.isSticky()) {
            return e;
        }
        String site = CallSites.caller();
        CudaError error;
        int raw;
        String details;
        if (e.error().isSticky()) {
            error = e.error();
            raw = e.rawCode();
            details = e.details();
            if (error == CudaError.ILLEGAL_ADDRESS) {
                details = join(details, nearestAllocation(e.getMessage()));
            }
        } else {
            // The call's own error is an argument error, but the context reports a sticky one
            // from earlier asynchronous work: latch what the context is in.
            error = probe;
            raw = probe.code();
            details = "the context reports sticky " + probe + " after: " + e.getMessage();
        }
        GpuException original = new GpuException(error, raw, e.operation(),
                join(details, "surfaced during " + call + " at " + site), e);
        if (gate.latch(original, call, site)) {
            LOG.log(System.Logger.Level.ERROR, "metrale-gpu: sticky fault latched: " + original.getMessage()
                    + "; every later call fails with StickyFaultException");
            return original;
        }
        return refuseLatched(gate.latched(), call);
    }

    private static StickyFaultException refuseLatched(Gate.Latched l, String call) {
        return new StickyFaultException(l.original(), l.call(), l.site(), call);
    }

    private static String join(String a, String b) {
        return a.isEmpty() ? b : b.isEmpty() ? a : a + "; " + b;
    }

    private CudaError probe() {
        try {
            CudaError p = driver.probe();
            return p == null ? CudaError.SUCCESS : p;
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.DEBUG, "metrale-gpu: context probe failed: " + ex);
            return CudaError.SUCCESS;
        }
    }

    /**
     * {@return the live allocation nearest an address the driver's message names, or empty} Of
     * the hex numbers in the message (which may also name kernels or streams), the one closest to
     * a live allocation is taken as the faulting address; one more than {@link #NEAR} bytes from
     * every allocation (a null pointer, say) names none.
     */
    private String nearestAllocation(String message) {
        Matcher m = HEX.matcher(message == null ? "" : message);
        long bestAddr = 0;
        long bestDist = -1;
        Ledger.Entry best = null;
        long insideAddr = 0;
        Ledger.Entry inside = null;
        while (m.find()) {
            long addr;
            try {
                addr = Long.parseUnsignedLong(m.group(1), 16);
            } catch (NumberFormatException ex) {
                continue;
            }
            Ledger.Entry near = ledger.nearest(addr);
            if (near == null) {
                return "";
            }
            boolean within = Long.compareUnsigned(addr, near.base()) >= 0
                    && Long.compareUnsigned(addr, near.end() + near.pad()) < 0;
            if (within) {
                // A live address the message also quotes (a kernel argument, an allocation's range) is
                // not where the access went; it is named only when the message names no other.
                if (inside == null) {
                    inside = near;
                    insideAddr = addr;
                }
                continue;
            }
            long dist = Long.compareUnsigned(addr, near.base()) < 0 ? near.base() - addr : addr - (near.end() + near.pad());
            if (best == null || Long.compareUnsigned(dist, bestDist) < 0) {
                best = near;
                bestDist = dist;
                bestAddr = addr;
            }
        }
        if (best == null && inside != null) {
            best = inside;
            bestAddr = insideAddr;
            bestDist = 0;
        }
        if (best == null || Long.compareUnsigned(bestDist, NEAR) > 0) {
            return "";
        }
        long off = bestAddr - best.base();
        String where;
        if (off >= 0 && off < best.allocation().bytes()) {
            where = "inside it, at +" + off;
        } else if (off >= 0) {
            where = (off - best.allocation().bytes()) + " byte(s) past its end"
                    + (off < best.allocation().bytes() + best.pad() ? ", in its red zone" : "");
        } else {
            where = (-off) + " byte(s) before its start";
        }
        // With a red zone the driver's allocation (what a backend's own message sizes) is the
        // buffer plus its pad: say so, so the two sizes in one message are seen to be one buffer.
        String pad = best.pad() == 0 ? "" : " (with its " + best.pad() + "-byte red zone, the driver allocation of +"
                + (best.allocation().bytes() + best.pad()) + " bytes)";
        return "nearest allocation to 0x" + Long.toHexString(bestAddr) + ": " + best.describe() + pad + ", " + where;
    }

    private RuntimeException launchFailed(GpuException e, long func, String suffix) {
        return fail(e, "launch " + trace.nameOf(func) + suffix);
    }

    /** Runs a cleanup step; a failure is logged, never thrown. */
    private void quietly(String what, boolean faulted, Runnable step) {
        try {
            step.run();
        } catch (GpuException e) {
            System.Logger.Level level = e.error().isTeardown() || faulted ? System.Logger.Level.DEBUG
                    : System.Logger.Level.WARNING;
            LOG.log(level, "metrale-gpu: close: " + what + " failed: " + e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: " + what + " failed: " + e);
        }
    }

    // ---- identity ---------------------------------------------------------------------------------

    @Override
    public String backendName() {
        int gt = gate.enter("backendName");
        try {
            return driver.name();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public DeviceInfo device() {
        int gt = gate.enter("device");
        try {
            return info;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public GpuOptions options() {
        return options;
    }

    @Override
    public Telemetry telemetry() {
        return telemetry;
    }

    @Override
    public <T> Optional<T> unwrap(Class<T> type) {
        int gt = gate.enter("unwrap");
        try {
            Objects.requireNonNull(type, "type");
            if (type == GpuRuntime.class) {
                // How RuntimeAccess finds the runtime behind a wrapper that forwards unwrap (the test kit's).
                return Optional.of(type.cast(this));
            }
            return driver.controls(type);
        } finally {
            gate.leave(gt);
        }
    }

    // ---- memory and the ledger ---------------------------------------------------------------------

    @Override
    public DevicePtr alloc(long bytes) {
        int gt = gate.enter("alloc");
        try {
            if (pooled) {
                return pool.allocOn(bytes, Stream.DEFAULT, "alloc");
            }
            Checks.size(bytes, "bytes", "alloc");
            String site = sites.get();
            long index = ledger.nextIndex();
            // Size 0 goes to the driver unpadded, so it fails as CUDA's cuMemAlloc does.
            long pad = redZones.on() && bytes > 0 ? redZones.padFor(index) : 0;
            if (pad > Long.MAX_VALUE - bytes) {
                // cuMemAlloc's answer for the size alone: no device has 2^63 bytes.
                throw new GpuException(CudaError.OUT_OF_MEMORY, "alloc", "bytes=" + bytes + " (+" + pad
                        + " B red zone): larger than any device memory; nothing was allocated");
            }
            long p;
            var jfr = Jfr.beginAlloc();
            try {
                p = memAllocRetrying(bytes + pad);
            } catch (GpuException e) {
                throw allocFailed(e, "alloc", bytes, pad, site);
            }
            Ledger.Entry entry = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, site, index, false), pad);
            if (pad > 0) {
                try {
                    redZones.fill(driver, p, bytes, pad, pool.capturing());
                } catch (GpuException e) {
                    RuntimeException r = fail(e, "alloc (red-zone fill)");
                    try {
                        driver.memFree(p);
                    } catch (RuntimeException suppressed) {
                        r.addSuppressed(suppressed);
                    }
                    throw r;
                }
            }
            ledger.add(entry);
            Jfr.alloc(jfr, p, bytes, site, false);
            return entry.allocation().ptr();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public metrale.gpu.MemoryPool pool() {
        int gt = gate.enter("pool");
        try {
            return pool;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public DevicePtr allocManaged(long bytes) {
        int gt = gate.enter("allocManaged");
        try {
            Checks.size(bytes, "bytes", "allocManaged");
            String site = sites.get();
            long index = ledger.nextIndex();
            long p;
            var jfr = Jfr.beginAlloc();
            try {
                p = driver.memAllocManaged(bytes, ATTACH_GLOBAL);
            } catch (GpuException e) {
                throw allocFailed(e, "allocManaged", bytes, 0, site);
            }
            Ledger.Entry entry = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, site, index, true), 0);
            ledger.add(entry);
            Jfr.alloc(jfr, p, bytes, site, true);
            return entry.allocation().ptr();
        } finally {
            gate.leave(gt);
        }
    }

    /** Out of memory first gives the quarantine back, then tries once more. */
    private long memAllocRetrying(long bytes) {
        try {
            return driver.memAlloc(bytes);
        } catch (GpuException e) {
            if (e.error() != CudaError.OUT_OF_MEMORY || pool.capturing() || !quarantine.mayRelieve(bytes)) {
                throw e;
            }
            quarantine.flush(true);
            return driver.memAlloc(bytes);
        }
    }

    /** Out of memory names the request and the device's free and total memory, as the seed does. */
    private RuntimeException allocFailed(GpuException e, String call, long bytes, long pad, String site) {
        RuntimeException r = fail(e, call + " " + bytes + " B");
        if (r != e || e.error() != CudaError.OUT_OF_MEMORY) {
            return r;
        }
        String where = "?".equals(site) ? CallSites.caller() : site;
        String mem;
        try {
            MemInfo mi = driver.memGetInfo();
            mem = String.format(Locale.ROOT, "device reports %.1f MiB free / %.1f GiB total",
                    mi.free() / (1024.0 * 1024.0), mi.total() / (1024.0 * 1024.0 * 1024.0));
        } catch (RuntimeException ex) {
            mem = "device free memory unknown (" + ex.getMessage() + ")";
        }
        String d = "requested " + bytes + " bytes" + (pad > 0 ? " + " + pad + " red-zone bytes" : "")
                + " at " + where + "; " + mem + "; " + ledger.count() + " live allocation(s) hold "
                + ledger.liveBytes() + " bytes";
        return new GpuException(e.error(), e.rawCode(), e.operation(), d, e);
    }

    @Override
    public void free(DevicePtr ptr) {
        int gt = gate.enter("free");
        try {
            long p = Checks.ptr(ptr, "ptr");
            if (p == 0) {
                return;
            }
            // Off the ledger before the driver frees it: an entry left behind would be freed again by a sweep.
            String freeSite = pool.owns(p) ? pool.freeSite("free") : sites.get();
            Ledger.Entry e = ledger.remove(p, freeSite);
            if (e == null) {
                throw new GpuException(CudaError.INVALID_VALUE, "free", explainNotLive(p) + "; nothing was freed");
            }
            if (pool.owns(p)) {
                pool.release(e, freeSite);
                return;
            }
            if (quarantine.on()) {
                try {
                    quarantine.admit(new Quarantine.Held(e, freeSite, -1, () -> memFreeHeld(e)), pool.quarantineWaits());
                } catch (GpuException x) {
                    throw fail(x, "free " + ptr);
                }
                return;
            }
            var jfr = Jfr.beginFree();
            try {
                driver.memFree(p);
            } catch (GpuException x) {
                if (!x.error().isTeardown()) {
                    RuntimeException r = fail(x, "free " + ptr);
                    if (r == x) {
                        // An argument error (e.g. a free during a capture): the memory is still
                        // allocated, so it goes back on the ledger.
                        ledger.add(e);
                    }
                    throw r;
                }
            }
            Jfr.free(jfr, p, e.allocation().bytes());
        } finally {
            gate.leave(gt);
        }
    }

    /** Gives a range the quarantine held back to the driver. */
    private void memFreeHeld(Ledger.Entry e) {
        var jfr = Jfr.beginFree();
        driver.memFree(e.base());
        Jfr.free(jfr, e.base(), e.allocation().bytes());
    }

    private String explainNotLive(long p) {
        ArenaTable.Chunk c = arenas.get(p);
        if (c != null) {
            return "ptr=0x" + Long.toHexString(p) + " is an arena chunk of " + c.bytes
                    + " bytes from allocArena: free it with freeArena";
        }
        return ledger.explainNotLive(p);
    }

    @Override
    public DevicePtr allocArena(long bytes) {
        int gt = gate.enter("allocArena");
        try {
            Checks.size(bytes, "bytes", "allocArena");
            long p;
            var jfr = Jfr.beginAlloc();
            try {
                p = driver.memAlloc(bytes);
            } catch (GpuException e) {
                throw allocFailed(e, "allocArena", bytes, 0, CallSites.caller());
            }
            arenas.add(p, bytes);
            Jfr.alloc(jfr, p, bytes, "arena chunk", false);
            return new DevicePtr(p);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void freeArena(DevicePtr ptr) {
        int gt = gate.enter("freeArena");
        try {
            long p = Checks.ptr(ptr, "ptr");
            if (p == 0) {
                return;
            }
            ArenaTable.Chunk c = arenas.remove(p);
            if (c == null) {
                throw new GpuException(CudaError.INVALID_VALUE, "freeArena", "ptr=" + ptr
                        + " is not a live arena chunk from allocArena (" + ledger.explainNotLive(p) + "); nothing was freed");
            }
            var jfr = Jfr.beginFree();
            try {
                driver.memFree(p);
            } catch (GpuException x) {
                if (!x.error().isTeardown()) {
                    RuntimeException r = fail(x, "freeArena " + ptr);
                    if (r == x) {
                        arenas.add(p, c.bytes);
                    }
                    throw r;
                }
            }
            Jfr.free(jfr, p, c.bytes);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void noteArenaUse(DevicePtr chunk, long usedBytes) {
        int gt = gate.enter("noteArenaUse");
        try {
            long p = Checks.ptr(chunk, "chunk");
            ArenaTable.Chunk c = arenas.get(p);
            if (c == null) {
                throw new GpuException(CudaError.INVALID_VALUE, "noteArenaUse", "chunk=" + chunk + " is not a live arena chunk");
            }
            if (usedBytes < 0 || usedBytes > c.bytes) {
                throw new IllegalArgumentException("noteArenaUse(chunk=" + chunk + ", usedBytes=" + usedBytes
                        + "): must be in [0, " + c.bytes + "], the chunk's size");
            }
            c.used.set(usedBytes);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public long chunkSlackBytes() {
        int gt = gate.enter("chunkSlackBytes");
        try {
            return arenas.slackBytes();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public long liveBytes() {
        int gt = gate.enter("liveBytes");
        try {
            return ledger.liveBytes();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public int liveAllocCount() {
        int gt = gate.enter("liveAllocCount");
        try {
            return ledger.count();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public List<Allocation> liveAllocations() {
        int gt = gate.enter("liveAllocations");
        try {
            return ledger.snapshot().stream().map(Ledger.Entry::allocation).toList();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void markLeaksReported() {
        int gt = gate.enter("markLeaksReported");
        try {
            for (Ledger.Entry e : ledger.snapshot()) {
                reportedLeaks.add(e.allocation().index());
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public String allocReport(int topN, long minMb) {
        int gt = gate.enter("allocReport");
        try {
            return ledger.report(topN, minMb) + adoptions.report();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public DevicePtr adoptDeviceMemory(long address, long bytes, String label) {
        int gt = gate.enter("adoptDeviceMemory");
        try {
            if (bytes <= 0) {
                throw new IllegalArgumentException("adoptDeviceMemory(bytes=" + bytes + "): must be >= 1");
            }
            if (label == null || label.isBlank()) {
                throw new IllegalArgumentException("adoptDeviceMemory(label=" + label + "): name what the memory is");
            }
            Ledger.Entry own = ledger.overlapping(address, bytes);
            String conflict = own != null ? "it overlaps the live allocation " + own.describe()
                    : arenas.overlaps(address, bytes) ? "it overlaps an arena chunk"
                    : pinned.coversAddress(address, 1) ? "it is page-locked host memory" : null;
            return adoptions.adopt(address, bytes, label, CallSites.caller(), conflict).ptr();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void releaseAdoption(DevicePtr ptr) {
        int gt = gate.enter("releaseAdoption");
        try {
            adoptions.release(Objects.requireNonNull(ptr, "ptr").address());
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public List<metrale.gpu.AdoptedMemory> adoptedMemory() {
        int gt = gate.enter("adoptedMemory");
        try {
            return adoptions.snapshot();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public int sweepUnreleased() {
        int gt = gate.enter("sweepUnreleased");
        try {
            int freed = 0;
            GpuException first = null;
            for (Ledger.Entry e : ledger.drain("sweepUnreleased called at " + CallSites.caller())) {
                if (pool.owns(e.base())) {
                    pool.release(e, "sweepUnreleased");
                    freed++;
                    continue;
                }
                var jfr = Jfr.beginFree();
                try {
                    driver.memFree(e.base());
                    freed++;
                    Jfr.free(jfr, e.base(), e.allocation().bytes());
                } catch (GpuException x) {
                    if (x.error().isTeardown()) {
                        freed++;
                    } else if (first == null) {
                        first = x;
                    }
                }
            }
            try {
                quarantine.flush(true);
            } catch (GpuException x) {
                if (first == null) {
                    first = x;
                }
            }
            if (first != null) {
                throw fail(first, "sweepUnreleased");
            }
            return freed;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public int scanRedzones() {
        List<RedZoneViolation> bad = findViolations("scanRedzones");
        for (RedZoneViolation v : bad) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: " + v);
        }
        return bad.size();
    }

    @Override
    public List<RedZoneViolation> findRedzoneViolations() {
        return findViolations("findRedzoneViolations");
    }

    @Override
    public List<RedZoneViolation> freedRedzoneViolations() {
        int gt = gate.enter("freedRedzoneViolations");
        try {
            settleQuarantine("freedRedzoneViolations");
            return quarantine.violations();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public long quarantinedBytes() {
        int gt = gate.enter("quarantinedBytes");
        try {
            return quarantine.bytes();
        } finally {
            gate.leave(gt);
        }
    }

    /** Scans the pads freed during a capture and evicts down to the limit, once no capture is in flight. */
    private void settleQuarantine(String call) {
        try {
            quarantine.settle(pool.quarantineWaits());
        } catch (GpuException e) {
            throw fail(e, call + " (quarantine)");
        }
    }

    private List<RedZoneViolation> findViolations(String call) {
        int gt = gate.enter(call);
        try {
            if (!redZones.on()) {
                return List.of();
            }
            try {
                return List.copyOf(redZones.find(driver, ledger.snapshot(), this::stillLive));
            } catch (GpuException e) {
                throw fail(e, call);
            }
        } finally {
            gate.leave(gt);
        }
    }

    private boolean stillLive(Ledger.Entry e) {
        for (Ledger.Entry x : ledger.snapshot()) {
            if (x.allocation().equals(e.allocation())) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void poisonRedzones(long lo, long hi) {
        int gt = gate.enter("poisonRedzones");
        try {
            if (!redZones.on()) {
                return;
            }
            try {
                redZones.poison(driver, ledger.snapshot(), lo, hi, this::stillLive, pool.capturing());
            } catch (GpuException e) {
                throw fail(e, "poisonRedzones");
            }
        } finally {
            gate.leave(gt);
        }
    }

    // ---- copies -----------------------------------------------------------------------------------

    @Override
    public void copyH2D(MemorySegment src, DevicePtr dst) {
        int gt = gate.enter("copyH2D");
        try {
            Checks.alive(src, "src");
            long d = Checks.ptr(dst, "dst");
            long n = src.byteSize();
            checkRange(d, n, "copyH2D", "dst");
            var jfr = Jfr.beginCopy();
            try {
                driver.memcpyHtoD(d, src, n);
            } catch (GpuException e) {
                throw fail(e, "copyH2D " + n + " B to 0x" + Long.toHexString(d));
            }
            counters.h2dCopy(n);
            Jfr.copy(jfr, "H2D", n, false, 0);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyD2H(DevicePtr src, MemorySegment dst) {
        int gt = gate.enter("copyD2H");
        try {
            long s = Checks.ptr(src, "src");
            Checks.writable(dst, "dst");
            long n = dst.byteSize();
            checkRange(s, n, "copyD2H", "src");
            var jfr = Jfr.beginCopy();
            try {
                driver.memcpyDtoH(dst, s, n);
            } catch (GpuException e) {
                throw fail(e, "copyD2H " + n + " B from 0x" + Long.toHexString(s));
            }
            counters.d2hCopy(n);
            Jfr.copy(jfr, "D2H", n, false, 0);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyD2HOnStream(DevicePtr src, MemorySegment dst, Stream stream) {
        int gt = gate.enter("copyD2HOnStream");
        try {
            long s = Checks.ptr(src, "src");
            Checks.writable(dst, "dst");
            long st = liveStream(stream, "copyD2HOnStream");
            long n = dst.byteSize();
            checkRange(s, n, "copyD2HOnStream", "src");
            var jfr = Jfr.beginCopy();
            try {
                if (dst.isNative()) {
                    driver.memcpyDtoHAsync(dst, s, n, st);
                    driver.streamSynchronize(st);
                } else {
                    // The async copy needs native memory that stays put; stage through a temporary.
                    try (Arena a = Arena.ofConfined()) {
                        MemorySegment tmp = a.allocate(Math.max(n, 1), 16).asSlice(0, n);
                        driver.memcpyDtoHAsync(tmp, s, n, st);
                        driver.streamSynchronize(st);
                        MemorySegment.copy(tmp, 0, dst, 0, n);
                    }
                }
            } catch (GpuException e) {
                throw fail(e, "copyD2HOnStream " + n + " B from " + src + " on " + stream);
            }
            counters.d2hCopy(n);
            Jfr.copy(jfr, "D2H", n, false, st);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyD2HAsync(DevicePtr src, MemorySegment dst, Stream stream) {
        int gt = gate.enter("copyD2HAsync");
        try {
            long s = Checks.ptr(src, "src");
            Checks.nativeSeg(dst, "dst", "copyD2HAsync");
            if (dst.isReadOnly()) {
                throw new IllegalArgumentException("copyD2HAsync: dst: the segment is read-only");
            }
            long st = liveStream(stream, "copyD2HAsync");
            long n = dst.byteSize();
            checkRange(s, n, "copyD2HAsync", "src");
            var jfr = Jfr.beginCopy();
            try {
                driver.memcpyDtoHAsync(dst, s, n, st);
            } catch (GpuException e) {
                throw fail(e, "copyD2HAsync " + n + " B from " + src + " on " + stream);
            }
            counters.d2hCopy(n);
            Jfr.copy(jfr, "D2H", n, true, st);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyH2DAsync(MemorySegment src, DevicePtr dst, Stream stream) {
        int gt = gate.enter("copyH2DAsync");
        try {
            long st = enqueueH2D("copyH2DAsync", src, dst, stream);
            // During capture the copy is a graph node that reads the source at every replay, so a
            // wait would neither help nor be allowed (it would invalidate the capture): it is
            // captured as the retained form is, and the source must outlive the graph.
            if (pinned.contains(src) && !capturingRaw(st)) {
                // A page-locked source is read when the copy executes, and the caller may drop it on
                // return: wait for the stream so the copy has read it.
                if (pinnedSourceWarned.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "metrale-gpu: copyH2DAsync from page-locked memory at "
                            + CallSites.caller() + " waits for its stream so the caller may reuse the source; "
                            + "use copyH2DAsyncRetained and keep the source alive until the next sync to skip the wait "
                            + "(warned once per runtime)");
                }
                try {
                    driver.streamSynchronize(st);
                } catch (GpuException e) {
                    throw fail(e, "copyH2DAsync (pinned-source sync of " + stream + ")");
                }
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyH2DAsyncRetained(MemorySegment src, DevicePtr dst, Stream stream) {
        int gt = gate.enter("copyH2DAsyncRetained");
        try {
            enqueueH2D("copyH2DAsyncRetained", src, dst, stream);
        } finally {
            gate.leave(gt);
        }
    }

    /** Checks and enqueues an async host-to-device copy for {@code op}, inside the gate. {@return the stream's handle} */
    private long enqueueH2D(String op, MemorySegment src, DevicePtr dst, Stream stream) {
        Checks.nativeSeg(src, "src", op);
        long d = Checks.ptr(dst, "dst");
        long st = liveStream(stream, op);
        long n = src.byteSize();
        checkRange(d, n, op, "dst");
        var jfr = Jfr.beginCopy();
        try {
            driver.memcpyHtoDAsync(d, src, n, st);
        } catch (GpuException e) {
            throw fail(e, op + " " + n + " B to " + dst + " on " + stream);
        }
        counters.h2dCopy(n);
        Jfr.copy(jfr, "H2D", n, true, st);
        return st;
    }

    @Override
    public void copyD2D(DevicePtr src, DevicePtr dst, long bytes) {
        int gt = gate.enter("copyD2D");
        try {
            long s = Checks.ptr(src, "src");
            long d = Checks.ptr(dst, "dst");
            Checks.size(bytes, "bytes", "copyD2D");
            checkRange(s, bytes, "copyD2D", "src");
            checkRange(d, bytes, "copyD2D", "dst");
            var jfr = Jfr.beginCopy();
            try {
                driver.memcpyDtoD(d, s, bytes);
            } catch (GpuException e) {
                throw fail(e, "copyD2D " + bytes + " B " + src + " -> " + dst);
            }
            if (tracing()) {
                traceOp(TraceEntry.d2d(s, d, bytes), null);
            }
            counters.d2dCopy(bytes);
            Jfr.copy(jfr, "D2D", bytes, false, 0);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyD2DAsync(DevicePtr src, DevicePtr dst, long bytes, Stream stream) {
        int gt = gate.enter("copyD2DAsync");
        try {
            long s = Checks.ptr(src, "src");
            long d = Checks.ptr(dst, "dst");
            Checks.size(bytes, "bytes", "copyD2DAsync");
            checkRange(s, bytes, "copyD2DAsync", "src");
            checkRange(d, bytes, "copyD2DAsync", "dst");
            long st = liveStream(stream, "copyD2DAsync");
            var jfr = Jfr.beginCopy();
            try {
                driver.memcpyDtoDAsync(d, s, bytes, st);
            } catch (GpuException e) {
                throw fail(e, "copyD2DAsync " + bytes + " B " + src + " -> " + dst + " on " + stream);
            }
            if (tracing()) {
                traceOp(TraceEntry.d2d(s, d, bytes), null);
            }
            counters.d2dCopy(bytes);
            Jfr.copy(jfr, "D2D", bytes, true, st);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyD2D2DAsync(DevicePtr src, long srcPitch, DevicePtr dst, long dstPitch, long widthBytes, long height,
                               Stream stream) {
        int gt = gate.enter("copyD2D2DAsync");
        try {
            long s = Checks.ptr(src, "src");
            long d = Checks.ptr(dst, "dst");
            Checks.size(srcPitch, "srcPitch", "copyD2D2DAsync");
            Checks.size(dstPitch, "dstPitch", "copyD2D2DAsync");
            Checks.size(widthBytes, "widthBytes", "copyD2D2DAsync");
            Checks.size(height, "height", "copyD2D2DAsync");
            long st = liveStream(stream, "copyD2D2DAsync");
            long n;
            try {
                n = Math.multiplyExact(widthBytes, height);
            } catch (ArithmeticException ex) {
                throw new IllegalArgumentException("copyD2D2DAsync(widthBytes=" + widthBytes + ", height=" + height
                        + "): the byte count overflows");
            }
            if (widthBytes > 0 && height > 0 && srcPitch >= widthBytes && dstPitch >= widthBytes) {
                // A violated pitch rule is the driver's INVALID_VALUE; otherwise row h-1 ends the span.
                checkRange(s, span2D(srcPitch, widthBytes, height), "copyD2D2DAsync", "src");
                checkRange(d, span2D(dstPitch, widthBytes, height), "copyD2D2DAsync", "dst");
            }
            var jfr = Jfr.beginCopy();
            try {
                driver.memcpy2DAsync(d, dstPitch, s, srcPitch, widthBytes, height, st);
            } catch (GpuException e) {
                throw fail(e, "copyD2D2DAsync " + widthBytes + "x" + height + " " + src + " -> " + dst + " on " + stream);
            }
            counters.d2dCopy(n);
            Jfr.copy(jfr, "D2D", n, true, st);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void memset(DevicePtr ptr, int value, long bytes) {
        int gt = gate.enter("memset");
        try {
            long p = Checks.ptr(ptr, "ptr");
            Checks.byteValue(value, "memset");
            Checks.size(bytes, "bytes", "memset");
            checkRange(p, bytes, "memset", "ptr");
            try {
                driver.memsetD8(p, value, bytes);
            } catch (GpuException e) {
                throw fail(e, "memset " + bytes + " B at " + ptr);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void memsetAsync(DevicePtr ptr, int value, long bytes, Stream stream) {
        int gt = gate.enter("memsetAsync");
        try {
            long p = Checks.ptr(ptr, "ptr");
            Checks.byteValue(value, "memsetAsync");
            Checks.size(bytes, "bytes", "memsetAsync");
            checkRange(p, bytes, "memsetAsync", "ptr");
            long st = liveStream(stream, "memsetAsync");
            try {
                driver.memsetD8Async(p, value, bytes, st);
            } catch (GpuException e) {
                throw fail(e, "memsetAsync " + bytes + " B at " + ptr + " on " + stream);
            }
            if (tracing()) {
                traceOp(TraceEntry.memset(p, value, bytes), null);
            }
        } finally {
            gate.leave(gt);
        }
    }

    // ---- modules and kernels ---------------------------------------------------------------------

    @Override
    public void loadModule(String name, byte[] image) {
        // A releaser: replacing a module waits for the launches that may still hold its functions.
        int gt = gate.enterReleaser("loadModule");
        try {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(image, "image");
            String bad = ModuleImages.isElf(image) ? ModuleImages.elfProblem(image)
                    : ModuleImages.isFatbin(image) ? ModuleImages.fatbinProblem(image) : null;
            if (bad != null) {
                // Refused before the driver, which reads past a cut image (a SIGSEGV on driver 580).
                throw new GpuException(CudaError.INVALID_IMAGE, "loadModule", "module=" + name + ", " + image.length
                        + " bytes: " + bad + "; nothing was loaded");
            }
            // One load at a time, so replacing a name unloads exactly the module it replaced.
            synchronized (moduleLoadLock) {
                long h;
                try {
                    h = driver.moduleLoadData(name, image);
                } catch (GpuException e) {
                    throw fail(e, "loadModule " + name);
                }
                Modules.Module old = modules.put(name, h, functions);
                if (old != null) {
                    // Its handles are out of the table; a call that read one before has entered
                    // the gate before this point, so the grace period waits for it.
                    gate.awaitGrace();
                    try {
                        driver.moduleUnload(old.handle);
                    } catch (GpuException e) {
                        RuntimeException r = fail(e, "loadModule " + name + " (unloading the module it replaces)");
                        if (r != e) {
                            throw r;
                        }
                        LOG.log(System.Logger.Level.WARNING, "metrale-gpu: loadModule " + name
                                + ": unloading the replaced module failed: " + e.getMessage());
                    }
                }
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public boolean hasModule(String name) {
        int gt = gate.enter("hasModule");
        try {
            Objects.requireNonNull(name, "name");
            return modules.get(name) != null;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public KernelHandle kernel(String module, String func) {
        int gt = gate.enter("kernel");
        try {
            Objects.requireNonNull(module, "module");
            Objects.requireNonNull(func, "func");
            String site = CallSites.caller();
            Modules.Module m = modules.get(module);
            if (m == null) {
                telemetry.audit().record(module, func, false, site);
                throw new GpuException(CudaError.NOT_FOUND, "kernel", module + "::" + func + " looked up at " + site
                        + ": no module named '" + module + "' is loaded (loaded: " + modules.names() + ")");
            }
            long f;
            try {
                f = driver.moduleGetFunction(m.handle, func);
            } catch (GpuException e) {
                telemetry.audit().record(module, func, false, site);
                RuntimeException r = fail(e, "kernel " + module + "::" + func);
                if (r == e) {
                    r = new GpuException(e.error(), e.rawCode(), e.operation(), module + "::" + func + " looked up at "
                            + site + (e.details().isEmpty() ? "" : "; " + e.details()), e);
                }
                throw r;
            }
            long id = modules.resolved(m, func, f, functions);
            if (id == 0) {
                telemetry.audit().record(module, func, false, site);
                throw new GpuException(CudaError.INVALID_HANDLE, "kernel", module + "::" + func + " looked up at "
                        + site + ": the module was replaced by another thread during the lookup; look it up again");
            }
            telemetry.audit().record(module, func, true, site);
            trace.nameKernel(id, module, func);
            KernelHandle h = new KernelHandle(id);
            opCache.publishKernel(module, func, h);
            return h;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public KernelRegistry kernelRegistry() {
        int gt = gate.enter("kernelRegistry");
        try {
            return modules.registry();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public OpCache opCache() {
        int gt = gate.enter("opCache");
        try {
            return opCache;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public byte[] compileCuda(String name, String source, String... compilerOptions) {
        int gt = gate.enter("compileCuda");
        try {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(compilerOptions, "options");
            for (String o : compilerOptions) {
                Objects.requireNonNull(o, "options element");
            }
            try {
                return driver.compileToPtx(name, source, compilerOptions.clone());
            } catch (GpuException e) {
                throw fail(e, "compileCuda " + name);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void setMaxDynamicSharedMemory(KernelHandle kernel, int bytes) {
        int gt = gate.enter("setMaxDynamicSharedMemory");
        try {
            long f = liveFunction(kernel, "setMaxDynamicSharedMemory");
            Checks.size(bytes, "bytes", "setMaxDynamicSharedMemory");
            try {
                driver.funcSetMaxDynamicSharedMemory(f, bytes);
            } catch (GpuException e) {
                throw fail(e, "setMaxDynamicSharedMemory " + trace.nameOf(kernel.value()) + " " + bytes + " B");
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void launch(KernelHandle kernel, LaunchConfig config, Stream stream, KernelArgs args) {
        int gt = gate.enter("launch");
        try {
            long raw = liveFunction(kernel, "launch");
            long func = kernel.value();
            Objects.requireNonNull(config, "config");
            long st = liveStream(stream, "launch");
            if (Objects.requireNonNull(args, "args").isClosed()) {
                throw new IllegalStateException("launch: KernelArgs is closed");
            }
            if (checkPointers) {
                checkPointerArgs(func, args);
            }
            long t0 = timingOn ? timing.begin() : 0;
            var jfr = Jfr.beginLaunch();
            try {
                driver.launchKernel(raw, config, st, args);
            } catch (GpuException e) {
                throw launchFailed(e, func, "");
            }
            if (tracing()) {
                recordLaunch(func, config, args);
            }
            counters.launch();
            if (debugSync || t0 != 0) {
                syncAfterLaunch(func, st, t0);
            }
            Jfr.launch(jfr, trace, func, config, stream.handle());
        } finally {
            gate.leave(gt);
        }
    }

    /** The {@code checkPointers} mode: every pointer argument must lie in live memory of this runtime (null passes). */
    private void checkPointerArgs(long func, KernelArgs args) {
        for (int i = 0, n = args.count(); i < n; i++) {
            if (args.kind(i) != KernelArgs.Kind.PTR) {
                continue;
            }
            long p = args.getLong(i);
            if (p != 0 && !inLiveMemory(p, 1)) {
                throw new GpuException(CudaError.INVALID_VALUE, "launch", trace.nameOf(func) + ": argument " + i
                        + " (pointer 0x" + Long.toHexString(p) + ") is not in live memory: " + explainRange(p, 1)
                        + "; nothing was launched (checkPointers is on)");
            }
        }
    }

    private void recordLaunch(long func, LaunchConfig c, KernelArgs args) {
        traceOp(TraceEntry.kernel(func, c.grid().x(), c.grid().y(), c.grid().z(),
                c.block().x(), c.block().y(), c.block().z(), c.sharedMemBytes(), args.words(), args.argKinds()), args);
    }

    /**
     * Whether an op must be traced: the launch trace is on, or some thread runs a captured step's
     * traced run. A plain read of the step count is enough: a step's own thread sees its own
     * increment, and another thread that sees a stale count finds no recorder of its own.
     */
    private boolean tracing() {
        return trace.on() || stepTracers.getPlain() != 0;
    }

    /** Hands an op to the launch trace and to the calling thread's step recorder, if any. */
    private void traceOp(TraceEntry e, KernelArgs args) {
        trace.record(e);
        if (stepTracers.getPlain() != 0) {
            StepRecorder r = stepRecorder.get();
            if (r != null) {
                r.add(e, args);
            }
        }
    }

    /**
     * Makes the calling thread's ops go to {@code r} until {@link #endStepTrace}.
     *
     * @return the recorder it replaces (a step run inside another step's region), for {@link #endStepTrace}
     */
    StepRecorder beginStepTrace(StepRecorder r) {
        StepRecorder outer = stepRecorder.get();
        stepRecorder.set(r);
        stepTracers.incrementAndGet();
        return outer;
    }

    /** Ends the calling thread's {@link #beginStepTrace}, giving the thread back {@code outer}. */
    void endStepTrace(StepRecorder outer) {
        if (outer == null) {
            stepRecorder.remove();
        } else {
            stepRecorder.set(outer);
        }
        stepTracers.decrementAndGet();
    }

    /** The debug-sync and timing wait after a launch; skipped on a capturing stream, which a sync would invalidate. */
    private void syncAfterLaunch(long func, long st, long t0) {
        try {
            if (!capturingRaw(st)) {
                driver.streamSynchronize(st);
            }
        } catch (GpuException e) {
            throw launchFailed(e, func, debugSync ? " (debug sync)" : " (timing sync)");
        } finally {
            timing.end(func, t0);
        }
    }

    // ---- streams and events ------------------------------------------------------------------------

    @Override
    public Stream defaultStream() {
        int gt = gate.enter("defaultStream");
        try {
            return Stream.DEFAULT;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public Stream createStream() {
        return createStream(false);
    }

    @Override
    public Stream createStream(boolean nonBlocking) {
        int gt = gate.enter("createStream");
        try {
            long s;
            try {
                s = driver.streamCreate(nonBlocking ? 1 : 0);
            } catch (GpuException e) {
                throw fail(e, "createStream");
            }
            return resources.stream(new Stream(streams.add(s, null)));
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void destroyStream(Stream stream) {
        int gt = gate.enterReleaser("destroyStream");
        try {
            long id = Objects.requireNonNull(stream, "stream").handle();
            HandleTable.Slot slot = streams.remove(id);
            if (slot == null) {
                throw new GpuException(CudaError.INVALID_HANDLE, "destroyStream", stream
                        + (id == 0 || id == 1 || id == 2 ? " is a default stream, which cannot be destroyed"
                        : " was not created by this runtime or is already destroyed"));
            }
            resources.gone(LiveResource.Kind.STREAM, id);
            // Calls that found the stream live before it left the table finish first.
            gate.awaitGrace();
            pool.streamDestroyed(slot.raw());
            try {
                driver.streamDestroy(slot.raw());
            } catch (GpuException e) {
                if (!e.error().isTeardown()) {
                    throw fail(e, "destroyStream " + stream);
                }
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void synchronize(Stream stream) {
        int gt = gate.enter("synchronize");
        try {
            long s = liveStream(stream, "synchronize");
            counters.streamSync();
            var jfr = Jfr.beginSync();
            try {
                driver.streamSynchronize(s);
            } catch (GpuException e) {
                throw fail(e, "synchronize " + stream);
            }
            pool.streamSynchronized(s);
            settleQuarantine("synchronize");
            Jfr.sync(jfr, "stream", s);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void synchronize() {
        int gt = gate.enter("synchronize");
        try {
            counters.streamSync();
            var jfr = Jfr.beginSync();
            try {
                driver.ctxSynchronize();
            } catch (GpuException e) {
                throw fail(e, "synchronize (context)");
            }
            pool.deviceSynchronized();
            settleQuarantine("synchronize");
            Jfr.sync(jfr, "context", 0);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public boolean streamQuery(Stream stream) {
        int gt = gate.enter("streamQuery");
        try {
            long s = liveStream(stream, "streamQuery");
            try {
                return driver.streamQuery(s);
            } catch (GpuException e) {
                throw fail(e, "streamQuery " + stream);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public Event createEvent() {
        return createEvent(0);
    }

    @Override
    public Event createEvent(int flags) {
        int gt = gate.enter("createEvent");
        try {
            long ev;
            try {
                ev = driver.eventCreate(flags);
            } catch (GpuException e) {
                throw fail(e, "createEvent flags=" + flags);
            }
            return resources.event(new Event(events.add(ev, null)));
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void recordEvent(Event event, Stream stream) {
        int gt = gate.enter("recordEvent");
        try {
            long ev = liveEvent(event, "event", "recordEvent");
            long s = liveStream(stream, "recordEvent");
            try {
                driver.eventRecord(ev, s);
            } catch (GpuException e) {
                throw fail(e, "recordEvent " + event + " on " + stream);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void streamWaitEvent(Stream stream, Event event) {
        int gt = gate.enter("streamWaitEvent");
        try {
            long s = liveStream(stream, "streamWaitEvent");
            long ev = liveEvent(event, "event", "streamWaitEvent");
            try {
                driver.streamWaitEvent(s, ev, 0);
            } catch (GpuException e) {
                throw fail(e, "streamWaitEvent " + stream + " on " + event);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void streamWaitEvent(Stream stream, Gpu eventGpu, Event event) {
        GpuRuntime other = peerRuntime(eventGpu, "streamWaitEvent", "eventGpu", true);
        if (other == this) {
            streamWaitEvent(stream, event);
            return;
        }
        int gt = gate.enter("streamWaitEvent");
        try {
            int ogt = other.gate.enter("streamWaitEvent");
            try {
                long s = liveStream(stream, "streamWaitEvent");
                long ev = other.liveEvent(event, "event", "streamWaitEvent");
                try {
                    driver.streamWaitPeerEvent(s, other.driver, ev);
                } catch (GpuException e) {
                    throw fail(e, "streamWaitEvent " + stream + " on " + event + " of device " + other.driver.ordinal());
                }
            } finally {
                other.gate.leave(ogt);
            }
        } finally {
            gate.leave(gt);
        }
    }

    // ---- several devices -------------------------------------------------------------------------------

    @Override
    public int deviceOrdinal() {
        int gt = gate.enter("deviceOrdinal");
        try {
            return driver.ordinal();
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * {@return {@code peer} as a runtime of this backend} Another implementation of {@link Gpu}, a
     * closed runtime or one of another backend is refused before any driver sees it.
     */
    private GpuRuntime peerRuntime(Gpu peer, String op, String param, boolean selfAllowed) {
        Objects.requireNonNull(peer, param);
        if (!(peer instanceof GpuRuntime other)) {
            throw new IllegalArgumentException(op + ": " + param + " is a " + peer.getClass().getName()
                    + ", not a runtime from Gpu.open");
        }
        if (other.isClosed()) {
            throw new IllegalArgumentException(op + ": " + param + " is closed");
        }
        if (!other.driver.name().equals(driver.name())) {
            throw new IllegalArgumentException(op + ": " + param + " is a " + other.driver.name()
                    + " runtime and this one is " + driver.name() + "; devices of two backends cannot share memory");
        }
        if (!selfAllowed && other.driver.ordinal() == driver.ordinal()) {
            throw new IllegalArgumentException(op + ": " + param + " is on device " + driver.ordinal()
                    + ", this runtime's own device; peer access is between two devices");
        }
        return other;
    }

    @Override
    public boolean canAccessPeer(Gpu peer) {
        GpuRuntime other = peerRuntime(peer, "canAccessPeer", "peer", true);
        int gt = gate.enter("canAccessPeer");
        try {
            int ogt = other.gate.enter("canAccessPeer");
            try {
                return other.driver.ordinal() != driver.ordinal() && driver.canAccessPeer(other.driver);
            } catch (GpuException e) {
                throw fail(e, "canAccessPeer device " + other.driver.ordinal());
            } finally {
                other.gate.leave(ogt);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void enablePeerAccess(Gpu peer) {
        GpuRuntime other = peerRuntime(peer, "enablePeerAccess", "peer", false);
        int gt = gate.enter("enablePeerAccess");
        try {
            int ogt = other.gate.enter("enablePeerAccess");
            try {
                driver.enablePeerAccess(other.driver);
            } catch (GpuException e) {
                // CUDA reports a repeated enable as an error; for this API it is a no-op.
                if (e.error() != CudaError.PEER_ACCESS_ALREADY_ENABLED) {
                    throw fail(e, "enablePeerAccess device " + driver.ordinal() + " -> " + other.driver.ordinal());
                }
            } finally {
                other.gate.leave(ogt);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void copyToPeer(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes) {
        peerCopy(src, dstGpu, dst, bytes, null, "copyToPeer");
    }

    @Override
    public void copyToPeerAsync(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes, Stream stream) {
        peerCopy(src, dstGpu, dst, bytes, Objects.requireNonNull(stream, "stream"), "copyToPeerAsync");
    }

    /** A peer copy: both ranges checked against their own runtime's ledger, both gates held. */
    private void peerCopy(DevicePtr src, Gpu dstGpu, DevicePtr dst, long bytes, Stream stream, String op) {
        GpuRuntime other = peerRuntime(dstGpu, op, "dstGpu", true);
        int gt = gate.enter(op);
        try {
            int ogt = other == this ? 0 : other.gate.enter(op);
            try {
                long s = Checks.ptr(src, "src");
                long d = Checks.ptr(dst, "dst");
                Checks.size(bytes, "bytes", op);
                checkRange(s, bytes, op, "src");
                other.checkRange(d, bytes, op, "dst (on device " + other.driver.ordinal() + ")");
                long st = stream == null ? 0 : liveStream(stream, op);
                if (bytes == 0) {
                    return;
                }
                var jfr = Jfr.beginCopy();
                try {
                    if (stream == null) {
                        driver.memcpyPeer(d, other.driver, s, bytes);
                    } else {
                        driver.memcpyPeerAsync(d, other.driver, s, bytes, st);
                    }
                } catch (GpuException e) {
                    throw fail(e, op + " " + bytes + " B " + src + " -> device " + other.driver.ordinal() + " " + dst
                            + (stream == null ? "" : " on " + stream));
                }
                if (tracing()) {
                    traceOp(TraceEntry.d2d(s, d, bytes), null);
                }
                counters.d2dCopy(bytes);
                Jfr.copy(jfr, "P2P", bytes, stream != null, st);
            } finally {
                if (other != this) {
                    other.gate.leave(ogt);
                }
            }
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * The friend-module view of this runtime (see {@link metrale.gpu.internal.access.RuntimeAccess}): runs
     * {@code body} with the driver's handle of {@code stream}, inside this runtime's gate, with the
     * context current on the calling thread, after checking each device range against the ledger.
     *
     * @param stream a stream of this runtime
     * @param call   the caller's operation, for errors
     * @param ranges pairs of (address, bytes) that must lie in live memory of this runtime
     * @param body   what to run with the driver stream
     */
    public void onDriverStream(Stream stream, String call, long[] ranges, java.util.function.LongConsumer body) {
        int gt = gate.enter(call);
        try {
            for (int i = 0; i + 1 < ranges.length; i += 2) {
                checkRange(ranges[i], ranges[i + 1], call, "buffer " + (i / 2));
            }
            long st = liveStream(stream, call);
            driver.bindToThread();
            body.accept(st);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void eventSynchronize(Event event) {
        int gt = gate.enter("eventSynchronize");
        try {
            long ev = liveEvent(event, "event", "eventSynchronize");
            counters.streamSync();
            var jfr = Jfr.beginSync();
            try {
                driver.eventSynchronize(ev);
            } catch (GpuException e) {
                throw fail(e, "eventSynchronize " + event);
            }
            Jfr.sync(jfr, "event", ev);
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public boolean eventQuery(Event event) {
        int gt = gate.enter("eventQuery");
        try {
            long ev = liveEvent(event, "event", "eventQuery");
            try {
                return driver.eventQuery(ev);
            } catch (GpuException e) {
                throw fail(e, "eventQuery " + event);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public float elapsedMillis(Event start, Event end) {
        int gt = gate.enter("elapsedMillis");
        try {
            long a = liveEvent(start, "start", "elapsedMillis");
            long b = liveEvent(end, "end", "elapsedMillis");
            try {
                return driver.eventElapsedTime(a, b);
            } catch (GpuException e) {
                throw fail(e, "elapsedMillis " + start + " -> " + end);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void destroyEvent(Event event) {
        int gt = gate.enterReleaser("destroyEvent");
        try {
            HandleTable.Slot slot = events.remove(Objects.requireNonNull(event, "event").handle());
            if (slot == null) {
                throw new GpuException(CudaError.INVALID_HANDLE, "destroyEvent",
                        event + " was not created by this runtime or is already destroyed");
            }
            resources.gone(LiveResource.Kind.EVENT, event.handle());
            gate.awaitGrace();
            try {
                driver.eventDestroy(slot.raw());
            } catch (GpuException e) {
                if (!e.error().isTeardown()) {
                    throw fail(e, "destroyEvent " + event);
                }
            }
        } finally {
            gate.leave(gt);
        }
    }

    // ---- capture and graphs ----------------------------------------------------------------------

    @Override
    public void beginCapture(Stream stream) {
        beginCapture(stream, CaptureMode.GLOBAL);
    }

    @Override
    public void beginCapture(Stream stream, CaptureMode mode) {
        int gt = gate.enter("beginCapture");
        try {
            long s = liveStream(stream, "beginCapture");
            Objects.requireNonNull(mode, "mode");
            try {
                driver.streamBeginCapture(s, mode.code());
            } catch (GpuException e) {
                throw fail(e, "beginCapture " + stream + " " + mode);
            }
            pool.captureBegan(s, stream.toString(), mode.code());
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public GraphHandle endCapture(Stream stream) {
        int gt = gate.enter("endCapture");
        try {
            long s = liveStream(stream, "endCapture");
            long graph;
            try {
                graph = driver.streamEndCapture(s);
            } catch (GpuException e) {
                // A failed end may still end the capture (901, 904, or 908 from another thread).
                if (e.error() == CudaError.STREAM_CAPTURE_INVALIDATED || e.error() == CudaError.STREAM_CAPTURE_UNJOINED
                        || !capturingRaw(s)) {
                    pool.captureEnded(s);
                }
                throw fail(e, "endCapture " + stream);
            }
            pool.captureEnded(s);
            long exec;
            try {
                exec = driver.graphInstantiate(graph);
            } catch (GpuException e) {
                RuntimeException r = fail(e, "endCapture " + stream + " (instantiate)");
                try {
                    driver.graphDestroy(graph);
                } catch (RuntimeException suppressed) {
                    r.addSuppressed(suppressed);
                }
                throw r;
            }
            return resources.graph(new GraphHandle(graphs.add(exec, graph)));
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void abortCaptureIfActive(Stream stream) {
        int gt = gate.enter("abortCaptureIfActive");
        try {
            long s = liveStream(stream, "abortCaptureIfActive");
            if (!isCapturing(s, "abortCaptureIfActive")) {
                return;
            }
            pool.captureEnded(s);
            try {
                long graph = driver.streamEndCapture(s);
                if (graph != 0) {
                    driver.graphDestroy(graph);
                }
            } catch (GpuException e) {
                // Capture errors are what this call exists to swallow; a sticky one is still latched.
                fail(e, "abortCaptureIfActive " + stream);
                LOG.log(System.Logger.Level.DEBUG, "metrale-gpu: abortCaptureIfActive " + stream + ": " + e.getMessage());
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public boolean streamIsCapturing(Stream stream) {
        int gt = gate.enter("streamIsCapturing");
        try {
            long s = liveStream(stream, "streamIsCapturing");
            return isCapturing(s, "streamIsCapturing");
        } finally {
            gate.leave(gt);
        }
    }

    /** False under a driver without the query; a failed query counts as capturing (its fault is still latched). */
    private boolean isCapturing(long s, String call) {
        if (!driver.supportsCaptureQuery()) {
            return false;
        }
        try {
            return driver.streamIsCapturing(s) != 0;
        } catch (GpuException e) {
            fail(e, call + " " + new Stream(s));
            return true;
        }
    }

    /** The capture query for the runtime's own waits: throws nothing, and a failed query counts as capturing. */
    private boolean capturingRaw(long s) {
        if (!driver.supportsCaptureQuery()) {
            return false;
        }
        try {
            return driver.streamIsCapturing(s) != 0;
        } catch (GpuException e) {
            return true;
        }
    }

    @Override
    public CaptureStatus captureStatus(Stream stream) {
        int gt = gate.enter("captureStatus");
        try {
            long s = liveStream(stream, "captureStatus");
            if (!driver.supportsCaptureQuery()) {
                throw new GpuException(CudaError.NOT_SUPPORTED, "captureStatus",
                        "the " + driver.name() + " driver has no cuStreamIsCapturing");
            }
            try {
                return CaptureStatus.of(driver.streamIsCapturing(s));
            } catch (GpuException e) {
                throw fail(e, "captureStatus " + stream);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void launchGraph(GraphHandle graph, Stream stream) {
        int gt = gate.enter("launchGraph");
        try {
            long id = Objects.requireNonNull(graph, "graph").handle();
            long s = liveStream(stream, "launchGraph");
            HandleTable.Slot g = graphs.get(id);
            if (g == null) {
                throw new GpuException(CudaError.INVALID_HANDLE, "launchGraph",
                        graph + " was not made by this runtime's endCapture or is already destroyed");
            }
            var jfr = Jfr.beginGraphLaunch();
            try {
                driver.graphLaunch(g.raw(), s);
            } catch (GpuException e) {
                throw fail(e, "launchGraph " + graph + " on " + stream);
            }
            Jfr.graphLaunch(jfr, id, stream.handle());
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void destroyGraph(GraphHandle graph) {
        int gt = gate.enterReleaser("destroyGraph");
        try {
            long id = Objects.requireNonNull(graph, "graph").handle();
            HandleTable.Slot g = graphs.remove(id);
            if (g == null) {
                throw new GpuException(CudaError.INVALID_HANDLE, "destroyGraph",
                        graph + " was not made by this runtime's endCapture or is already destroyed");
            }
            resources.gone(LiveResource.Kind.GRAPH, id);
            // A launch that found the graph live finishes its cuGraphLaunch first.
            gate.awaitGrace();
            GpuException first = null;
            try {
                driver.graphExecDestroy(g.raw());
            } catch (GpuException e) {
                first = e.error().isTeardown() ? null : e;
            }
            try {
                driver.graphDestroy((Long) g.extra());
            } catch (GpuException e) {
                if (first == null && !e.error().isTeardown()) {
                    first = e;
                }
            }
            if (first != null) {
                throw fail(first, "destroyGraph " + graph);
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public CapturedStep capturedStep(String name, CapturedStep.Region region, StepOptions options) {
        int gt = gate.enter("capturedStep");
        try {
            return resources.step(new CapturedStepImpl(this, Objects.requireNonNull(name, "name"),
                    Objects.requireNonNull(region, "region"), Objects.requireNonNull(options, "options")), name);
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}: the nodes of a graph made by {@link #endCapture}, their
     * {@code CUgraphNodeType}s and edges, as {@code {nodes, types, from, to}}.
     *
     * @throws GpuException {@code NOT_SUPPORTED} where the driver has no node access
     */
    long[][] graphNodes(GraphHandle graph) {
        String op = "graphNodes";
        int gt = gate.enter(op);
        try {
            HandleTable.Slot g = liveGraph(graph, op);
            try {
                long[][] edges = driver.graphGetEdges((Long) g.extra());
                long[] nodes = driver.graphGetNodes((Long) g.extra());
                long[] types = new long[nodes.length];
                for (int i = 0; i < nodes.length; i++) {
                    types[i] = driver.graphNodeType(nodes[i]);
                }
                return new long[][] {nodes, types, edges[0], edges[1]};
            } catch (GpuException e) {
                throw fail(e, op + " " + graph);
            }
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}: sets a kernel node of an instantiated graph in place
     * ({@code cuGraphExecKernelNodeSetParams}), for replays launched after this call.
     */
    void setKernelNode(GraphHandle graph, long node, long kernelId, LaunchConfig config, KernelArgs args) {
        String op = "setKernelNode";
        int gt = gate.enter(op);
        try {
            HandleTable.Slot g = liveGraph(graph, op);
            long raw = liveFunction(new KernelHandle(kernelId), op);
            if (checkPointers) {
                checkPointerArgs(kernelId, args);
            }
            try {
                driver.graphExecKernelNodeSetParams(g.raw(), node, raw, config, args);
            } catch (GpuException e) {
                throw fail(e, op + " " + trace.nameOf(kernelId) + " in " + graph);
            }
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}'s replay check: the live allocations of the ledger that hold any
     * of {@code addrs}, as {@code {base, bytes}} pairs, distinct, in address order. Sets
     * {@code unsaveable[0]} when an address lies in an arena chunk or a mapped page-locked range
     * instead, memory the check does not save.
     */
    long[][] stepBuffers(long[] addrs, boolean[] unsaveable) {
        int gt = gate.enter("stepBuffers");
        try {
            java.util.TreeMap<Long, Long> found = new java.util.TreeMap<>(Long::compareUnsigned);
            for (long a : addrs) {
                Ledger.Entry e = ledger.nearest(a);
                if (e != null && Long.compareUnsigned(a - e.base(), e.allocation().bytes()) < 0) {
                    found.put(e.base(), e.allocation().bytes());
                } else if (arenas.covers(a, 1) || pinned.coversAddress(a, 1)) {
                    unsaveable[0] = true;
                }
            }
            long[][] out = new long[found.size()][];
            int i = 0;
            for (var f : found.entrySet()) {
                out[i++] = new long[] {f.getKey(), f.getValue()};
            }
            return out;
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}'s replay check: waits for the device ({@code cuCtxSynchronize}),
     * then reads each {@code {base, bytes}} range with a blocking copy. Neither counted nor traced.
     */
    byte[][] stepRead(long[][] ranges) {
        String op = "stepRead";
        int gt = gate.enter(op);
        try (Arena arena = Arena.ofConfined()) {
            driver.ctxSynchronize();
            byte[][] out = new byte[ranges.length][];
            for (int i = 0; i < ranges.length; i++) {
                MemorySegment seg = arena.allocate(ranges[i][1]);
                driver.memcpyDtoH(seg, ranges[i][0], ranges[i][1]);
                out[i] = seg.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            }
            return out;
        } catch (GpuException e) {
            throw fail(e, op);
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}'s replay check: writes each {@code {base, bytes}} range back,
     * then waits for the device, so work on any stream after it sees the bytes. Neither counted
     * nor traced.
     */
    void stepWrite(long[][] ranges, byte[][] data) {
        String op = "stepWrite";
        int gt = gate.enter(op);
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < ranges.length; i++) {
                MemorySegment seg = arena.allocate(ranges[i][1]);
                MemorySegment.copy(data[i], 0, seg, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, data[i].length);
                driver.memcpyHtoD(ranges[i][0], seg, ranges[i][1]);
            }
            driver.ctxSynchronize();
        } catch (GpuException e) {
            throw fail(e, op);
        } finally {
            gate.leave(gt);
        }
    }

    /** For {@link CapturedStepImpl}'s replay check: launches the graph, neither counted as a replay nor traced. */
    void stepReplay(GraphHandle graph, Stream stream) {
        String op = "stepReplay";
        int gt = gate.enter(op);
        try {
            HandleTable.Slot g = liveGraph(graph, op);
            long st = liveStream(stream, op);
            try {
                driver.graphLaunch(g.raw(), st);
            } catch (GpuException e) {
                throw fail(e, op + " " + graph);
            }
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}: ends a capture and, when {@code old} is given, first tries to
     * apply the new graph to {@code old}'s executable graph ({@code cuGraphExecUpdate}), which is
     * cheaper than instantiating. {@code result[0]} receives the update's
     * {@code CUgraphExecUpdateResult} (-1 when none was tried or the driver cannot).
     *
     * @return {@code old} when it was updated, else a new instantiated graph
     */
    GraphHandle endCaptureInto(Stream stream, GraphHandle old, int[] result) {
        String op = "endCaptureInto";
        result[0] = -1;
        if (old == null) {
            return endCapture(stream);
        }
        int gt = gate.enter(op);
        try {
            long s = liveStream(stream, op);
            HandleTable.Slot o = liveGraph(old, op);
            long graph;
            try {
                graph = driver.streamEndCapture(s);
            } catch (GpuException e) {
                // A failed end may still end the capture (901, 904, or 908 from another thread).
                if (e.error() == CudaError.STREAM_CAPTURE_INVALIDATED || e.error() == CudaError.STREAM_CAPTURE_UNJOINED
                        || !capturingRaw(s)) {
                    pool.captureEnded(s);
                }
                throw fail(e, "endCapture " + stream);
            }
            pool.captureEnded(s);
            try {
                result[0] = driver.graphExecUpdate(o.raw(), graph);
            } catch (GpuException e) {
                if (e.error() != CudaError.NOT_SUPPORTED) {
                    RuntimeException r = fail(e, op + " " + old + " (cuGraphExecUpdate)");
                    destroyQuietly(graph, r);
                    throw r;
                }
            }
            if (result[0] == Driver.UPDATE_SUCCESS) {
                // The exec copied the parameters; the graph it was updated from is no longer needed.
                destroyQuietly(graph, null);
                return old;
            }
            long exec;
            try {
                exec = driver.graphInstantiate(graph);
            } catch (GpuException e) {
                RuntimeException r = fail(e, "endCapture " + stream + " (instantiate)");
                destroyQuietly(graph, r);
                throw r;
            }
            return resources.graph(new GraphHandle(graphs.add(exec, graph)));
        } finally {
            gate.leave(gt);
        }
    }

    private void destroyQuietly(long graph, RuntimeException into) {
        try {
            driver.graphDestroy(graph);
        } catch (RuntimeException suppressed) {
            if (into != null) {
                into.addSuppressed(suppressed);
            }
        }
    }

    /**
     * For {@link CapturedStepImpl}: sets a memset node of an instantiated graph in place
     * ({@code cuGraphExecMemsetNodeSetParams}), for replays launched after this call.
     */
    void setMemsetNode(GraphHandle graph, long node, long ptr, int value, long bytes) {
        String op = "setMemsetNode";
        int gt = gate.enter(op);
        try {
            HandleTable.Slot g = liveGraph(graph, op);
            checkRange(ptr, bytes, op, "ptr");
            try {
                driver.graphExecMemsetNodeSetParams(g.raw(), node, ptr, value, bytes);
            } catch (GpuException e) {
                throw fail(e, op + " " + bytes + " B at 0x" + Long.toHexString(ptr) + " in " + graph);
            }
        } finally {
            gate.leave(gt);
        }
    }

    /**
     * For {@link CapturedStepImpl}: sets a device-to-device copy node of an instantiated graph in
     * place ({@code cuGraphExecMemcpyNodeSetParams}), for replays launched after this call.
     */
    void setCopyNode(GraphHandle graph, long node, long src, long dst, long bytes) {
        String op = "setCopyNode";
        int gt = gate.enter(op);
        try {
            HandleTable.Slot g = liveGraph(graph, op);
            checkRange(src, bytes, op, "src");
            checkRange(dst, bytes, op, "dst");
            try {
                driver.graphExecCopyNodeSetParams(g.raw(), node, src, dst, bytes);
            } catch (GpuException e) {
                throw fail(e, op + " " + bytes + " B 0x" + Long.toHexString(src) + " -> 0x" + Long.toHexString(dst) + " in " + graph);
            }
        } finally {
            gate.leave(gt);
        }
    }

    private HandleTable.Slot liveGraph(GraphHandle graph, String op) {
        HandleTable.Slot g = graphs.get(Objects.requireNonNull(graph, "graph").handle());
        if (g == null) {
            throw deadHandle(op, graph + " was not made by this runtime's endCapture or is already destroyed");
        }
        return g;
    }

    // ---- device ------------------------------------------------------------------------------------

    @Override
    public long totalMemory() {
        int gt = gate.enter("totalMemory");
        try {
            return info.totalMemory();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public long freeMemory() {
        int gt = gate.enter("freeMemory");
        try {
            return memInfo("freeMemory").free() + arenas.slackBytes() + pool.cachedBytes();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public long deviceFreeMemory() {
        int gt = gate.enter("deviceFreeMemory");
        try {
            return memInfo("deviceFreeMemory").free();
        } finally {
            gate.leave(gt);
        }
    }

    private MemInfo memInfo(String call) {
        try {
            return driver.memGetInfo();
        } catch (GpuException e) {
            throw fail(e, call);
        }
    }

    @Override
    public int smCount() {
        int gt = gate.enter("smCount");
        try {
            return info.smCount();
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void bindToThread() {
        int gt = gate.enter("bindToThread");
        try {
            try {
                driver.bindToThread();
            } catch (GpuException e) {
                throw fail(e, "bindToThread");
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public boolean debugSyncKernels() {
        int gt = gate.enter("debugSyncKernels");
        try {
            return debugSync;
        } finally {
            gate.leave(gt);
        }
    }

    // ---- pinned host memory ------------------------------------------------------------------------

    @Override
    public MemorySegment allocHostPinned(long bytes) {
        int gt = gate.enter("allocHostPinned");
        try {
            Checks.size(bytes, "bytes", "allocHostPinned");
            MemorySegment seg;
            try {
                seg = driver.memHostAlloc(bytes, HOST_DEVICEMAP);
            } catch (GpuException e) {
                throw fail(e, "allocHostPinned " + bytes + " B");
            }
            if (seg.address() != 0) {
                pinned.add(seg);
                resources.pinned(seg);
            }
            return seg;
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public void freeHostPinned(MemorySegment host) {
        int gt = gate.enterReleaser("freeHostPinned");
        try {
            Objects.requireNonNull(host, "host");
            if (host.address() == 0) {
                return;
            }
            MemorySegment reg = pinned.remove(host);
            if (reg == null) {
                throw new GpuException(CudaError.INVALID_VALUE, "freeHostPinned", "host=0x" + Long.toHexString(host.address())
                        + " is not the base of memory allocHostPinned returned, or is already freed; nothing was freed");
            }
            Resources.Entry tracked = resources.gone(LiveResource.Kind.PINNED_HOST, reg.address());
            // Copies that found the range pinned before it left the registry finish first.
            gate.awaitGrace();
            try {
                driver.memFreeHost(reg);
            } catch (IllegalStateException e) {
                // The segment's scope is held by a downcall of the application's own: nothing was freed.
                pinned.add(reg);
                resources.restore(LiveResource.Kind.PINNED_HOST, reg.address(), tracked);
                throw new IllegalStateException("freeHostPinned 0x" + Long.toHexString(host.address())
                        + ": the segment is in use by another thread; nothing was freed", e);
            } catch (GpuException e) {
                if (!e.error().isTeardown()) {
                    throw fail(e, "freeHostPinned 0x" + Long.toHexString(host.address()));
                }
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public DevicePtr hostPtrToDevice(MemorySegment host) {
        int gt = gate.enter("hostPtrToDevice");
        try {
            Checks.alive(host, "host");
            try {
                return new DevicePtr(driver.memHostGetDevicePointer(host));
            } catch (GpuException e) {
                throw fail(e, "hostPtrToDevice 0x" + Long.toHexString(host.address()));
            }
        } finally {
            gate.leave(gt);
        }
    }

    @Override
    public boolean isPinned(MemorySegment host) {
        int gt = gate.enter("isPinned");
        try {
            Objects.requireNonNull(host, "host");
            return pinned.contains(host);
        } finally {
            gate.leave(gt);
        }
    }

    // ---- faults and teardown ----------------------------------------------------------------------

    @Override
    public Optional<StickyFaultException> fault() {
        return gate.fault("fault");
    }

    @Override
    public boolean isClosed() {
        return gate.isClosed();
    }

    /** {@inheritDoc} Not gated: after close it returns the inventory close took. */
    @Override
    public List<LiveResource> liveResources() {
        return resources.list();
    }

    /** For {@link CapturedStepImpl}: the runtime's resource inventory. */
    Resources resources() {
        return resources;
    }

    /**
     * For {@link metrale.gpu.internal.access.RuntimeAccess#track}: lists a resource another module made over
     * this runtime until the returned release is run.
     *
     * @param kind   what it is
     * @param handle its text
     * @return what removes it from {@link #liveResources()} when run; idempotent
     */
    public Runnable track(LiveResource.Kind kind, String handle) {
        int gt = gate.enter("track " + kind.label());
        try {
            Object token = resources.other(kind, handle);
            return () -> resources.gone(token);
        } finally {
            gate.leave(gt);
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
    @Override
    public void close() {
        String site = CallSites.caller();
        if (gate.close(this::release, TimeUnit.SECONDS.toNanos(CLOSE_WAIT_SECONDS), site) && !gate.released()) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close at " + site + ": " + gate.inFlight()
                    + " call(s) still in flight after " + CLOSE_WAIT_SECONDS + " s; the last to return releases the runtime");
        }
    }

    /** Releases everything; runs once, after the last call in flight has left the closed gate. */
    private void release() {
        boolean faulted = gate.latched() != null;
        resources.logAtClose(resources.close());
        // A capture a closed call left open would refuse the sync and the frees below (900 under
        // GLOBAL mode): end it first, from whichever thread closes.
        List<Long> capturable = new ArrayList<>(List.of(Stream.PER_THREAD.handle()));
        for (HandleTable.Slot st : streams.snapshot()) {
            capturable.add(st.raw());
        }
        for (long raw : capturable) {
            if (capturingRaw(raw)) {
                pool.captureEnded(raw);
                quietly("cuStreamEndCapture", true, () -> {
                    long graph = driver.streamEndCapture(raw);
                    if (graph != 0) {
                        driver.graphDestroy(graph);
                    }
                });
            }
        }
        if (!faulted) {
            // Pending async copies may still write pinned memory or read buffers freed below.
            try {
                driver.ctxSynchronize();
            } catch (GpuException e) {
                // A fault that surfaces only now makes every release below fail the same way.
                faulted = e.error().isSticky() || probe().isSticky();
                LOG.log(faulted || e.error().isTeardown() ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                        "metrale-gpu: close: cuCtxSynchronize failed: " + e.getMessage());
                if (faulted) {
                    LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: the context reports a sticky fault "
                            + "no call had surfaced: " + e.getMessage());
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: cuCtxSynchronize failed: " + e);
            }
        }
        boolean quiet = faulted;
        for (HandleTable.Slot g : graphs.drain()) {
            quietly("cuGraphExecDestroy", quiet, () -> driver.graphExecDestroy(g.raw()));
            quietly("cuGraphDestroy", quiet, () -> driver.graphDestroy((Long) g.extra()));
        }
        try {
            quarantine.flush(false);
        } catch (RuntimeException e) {
            LOG.log(quiet ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "metrale-gpu: close: giving back the quarantine failed: " + e.getMessage());
        }
        List<Ledger.Entry> leaks = ledger.drain("close");
        if (!leaks.isEmpty()) {
            long bytes = 0;
            int unreported = 0;
            for (Ledger.Entry e : leaks) {
                if (!reportedLeaks.contains(e.allocation().index())) {
                    bytes += e.allocation().bytes();
                    unreported++;
                }
            }
            if (unreported > 0) {
                LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: " + unreported + " allocation(s) of "
                        + bytes + " bytes were never freed; freeing them");
            }
            for (Ledger.Entry e : leaks) {
                boolean reported = reportedLeaks.contains(e.allocation().index());
                LOG.log(reported ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                        "metrale-gpu: leak: " + e.describe() + (reported ? " (reported before close)" : ""));
                if (pool.owns(e.base())) {
                    continue;
                }
                quietly("cuMemFree_v2 " + e.allocation().ptr(), quiet, () -> driver.memFree(e.base()));
            }
        }
        pool.close((what, step) -> quietly(what, quiet, step));
        for (ArenaTable.Chunk c : arenas.drain()) {
            quietly("cuMemFree_v2 arena chunk 0x" + Long.toHexString(c.base), quiet, () -> driver.memFree(c.base));
        }
        for (MemorySegment seg : pinned.drain()) {
            quietly("cuMemFreeHost", quiet, () -> driver.memFreeHost(seg));
        }
        for (HandleTable.Slot ev : events.drain()) {
            quietly("cuEventDestroy_v2", quiet, () -> driver.eventDestroy(ev.raw()));
        }
        for (HandleTable.Slot st : streams.drain()) {
            quietly("cuStreamDestroy_v2", quiet, () -> driver.streamDestroy(st.raw()));
        }
        for (long m : modules.drain(functions)) {
            quietly("cuModuleUnload", quiet, () -> driver.moduleUnload(m));
        }
        opCache.clear();
        quietly("closing the driver", quiet, driver::close);
    }

    // ---- range checks ------------------------------------------------------------------------------------

    /**
     * Refuses a device range that is not inside live memory of this runtime before the driver sees
     * it: the driver does not check every case (an async copy from a freed pointer is accepted
     * silently on the H200), and the simulator's memory of another runtime must not be touched.
     */
    private void checkRange(long p, long bytes, String call, String param) {
        if (bytes != 0 && !inLiveMemory(p, bytes)) {
            throw new GpuException(CudaError.INVALID_VALUE, call, param + ": " + explainRange(p, bytes)
                    + "; nothing was copied or set");
        }
    }

    /** {@return whether {@code [p, p + bytes)} lies in one ledger allocation, arena chunk, mapped pinned range or adopted range} */
    private boolean inLiveMemory(long p, long bytes) {
        return ledger.covers(p, bytes) || arenas.covers(p, bytes) || pinned.coversAddress(p, bytes)
                || adoptions.covers(p, bytes);
    }

    private String explainRange(long p, long bytes) {
        if (arenas.covers(p, 1)) {
            return "[0x" + Long.toHexString(p) + ", +" + bytes + ") runs past the end of its arena chunk";
        }
        if (pinned.coversAddress(p, 1)) {
            return "[0x" + Long.toHexString(p) + ", +" + bytes + ") runs past the end of its page-locked range";
        }
        String held = quarantine.explain(p, bytes);
        if (held != null) {
            return held;
        }
        String adopted = adoptions.explainPast(p, bytes);
        return adopted != null ? adopted : ledger.explainRange(p, bytes);
    }

    /** {@return the bytes a 2D copy spans from its start: {@code (height - 1) * pitch + width}} */
    private static long span2D(long pitch, long width, long height) {
        try {
            return Math.addExact(Math.multiplyExact(height - 1, pitch), width);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("copyD2D2DAsync(pitch=" + pitch + ", height=" + height
                    + "): the span overflows");
        }
    }

    // ---- handle checks ---------------------------------------------------------------------------------

    /**
     * {@return the driver's handle of the stream} A destroyed stream, or one of another runtime,
     * is refused before the driver, which could crash on it. O(1) and allocation-free.
     */
    private long liveStream(Stream stream, String op) {
        long s = Objects.requireNonNull(stream, "stream").handle();
        if (s >= 0 && s <= 2) {
            return s;
        }
        HandleTable.Slot slot = streams.get(s);
        if (slot == null) {
            throw deadHandle(op, stream + " is not a default stream nor one this runtime created and has not destroyed");
        }
        return slot.raw();
    }

    /** {@return the driver's handle of the event} A destroyed or foreign event is refused before the driver. */
    private long liveEvent(Event event, String name, String op) {
        HandleTable.Slot slot = events.get(Objects.requireNonNull(event, name).handle());
        if (slot == null) {
            throw deadHandle(op, name + " " + event + " was not created by this runtime or is already destroyed");
        }
        return slot.raw();
    }

    /** {@return the driver's function handle} A handle no lookup returned, or of a replaced module, is refused. */
    private long liveFunction(KernelHandle kernel, String op) {
        HandleTable.Slot slot = functions.get(Objects.requireNonNull(kernel, "kernel").value());
        if (slot == null) {
            throw deadHandle(op, kernel + " was not returned by kernel(module, func) on this runtime, "
                    + "or its module was replaced or unloaded since");
        }
        return slot.raw();
    }

    private static GpuException deadHandle(String op, String why) {
        return new GpuException(CudaError.INVALID_HANDLE, op, why);
    }

    @Override
    public String toString() {
        return "Gpu[" + info + (isClosed() ? ", closed" : "") + "]";
    }
}
