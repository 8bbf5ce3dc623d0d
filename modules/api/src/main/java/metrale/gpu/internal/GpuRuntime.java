package metrale.gpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.Allocation;
import metrale.gpu.CaptureMode;
import metrale.gpu.CaptureStatus;
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
import metrale.gpu.OpCache;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import metrale.gpu.spi.MemInfo;
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

    private final FaultLatch latch = new FaultLatch();
    private final Ledger ledger = new Ledger();
    private final RedZones redZones;
    private final ArenaTable arenas = new ArenaTable();
    private final PinnedRegistry pinned = new PinnedRegistry();
    private final Handles handles = new Handles();
    private final Modules modules = new Modules();
    private final Object moduleLoadLock = new Object();
    private final OpCache opCache = new OpCache();
    private final AtomicBoolean pinnedSourceWarned = new AtomicBoolean();

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
        this.redZones = new RedZones(options.redZoneBytes(), options.redZoneMinIndex());
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
     * @return what the call should throw: {@code e}, {@code e} enriched when it latched, a
     *         refusal if another thread latched first, or {@link IllegalStateException} when the
     *         runtime was closed meanwhile
     */
    private RuntimeException fail(GpuException e, String call) {
        FaultLatch.State s = latch.state();
        if (s == FaultLatch.Closed.INSTANCE) {
            IllegalStateException ise = new IllegalStateException("Gpu is closed");
            ise.initCause(e);
            return ise;
        }
        if (s instanceof FaultLatch.Latched) {
            return e.error().isSticky() ? FaultLatch.refuse(s, call) : e;
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
        if (latch.latch(original, call, site)) {
            LOG.log(System.Logger.Level.ERROR, "metrale-gpu: sticky fault latched: " + original.getMessage()
                    + "; every later call fails with StickyFaultException");
            return original;
        }
        return FaultLatch.refuse(latch.state(), call);
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
            long dist = Long.compareUnsigned(addr, near.base()) < 0 ? near.base() - addr
                    : Long.compareUnsigned(addr, near.end() + near.pad()) < 0 ? 0 : addr - (near.end() + near.pad());
            if (best == null || Long.compareUnsigned(dist, bestDist) < 0) {
                best = near;
                bestDist = dist;
                bestAddr = addr;
            }
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
        return "nearest allocation to 0x" + Long.toHexString(bestAddr) + ": " + best.describe() + ", " + where;
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
        latch.check("backendName");
        return driver.name();
    }

    @Override
    public DeviceInfo device() {
        latch.check("device");
        return info;
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
        latch.check("unwrap");
        Objects.requireNonNull(type, "type");
        return driver.controls(type);
    }

    // ---- memory and the ledger ---------------------------------------------------------------------

    @Override
    public DevicePtr alloc(long bytes) {
        latch.check("alloc");
        Checks.size(bytes, "bytes", "alloc");
        String site = allocSites ? CallSites.caller() : "?";
        long index = ledger.nextIndex();
        // Size 0 goes to the driver unpadded, so it fails as CUDA's cuMemAlloc does.
        long pad = redZones.on() && bytes > 0 ? redZones.padFor(index) : 0;
        if (pad > Long.MAX_VALUE - bytes) {
            throw new IllegalArgumentException("alloc(bytes=" + bytes + "): with the " + pad + "-byte red zone it overflows");
        }
        long p;
        try {
            p = driver.memAlloc(bytes + pad);
        } catch (GpuException e) {
            throw allocFailed(e, "alloc", bytes, pad, site);
        }
        Ledger.Entry entry = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, site, index, false), pad);
        if (pad > 0) {
            try {
                redZones.fill(driver, p, bytes, pad);
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
        Jfr.alloc(p, bytes, site, false);
        return entry.allocation().ptr();
    }

    @Override
    public DevicePtr allocManaged(long bytes) {
        latch.check("allocManaged");
        Checks.size(bytes, "bytes", "allocManaged");
        String site = allocSites ? CallSites.caller() : "?";
        long index = ledger.nextIndex();
        long p;
        try {
            p = driver.memAllocManaged(bytes, ATTACH_GLOBAL);
        } catch (GpuException e) {
            throw allocFailed(e, "allocManaged", bytes, 0, site);
        }
        Ledger.Entry entry = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, site, index, true), 0);
        ledger.add(entry);
        Jfr.alloc(p, bytes, site, true);
        return entry.allocation().ptr();
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
        latch.check("free");
        long p = Checks.ptr(ptr, "ptr");
        if (p == 0) {
            return;
        }
        // Off the ledger before the driver frees it: an entry left behind would be freed again by a sweep.
        Ledger.Entry e = ledger.remove(p, allocSites ? CallSites.caller() : "?");
        if (e == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "free", explainNotLive(p) + "; nothing was freed");
        }
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
        Jfr.free(p, e.allocation().bytes());
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
        latch.check("allocArena");
        Checks.size(bytes, "bytes", "allocArena");
        long p;
        try {
            p = driver.memAlloc(bytes);
        } catch (GpuException e) {
            throw allocFailed(e, "allocArena", bytes, 0, CallSites.caller());
        }
        arenas.add(p, bytes);
        Jfr.alloc(p, bytes, "arena chunk", false);
        return new DevicePtr(p);
    }

    @Override
    public void freeArena(DevicePtr ptr) {
        latch.check("freeArena");
        long p = Checks.ptr(ptr, "ptr");
        if (p == 0) {
            return;
        }
        ArenaTable.Chunk c = arenas.remove(p);
        if (c == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "freeArena", "ptr=" + ptr
                    + " is not a live arena chunk from allocArena (" + ledger.explainNotLive(p) + "); nothing was freed");
        }
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
        Jfr.free(p, c.bytes);
    }

    @Override
    public void noteArenaUse(DevicePtr chunk, long usedBytes) {
        latch.check("noteArenaUse");
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
    }

    @Override
    public long chunkSlackBytes() {
        latch.check("chunkSlackBytes");
        return arenas.slackBytes();
    }

    @Override
    public long liveBytes() {
        latch.check("liveBytes");
        return ledger.liveBytes();
    }

    @Override
    public int liveAllocCount() {
        latch.check("liveAllocCount");
        return ledger.count();
    }

    @Override
    public List<Allocation> liveAllocations() {
        latch.check("liveAllocations");
        return ledger.snapshot().stream().map(Ledger.Entry::allocation).toList();
    }

    @Override
    public String allocReport(int topN, long minMb) {
        latch.check("allocReport");
        return ledger.report(topN, minMb);
    }

    @Override
    public int sweepUnreleased() {
        latch.check("sweepUnreleased");
        int freed = 0;
        GpuException first = null;
        for (Ledger.Entry e : ledger.drain("sweepUnreleased called at " + CallSites.caller())) {
            try {
                driver.memFree(e.base());
                freed++;
                Jfr.free(e.base(), e.allocation().bytes());
            } catch (GpuException x) {
                if (x.error().isTeardown()) {
                    freed++;
                } else if (first == null) {
                    first = x;
                }
            }
        }
        if (first != null) {
            throw fail(first, "sweepUnreleased");
        }
        return freed;
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

    private List<RedZoneViolation> findViolations(String call) {
        latch.check(call);
        if (!redZones.on()) {
            return List.of();
        }
        try {
            return List.copyOf(redZones.find(driver, ledger.snapshot(), this::stillLive));
        } catch (GpuException e) {
            throw fail(e, call);
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
        latch.check("poisonRedzones");
        if (!redZones.on()) {
            return;
        }
        try {
            redZones.poison(driver, ledger.snapshot(), lo, hi, this::stillLive);
        } catch (GpuException e) {
            throw fail(e, "poisonRedzones");
        }
    }

    // ---- copies -----------------------------------------------------------------------------------

    @Override
    public void copyH2D(MemorySegment src, DevicePtr dst) {
        latch.check("copyH2D");
        Checks.alive(src, "src");
        long d = Checks.ptr(dst, "dst");
        long n = src.byteSize();
        try {
            driver.memcpyHtoD(d, src, n);
        } catch (GpuException e) {
            throw fail(e, "copyH2D " + n + " B to 0x" + Long.toHexString(d));
        }
        counters.h2dCopy(n);
        Jfr.copy("H2D", n, false, 0);
    }

    @Override
    public void copyD2H(DevicePtr src, MemorySegment dst) {
        latch.check("copyD2H");
        long s = Checks.ptr(src, "src");
        Checks.writable(dst, "dst");
        long n = dst.byteSize();
        try {
            driver.memcpyDtoH(dst, s, n);
        } catch (GpuException e) {
            throw fail(e, "copyD2H " + n + " B from 0x" + Long.toHexString(s));
        }
        counters.d2hCopy(n);
        Jfr.copy("D2H", n, false, 0);
    }

    @Override
    public void copyD2HOnStream(DevicePtr src, MemorySegment dst, Stream stream) {
        latch.check("copyD2HOnStream");
        long s = Checks.ptr(src, "src");
        Checks.writable(dst, "dst");
        long st = liveStream(stream, "copyD2HOnStream");
        long n = dst.byteSize();
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
        Jfr.copy("D2H", n, false, st);
    }

    @Override
    public void copyD2HAsync(DevicePtr src, MemorySegment dst, Stream stream) {
        latch.check("copyD2HAsync");
        long s = Checks.ptr(src, "src");
        Checks.nativeSeg(dst, "dst", "copyD2HAsync");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("copyD2HAsync: dst: the segment is read-only");
        }
        long st = liveStream(stream, "copyD2HAsync");
        long n = dst.byteSize();
        try {
            driver.memcpyDtoHAsync(dst, s, n, st);
        } catch (GpuException e) {
            throw fail(e, "copyD2HAsync " + n + " B from " + src + " on " + stream);
        }
        counters.d2hCopy(n);
        Jfr.copy("D2H", n, true, st);
    }

    @Override
    public void copyH2DAsync(MemorySegment src, DevicePtr dst, Stream stream) {
        long st = enqueueH2D("copyH2DAsync", src, dst, stream);
        if (pinned.contains(src)) {
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
    }

    @Override
    public void copyH2DAsyncRetained(MemorySegment src, DevicePtr dst, Stream stream) {
        enqueueH2D("copyH2DAsyncRetained", src, dst, stream);
    }

    /** Checks and enqueues an async host-to-device copy for {@code op}. {@return the stream's handle} */
    private long enqueueH2D(String op, MemorySegment src, DevicePtr dst, Stream stream) {
        latch.check(op);
        Checks.nativeSeg(src, "src", op);
        long d = Checks.ptr(dst, "dst");
        long st = liveStream(stream, op);
        long n = src.byteSize();
        try {
            driver.memcpyHtoDAsync(d, src, n, st);
        } catch (GpuException e) {
            throw fail(e, op + " " + n + " B to " + dst + " on " + stream);
        }
        counters.h2dCopy(n);
        Jfr.copy("H2D", n, true, st);
        return st;
    }

    @Override
    public void copyD2D(DevicePtr src, DevicePtr dst, long bytes) {
        latch.check("copyD2D");
        long s = Checks.ptr(src, "src");
        long d = Checks.ptr(dst, "dst");
        Checks.size(bytes, "bytes", "copyD2D");
        try {
            driver.memcpyDtoD(d, s, bytes);
        } catch (GpuException e) {
            throw fail(e, "copyD2D " + bytes + " B " + src + " -> " + dst);
        }
        if (trace.on()) {
            trace.record(TraceEntry.d2d(s, d, bytes));
        }
        counters.d2dCopy(bytes);
        Jfr.copy("D2D", bytes, false, 0);
    }

    @Override
    public void copyD2DAsync(DevicePtr src, DevicePtr dst, long bytes, Stream stream) {
        latch.check("copyD2DAsync");
        long s = Checks.ptr(src, "src");
        long d = Checks.ptr(dst, "dst");
        Checks.size(bytes, "bytes", "copyD2DAsync");
        long st = liveStream(stream, "copyD2DAsync");
        try {
            driver.memcpyDtoDAsync(d, s, bytes, st);
        } catch (GpuException e) {
            throw fail(e, "copyD2DAsync " + bytes + " B " + src + " -> " + dst + " on " + stream);
        }
        if (trace.on()) {
            trace.record(TraceEntry.d2d(s, d, bytes));
        }
        counters.d2dCopy(bytes);
        Jfr.copy("D2D", bytes, true, st);
    }

    @Override
    public void copyD2D2DAsync(DevicePtr src, long srcPitch, DevicePtr dst, long dstPitch, long widthBytes, long height,
                               Stream stream) {
        latch.check("copyD2D2DAsync");
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
        try {
            driver.memcpy2DAsync(d, dstPitch, s, srcPitch, widthBytes, height, st);
        } catch (GpuException e) {
            throw fail(e, "copyD2D2DAsync " + widthBytes + "x" + height + " " + src + " -> " + dst + " on " + stream);
        }
        counters.d2dCopy(n);
        Jfr.copy("D2D", n, true, st);
    }

    @Override
    public void memset(DevicePtr ptr, int value, long bytes) {
        latch.check("memset");
        long p = Checks.ptr(ptr, "ptr");
        Checks.byteValue(value, "memset");
        Checks.size(bytes, "bytes", "memset");
        try {
            driver.memsetD8(p, value, bytes);
        } catch (GpuException e) {
            throw fail(e, "memset " + bytes + " B at " + ptr);
        }
    }

    @Override
    public void memsetAsync(DevicePtr ptr, int value, long bytes, Stream stream) {
        latch.check("memsetAsync");
        long p = Checks.ptr(ptr, "ptr");
        Checks.byteValue(value, "memsetAsync");
        Checks.size(bytes, "bytes", "memsetAsync");
        long st = liveStream(stream, "memsetAsync");
        try {
            driver.memsetD8Async(p, value, bytes, st);
        } catch (GpuException e) {
            throw fail(e, "memsetAsync " + bytes + " B at " + ptr + " on " + stream);
        }
        if (trace.on()) {
            trace.record(TraceEntry.memset(p, value, bytes));
        }
    }

    // ---- modules and kernels ---------------------------------------------------------------------

    @Override
    public void loadModule(String name, byte[] image) {
        latch.check("loadModule");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(image, "image");
        // One load at a time, so replacing a name unloads exactly the module it replaced.
        synchronized (moduleLoadLock) {
            long h;
            try {
                h = driver.moduleLoadData(name, image);
            } catch (GpuException e) {
                throw fail(e, "loadModule " + name);
            }
            Modules.Module old = modules.put(name, h);
            if (old != null) {
                for (long f : modules.functionHandles(old)) {
                    handles.removeFunction(f);
                }
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
    }

    @Override
    public boolean hasModule(String name) {
        latch.check("hasModule");
        Objects.requireNonNull(name, "name");
        return modules.get(name) != null;
    }

    @Override
    public KernelHandle kernel(String module, String func) {
        latch.check("kernel");
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
        telemetry.audit().record(module, func, true, site);
        trace.nameKernel(f, module, func);
        modules.resolved(m, func, f);
        handles.addFunction(f);
        KernelHandle h = new KernelHandle(f);
        opCache.publishKernel(module, func, h);
        return h;
    }

    @Override
    public KernelRegistry kernelRegistry() {
        latch.check("kernelRegistry");
        return modules.registry();
    }

    @Override
    public OpCache opCache() {
        latch.check("opCache");
        return opCache;
    }

    @Override
    public byte[] compileCuda(String name, String source, String... compilerOptions) {
        latch.check("compileCuda");
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
    }

    @Override
    public void setMaxDynamicSharedMemory(KernelHandle kernel, int bytes) {
        latch.check("setMaxDynamicSharedMemory");
        long f = liveFunction(kernel, "setMaxDynamicSharedMemory");
        Checks.size(bytes, "bytes", "setMaxDynamicSharedMemory");
        try {
            driver.funcSetMaxDynamicSharedMemory(f, bytes);
        } catch (GpuException e) {
            throw fail(e, "setMaxDynamicSharedMemory " + trace.nameOf(f) + " " + bytes + " B");
        }
    }

    @Override
    public void launch(KernelHandle kernel, LaunchConfig config, Stream stream, KernelArgs args) {
        latch.check("launch");
        long func = liveFunction(kernel, "launch");
        Objects.requireNonNull(config, "config");
        long st = liveStream(stream, "launch");
        if (Objects.requireNonNull(args, "args").isClosed()) {
            throw new IllegalStateException("launch: KernelArgs is closed");
        }
        long t0 = timingOn ? timing.begin() : 0;
        try {
            driver.launchKernel(func, config, st, args);
        } catch (GpuException e) {
            throw launchFailed(e, func, "");
        }
        if (trace.on()) {
            recordLaunch(func, config, args);
        }
        counters.launch();
        if (debugSync || t0 != 0) {
            syncAfterLaunch(func, st, t0);
        }
        Jfr.launch(trace, func, config, st);
    }

    private void recordLaunch(long func, LaunchConfig c, KernelArgs args) {
        trace.record(TraceEntry.kernel(func, c.grid().x(), c.grid().y(), c.grid().z(),
                c.block().x(), c.block().y(), c.block().z(), c.sharedMemBytes(), args.words()));
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
        latch.check("defaultStream");
        return Stream.DEFAULT;
    }

    @Override
    public Stream createStream() {
        return createStream(false);
    }

    @Override
    public Stream createStream(boolean nonBlocking) {
        latch.check("createStream");
        long s;
        try {
            s = driver.streamCreate(nonBlocking ? 1 : 0);
        } catch (GpuException e) {
            throw fail(e, "createStream");
        }
        handles.addStream(s);
        return new Stream(s);
    }

    @Override
    public void destroyStream(Stream stream) {
        latch.check("destroyStream");
        long s = Objects.requireNonNull(stream, "stream").handle();
        if (!handles.removeStream(s)) {
            throw new GpuException(CudaError.INVALID_HANDLE, "destroyStream", stream
                    + (s == 0 || s == 1 || s == 2 ? " is a default stream, which cannot be destroyed"
                    : " was not created by this runtime or is already destroyed"));
        }
        try {
            driver.streamDestroy(s);
        } catch (GpuException e) {
            if (!e.error().isTeardown()) {
                throw fail(e, "destroyStream " + stream);
            }
        }
    }

    @Override
    public void synchronize(Stream stream) {
        latch.check("synchronize");
        long s = liveStream(stream, "synchronize");
        counters.streamSync();
        try {
            driver.streamSynchronize(s);
        } catch (GpuException e) {
            throw fail(e, "synchronize " + stream);
        }
        Jfr.sync("stream", s);
    }

    @Override
    public void synchronize() {
        latch.check("synchronize");
        counters.streamSync();
        try {
            driver.ctxSynchronize();
        } catch (GpuException e) {
            throw fail(e, "synchronize (context)");
        }
        Jfr.sync("context", 0);
    }

    @Override
    public boolean streamQuery(Stream stream) {
        latch.check("streamQuery");
        long s = liveStream(stream, "streamQuery");
        try {
            return driver.streamQuery(s);
        } catch (GpuException e) {
            throw fail(e, "streamQuery " + stream);
        }
    }

    @Override
    public Event createEvent() {
        return createEvent(0);
    }

    @Override
    public Event createEvent(int flags) {
        latch.check("createEvent");
        long ev;
        try {
            ev = driver.eventCreate(flags);
        } catch (GpuException e) {
            throw fail(e, "createEvent flags=" + flags);
        }
        handles.addEvent(ev);
        return new Event(ev);
    }

    @Override
    public void recordEvent(Event event, Stream stream) {
        latch.check("recordEvent");
        long ev = liveEvent(event, "event", "recordEvent");
        long s = liveStream(stream, "recordEvent");
        try {
            driver.eventRecord(ev, s);
        } catch (GpuException e) {
            throw fail(e, "recordEvent " + event + " on " + stream);
        }
    }

    @Override
    public void streamWaitEvent(Stream stream, Event event) {
        latch.check("streamWaitEvent");
        long s = liveStream(stream, "streamWaitEvent");
        long ev = liveEvent(event, "event", "streamWaitEvent");
        try {
            driver.streamWaitEvent(s, ev, 0);
        } catch (GpuException e) {
            throw fail(e, "streamWaitEvent " + stream + " on " + event);
        }
    }

    @Override
    public void eventSynchronize(Event event) {
        latch.check("eventSynchronize");
        long ev = liveEvent(event, "event", "eventSynchronize");
        counters.streamSync();
        try {
            driver.eventSynchronize(ev);
        } catch (GpuException e) {
            throw fail(e, "eventSynchronize " + event);
        }
        Jfr.sync("event", ev);
    }

    @Override
    public boolean eventQuery(Event event) {
        latch.check("eventQuery");
        long ev = liveEvent(event, "event", "eventQuery");
        try {
            return driver.eventQuery(ev);
        } catch (GpuException e) {
            throw fail(e, "eventQuery " + event);
        }
    }

    @Override
    public float elapsedMillis(Event start, Event end) {
        latch.check("elapsedMillis");
        long a = liveEvent(start, "start", "elapsedMillis");
        long b = liveEvent(end, "end", "elapsedMillis");
        try {
            return driver.eventElapsedTime(a, b);
        } catch (GpuException e) {
            throw fail(e, "elapsedMillis " + start + " -> " + end);
        }
    }

    @Override
    public void destroyEvent(Event event) {
        latch.check("destroyEvent");
        long ev = Objects.requireNonNull(event, "event").handle();
        if (!handles.removeEvent(ev)) {
            throw new GpuException(CudaError.INVALID_HANDLE, "destroyEvent",
                    event + " was not created by this runtime or is already destroyed");
        }
        try {
            driver.eventDestroy(ev);
        } catch (GpuException e) {
            if (!e.error().isTeardown()) {
                throw fail(e, "destroyEvent " + event);
            }
        }
    }

    // ---- capture and graphs ----------------------------------------------------------------------

    @Override
    public void beginCapture(Stream stream) {
        beginCapture(stream, CaptureMode.GLOBAL);
    }

    @Override
    public void beginCapture(Stream stream, CaptureMode mode) {
        latch.check("beginCapture");
        long s = liveStream(stream, "beginCapture");
        Objects.requireNonNull(mode, "mode");
        try {
            driver.streamBeginCapture(s, mode.code());
        } catch (GpuException e) {
            throw fail(e, "beginCapture " + stream + " " + mode);
        }
    }

    @Override
    public GraphHandle endCapture(Stream stream) {
        latch.check("endCapture");
        long s = liveStream(stream, "endCapture");
        long graph;
        try {
            graph = driver.streamEndCapture(s);
        } catch (GpuException e) {
            throw fail(e, "endCapture " + stream);
        }
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
        return new GraphHandle(handles.addGraph(graph, exec));
    }

    @Override
    public void abortCaptureIfActive(Stream stream) {
        latch.check("abortCaptureIfActive");
        long s = liveStream(stream, "abortCaptureIfActive");
        if (!isCapturing(s, "abortCaptureIfActive")) {
            return;
        }
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
    }

    @Override
    public boolean streamIsCapturing(Stream stream) {
        latch.check("streamIsCapturing");
        long s = liveStream(stream, "streamIsCapturing");
        return isCapturing(s, "streamIsCapturing");
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
        latch.check("captureStatus");
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
    }

    @Override
    public void launchGraph(GraphHandle graph, Stream stream) {
        latch.check("launchGraph");
        long id = Objects.requireNonNull(graph, "graph").handle();
        long s = liveStream(stream, "launchGraph");
        Handles.Graph g = handles.graph(id);
        if (g == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "launchGraph",
                    graph + " was not made by this runtime's endCapture or is already destroyed");
        }
        try {
            driver.graphLaunch(g.exec(), s);
        } catch (GpuException e) {
            throw fail(e, "launchGraph " + graph + " on " + stream);
        }
    }

    @Override
    public void destroyGraph(GraphHandle graph) {
        latch.check("destroyGraph");
        long id = Objects.requireNonNull(graph, "graph").handle();
        Handles.Graph g = handles.removeGraph(id);
        if (g == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "destroyGraph",
                    graph + " was not made by this runtime's endCapture or is already destroyed");
        }
        GpuException first = null;
        try {
            driver.graphExecDestroy(g.exec());
        } catch (GpuException e) {
            first = e.error().isTeardown() ? null : e;
        }
        try {
            driver.graphDestroy(g.graph());
        } catch (GpuException e) {
            if (first == null && !e.error().isTeardown()) {
                first = e;
            }
        }
        if (first != null) {
            throw fail(first, "destroyGraph " + graph);
        }
    }

    // ---- device ------------------------------------------------------------------------------------

    @Override
    public long totalMemory() {
        latch.check("totalMemory");
        return info.totalMemory();
    }

    @Override
    public long freeMemory() {
        latch.check("freeMemory");
        return memInfo("freeMemory").free() + arenas.slackBytes();
    }

    @Override
    public long deviceFreeMemory() {
        latch.check("deviceFreeMemory");
        return memInfo("deviceFreeMemory").free();
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
        latch.check("smCount");
        return info.smCount();
    }

    @Override
    public void bindToThread() {
        latch.check("bindToThread");
        try {
            driver.bindToThread();
        } catch (GpuException e) {
            throw fail(e, "bindToThread");
        }
    }

    @Override
    public boolean debugSyncKernels() {
        latch.check("debugSyncKernels");
        return debugSync;
    }

    // ---- pinned host memory ------------------------------------------------------------------------

    @Override
    public MemorySegment allocHostPinned(long bytes) {
        latch.check("allocHostPinned");
        Checks.size(bytes, "bytes", "allocHostPinned");
        MemorySegment seg;
        try {
            seg = driver.memHostAlloc(bytes, HOST_DEVICEMAP);
        } catch (GpuException e) {
            throw fail(e, "allocHostPinned " + bytes + " B");
        }
        if (seg.address() != 0) {
            pinned.add(seg);
        }
        return seg;
    }

    @Override
    public void freeHostPinned(MemorySegment host) {
        latch.check("freeHostPinned");
        Objects.requireNonNull(host, "host");
        if (host.address() == 0) {
            return;
        }
        MemorySegment reg = pinned.remove(host);
        if (reg == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "freeHostPinned", "host=0x" + Long.toHexString(host.address())
                    + " is not the base of memory allocHostPinned returned, or is already freed; nothing was freed");
        }
        try {
            driver.memFreeHost(reg);
        } catch (GpuException e) {
            if (!e.error().isTeardown()) {
                throw fail(e, "freeHostPinned 0x" + Long.toHexString(host.address()));
            }
        }
    }

    @Override
    public DevicePtr hostPtrToDevice(MemorySegment host) {
        latch.check("hostPtrToDevice");
        Checks.alive(host, "host");
        try {
            return new DevicePtr(driver.memHostGetDevicePointer(host));
        } catch (GpuException e) {
            throw fail(e, "hostPtrToDevice 0x" + Long.toHexString(host.address()));
        }
    }

    @Override
    public boolean isPinned(MemorySegment host) {
        latch.check("isPinned");
        Objects.requireNonNull(host, "host");
        return pinned.contains(host);
    }

    // ---- faults and teardown ----------------------------------------------------------------------

    @Override
    public Optional<StickyFaultException> fault() {
        return latch.fault("fault");
    }

    @Override
    public boolean isClosed() {
        return latch.isClosed();
    }

    @Override
    public void close() {
        FaultLatch.State before = latch.close();
        if (before == FaultLatch.Closed.INSTANCE) {
            return;
        }
        boolean faulted = before instanceof FaultLatch.Latched;
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
        for (Handles.Graph g : handles.drainGraphs()) {
            quietly("cuGraphExecDestroy", quiet, () -> driver.graphExecDestroy(g.exec()));
            quietly("cuGraphDestroy", quiet, () -> driver.graphDestroy(g.graph()));
        }
        List<Ledger.Entry> leaks = ledger.drain("close");
        if (!leaks.isEmpty()) {
            long bytes = 0;
            for (Ledger.Entry e : leaks) {
                bytes += e.allocation().bytes();
            }
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: " + leaks.size() + " allocation(s) of "
                    + bytes + " bytes were never freed; freeing them");
            for (Ledger.Entry e : leaks) {
                LOG.log(System.Logger.Level.WARNING, "metrale-gpu: leak: " + e.describe());
                quietly("cuMemFree_v2 " + e.allocation().ptr(), quiet, () -> driver.memFree(e.base()));
            }
        }
        for (ArenaTable.Chunk c : arenas.drain()) {
            quietly("cuMemFree_v2 arena chunk 0x" + Long.toHexString(c.base), quiet, () -> driver.memFree(c.base));
        }
        for (MemorySegment seg : pinned.drain()) {
            quietly("cuMemFreeHost", quiet, () -> driver.memFreeHost(seg));
        }
        for (long ev : handles.drainEvents()) {
            quietly("cuEventDestroy_v2", quiet, () -> driver.eventDestroy(ev));
        }
        for (long s : handles.drainStreams()) {
            quietly("cuStreamDestroy_v2", quiet, () -> driver.streamDestroy(s));
        }
        handles.clearFunctions();
        for (long m : modules.drain()) {
            quietly("cuModuleUnload", quiet, () -> driver.moduleUnload(m));
        }
        opCache.clear();
        quietly("closing the driver", quiet, driver::close);
    }

    // ---- handle checks ---------------------------------------------------------------------------------

    /** {@return the stream's handle} A destroyed or foreign stream is refused before the driver, which could crash on it. */
    private long liveStream(Stream stream, String op) {
        long s = Objects.requireNonNull(stream, "stream").handle();
        if (!handles.liveStream(s)) {
            throw deadHandle(op, stream + " is not a default stream nor one this runtime created and has not destroyed");
        }
        return s;
    }

    /** {@return the event's handle} A destroyed or foreign event is refused before the driver. */
    private long liveEvent(Event event, String name, String op) {
        long e = Objects.requireNonNull(event, name).handle();
        if (!handles.liveEvent(e)) {
            throw deadHandle(op, name + " " + event + " was not created by this runtime or is already destroyed");
        }
        return e;
    }

    /** {@return the kernel's function handle} A handle no lookup returned, or of a replaced module, is refused. */
    private long liveFunction(KernelHandle kernel, String op) {
        long f = Objects.requireNonNull(kernel, "kernel").value();
        if (!handles.liveFunction(f)) {
            throw deadHandle(op, kernel + " was not returned by kernel(module, func) on this runtime, "
                    + "or its module was replaced or unloaded since");
        }
        return f;
    }

    private static GpuException deadHandle(String op, String why) {
        return new GpuException(CudaError.INVALID_HANDLE, op, why);
    }

    @Override
    public String toString() {
        return "Gpu[" + info + (isClosed() ? ", closed" : "") + "]";
    }
}
