// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.LeakDetection;
import metrale.gpu.LiveResource;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import metrale.gpu.spi.MemInfo;
import metrale.telemetry.CallSites;

/**
 * The rules of device and page-locked host memory: the ledger around every allocation and free,
 * red zones and the quarantine, arena chunks, adopted memory, and the device's memory queries.
 * Each method runs inside the caller's gate frame.
 */
final class MemoryPart {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /** {@code CU_MEM_ATTACH_GLOBAL}. */
    private static final int ATTACH_GLOBAL = 1;
    /** {@code CU_MEMHOSTALLOC_DEVICEMAP}: mapped, so {@code hostPtrToDevice} works without unified addressing too. */
    private static final int HOST_DEVICEMAP = 2;

    private final Core c;

    MemoryPart(Core c) {
        this.c = c;
    }

    // ---- device memory and the ledger ------------------------------------------------------------

    DevicePtr alloc(long bytes) {
        if (c.pooled()) {
            return c.pool().allocOn(bytes, Stream.DEFAULT, "alloc");
        }
        Checks.size(bytes, "bytes", "alloc");
        String site = c.sites().get();
        long index = c.ledger().nextIndex();
        // Size 0 goes to the driver unpadded, so it fails as CUDA's cuMemAlloc does.
        long pad = c.redZones().on() && bytes > 0 ? c.redZones().padFor(index) : 0;
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
                c.redZones().fill(c.driver(), p, bytes, pad, c.pool().capturing());
            } catch (GpuException e) {
                RuntimeException r = c.fail(e, "alloc (red-zone fill)");
                try {
                    c.driver().memFree(p);
                } catch (RuntimeException suppressed) {
                    r.addSuppressed(suppressed);
                }
                throw r;
            }
        }
        c.ledger().add(entry);
        Jfr.alloc(jfr, p, bytes, site, false);
        return entry.allocation().ptr();
    }

    DevicePtr allocManaged(long bytes) {
        Checks.size(bytes, "bytes", "allocManaged");
        String site = c.sites().get();
        long index = c.ledger().nextIndex();
        long p;
        var jfr = Jfr.beginAlloc();
        try {
            p = c.driver().memAllocManaged(bytes, ATTACH_GLOBAL);
        } catch (GpuException e) {
            throw allocFailed(e, "allocManaged", bytes, 0, site);
        }
        Ledger.Entry entry = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, site, index, true), 0);
        c.ledger().add(entry);
        Jfr.alloc(jfr, p, bytes, site, true);
        return entry.allocation().ptr();
    }

    /** Out of memory first gives the quarantine back, then tries once more. */
    private long memAllocRetrying(long bytes) {
        try {
            return c.driver().memAlloc(bytes);
        } catch (GpuException e) {
            if (e.error() != CudaError.OUT_OF_MEMORY || c.pool().capturing() || !c.quarantine().mayRelieve(bytes)) {
                throw e;
            }
            c.quarantine().flush(true);
            return c.driver().memAlloc(bytes);
        }
    }

    /** Out of memory names the request and the device's free and total memory, as the seed does. */
    private RuntimeException allocFailed(GpuException e, String call, long bytes, long pad, String site) {
        RuntimeException r = c.fail(e, call + " " + bytes + " B");
        if (r != e || e.error() != CudaError.OUT_OF_MEMORY) {
            return r;
        }
        String where = LeakDetection.hasSite(site) ? site : CallSites.caller();
        String mem;
        try {
            MemInfo mi = c.driver().memGetInfo();
            mem = String.format(Locale.ROOT, "device reports %.1f MiB free / %.1f GiB total",
                    mi.free() / (1024.0 * 1024.0), mi.total() / (1024.0 * 1024.0 * 1024.0));
        } catch (RuntimeException ex) {
            mem = "device free memory unknown (" + ex.getMessage() + ")";
        }
        String d = "requested " + bytes + " bytes" + (pad > 0 ? " + " + pad + " red-zone bytes" : "")
                + " at " + where + "; " + mem + "; " + c.ledger().count() + " live allocation(s) hold "
                + c.ledger().liveBytes() + " bytes";
        return new GpuException(e.error(), e.rawCode(), e.operation(), d, e);
    }

    void free(DevicePtr ptr) {
        long p = Checks.ptr(ptr, "ptr");
        if (p == 0) {
            return;
        }
        PoolFront pool = c.pool();
        // Off the ledger before the driver frees it: an entry left behind would be freed again by a sweep.
        Ledger.Entry e = c.ledger().remove(p, AllocSites.FREE_NOT_RECORDED);
        if (e == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "free", explainNotLive(p) + "; nothing was freed");
        }
        if (pool.owns(p)) {
            pool.release(e, pool.freeSite(e, AllocSites.FREE_NOT_RECORDED));
            return;
        }
        // A capture whose mode forbids cuMemFree gets the driver's own refusal, which invalidates it,
        // quarantine or not: a free the quarantine deferred would pass here and fail without one.
        if (c.quarantine().on() && !pool.forbidsFree()) {
            // The quarantine's reports and the free's red-zone scan name where it was freed; nothing else does.
            String freeSite = c.sites().freeSite(e, c.ledger());
            c.quarantine().hold(p);
            c.run(() -> c.quarantine().admit(new Quarantine.Held(e, freeSite, -1, () -> memFreeHeld(e)),
                    pool.quarantineWaits()), () -> "free " + ptr);
            return;
        }
        var jfr = Jfr.beginFree();
        memFree(p, () -> "free " + ptr, () -> c.ledger().add(e));
        Jfr.free(jfr, p, e.allocation().bytes());
    }

    /**
     * Frees device memory the caller has taken off its table; a teardown status is no error. After
     * an argument error (a free during a capture, say) the memory is still allocated, so
     * {@code putBack} returns it to the table.
     */
    private void memFree(long p, Supplier<String> what, Runnable putBack) {
        try {
            c.driver().memFree(p);
        } catch (GpuException x) {
            if (!x.error().isTeardown()) {
                RuntimeException r = c.fail(x, what.get());
                if (r == x) {
                    putBack.run();
                }
                throw r;
            }
        }
    }

    /** Gives a range the quarantine held back to the driver. */
    private void memFreeHeld(Ledger.Entry e) {
        var jfr = Jfr.beginFree();
        c.driver().memFree(e.base());
        Jfr.free(jfr, e.base(), e.allocation().bytes());
    }

    private String explainNotLive(long p) {
        ArenaTable.Chunk chunk = c.arenas().get(p);
        if (chunk != null) {
            return "ptr=0x" + Long.toHexString(p) + " is an arena chunk of " + chunk.bytes
                    + " bytes from allocArena: free it with freeArena";
        }
        return c.ledger().explainNotLive(p);
    }

    List<Allocation> liveAllocations() {
        return c.ledger().snapshot().stream().map(Ledger.Entry::allocation).toList();
    }

    String allocReport(int topN, long minMb) {
        return c.ledger().report(topN, minMb, c.sites()) + c.adoptions().report();
    }

    void markLeaksReported() {
        for (Ledger.Entry e : c.ledger().snapshot()) {
            c.reportedLeaks().add(e.allocation().index());
        }
    }

    int sweepUnreleased() {
        int freed = 0;
        GpuException first = null;
        for (Ledger.Entry e : c.ledger().drain("sweepUnreleased called at " + CallSites.caller())) {
            if (c.pool().owns(e.base())) {
                c.pool().release(e, "sweepUnreleased");
                freed++;
                continue;
            }
            var jfr = Jfr.beginFree();
            try {
                c.driver().memFree(e.base());
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
            c.quarantine().flush(true);
        } catch (GpuException x) {
            if (first == null) {
                first = x;
            }
        }
        if (first != null) {
            throw c.fail(first, "sweepUnreleased");
        }
        return freed;
    }

    // ---- arena chunks and adopted memory: never on the ledger --------------------------------------

    DevicePtr allocArena(long bytes) {
        Checks.size(bytes, "bytes", "allocArena");
        long p;
        var jfr = Jfr.beginAlloc();
        try {
            p = c.driver().memAlloc(bytes);
        } catch (GpuException e) {
            throw allocFailed(e, "allocArena", bytes, 0, CallSites.caller());
        }
        c.arenas().add(p, bytes);
        Jfr.alloc(jfr, p, bytes, "arena chunk", false);
        return new DevicePtr(p);
    }

    void freeArena(DevicePtr ptr) {
        long p = Checks.ptr(ptr, "ptr");
        if (p == 0) {
            return;
        }
        ArenaTable.Chunk chunk = c.arenas().remove(p);
        if (chunk == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "freeArena", "ptr=" + ptr
                    + " is not a live arena chunk from allocArena (" + c.ledger().explainNotLive(p) + "); nothing was freed");
        }
        var jfr = Jfr.beginFree();
        memFree(p, () -> "freeArena " + ptr, () -> c.arenas().add(p, chunk.bytes));
        Jfr.free(jfr, p, chunk.bytes);
    }

    void noteArenaUse(DevicePtr chunk, long usedBytes) {
        long p = Checks.ptr(chunk, "chunk");
        ArenaTable.Chunk ch = c.arenas().get(p);
        if (ch == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "noteArenaUse", "chunk=" + chunk + " is not a live arena chunk");
        }
        if (usedBytes < 0 || usedBytes > ch.bytes) {
            throw new IllegalArgumentException("noteArenaUse(chunk=" + chunk + ", usedBytes=" + usedBytes
                    + "): must be in [0, " + ch.bytes + "], the chunk's size");
        }
        ch.used.set(usedBytes);
    }

    DevicePtr adoptDeviceMemory(long address, long bytes, String label) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("adoptDeviceMemory(bytes=" + bytes + "): must be >= 1");
        }
        if (label == null || label.isBlank()) {
            throw new IllegalArgumentException("adoptDeviceMemory(label=" + label + "): name what the memory is");
        }
        Ledger.Entry own = c.ledger().overlapping(address, bytes);
        String conflict = own != null ? "it overlaps the live allocation " + own.describe()
                : c.arenas().overlaps(address, bytes) ? "it overlaps an arena chunk"
                : c.pinned().coversAddress(address, 1) ? "it is page-locked host memory" : null;
        return c.adoptions().adopt(address, bytes, label, CallSites.caller(), conflict).ptr();
    }

    // ---- red zones ---------------------------------------------------------------------------------

    /** {@return how many of the ledger's red zones were written} Each is logged. */
    int scanRedzones() {
        List<RedZoneViolation> bad = findViolations("scanRedzones");
        for (RedZoneViolation v : bad) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: " + v);
        }
        return bad.size();
    }

    /** {@return the ledger's red zones that were written, for {@code call}} Empty when red zones are off. */
    List<RedZoneViolation> findViolations(String call) {
        if (!c.redZones().on()) {
            return List.of();
        }
        return c.get(() -> List.copyOf(c.redZones().find(c.driver(), c.ledger().snapshot(), this::stillLive)), () -> call);
    }

    List<RedZoneViolation> freedRedzoneViolations() {
        c.settleQuarantine("freedRedzoneViolations");
        return c.quarantine().violations();
    }

    void poisonRedzones(long lo, long hi) {
        if (!c.redZones().on()) {
            return;
        }
        c.run(() -> c.redZones().poison(c.driver(), c.ledger().snapshot(), lo, hi, this::stillLive, c.pool().capturing()),
                () -> "poisonRedzones");
    }

    private boolean stillLive(Ledger.Entry e) {
        for (Ledger.Entry x : c.ledger().snapshot()) {
            if (x.allocation().equals(e.allocation())) {
                return true;
            }
        }
        return false;
    }

    // ---- the device's memory -----------------------------------------------------------------------

    /** {@return the driver's free memory, plus what the runtime holds free (arena slack, the pool's cache)} */
    long freeMemory() {
        return memInfo("freeMemory").free() + c.arenas().slackBytes() + c.pool().cachedBytes();
    }

    long deviceFreeMemory() {
        return memInfo("deviceFreeMemory").free();
    }

    private MemInfo memInfo(String call) {
        return c.get(() -> c.driver().memGetInfo(), () -> call);
    }

    // ---- page-locked host memory -------------------------------------------------------------------

    MemorySegment allocHostPinned(long bytes) {
        Checks.size(bytes, "bytes", "allocHostPinned");
        MemorySegment seg = c.get(() -> c.driver().memHostAlloc(bytes, HOST_DEVICEMAP), () -> "allocHostPinned " + bytes + " B");
        if (seg.address() != 0) {
            c.pinned().add(seg);
            c.resources().pinned(seg);
        }
        return seg;
    }

    /** Inside a releaser's frame: copies that found the range pinned may still run, so it waits for them. */
    void freeHostPinned(MemorySegment host) {
        Objects.requireNonNull(host, "host");
        if (host.address() == 0) {
            return;
        }
        MemorySegment reg = c.pinned().remove(host);
        if (reg == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "freeHostPinned", "host=0x" + Long.toHexString(host.address())
                    + " is not the base of memory allocHostPinned returned, or is already freed; nothing was freed");
        }
        Resources.Entry tracked = c.resources().gone(LiveResource.Kind.PINNED_HOST, reg.address());
        // Copies that found the range pinned before it left the registry finish first.
        c.gate().awaitGrace();
        try {
            c.release(() -> c.driver().memFreeHost(reg), () -> "freeHostPinned 0x" + Long.toHexString(host.address()));
        } catch (IllegalStateException e) {
            // The segment's scope is held by a downcall of the application's own: nothing was freed.
            c.pinned().add(reg);
            c.resources().restore(LiveResource.Kind.PINNED_HOST, reg.address(), tracked);
            throw new IllegalStateException("freeHostPinned 0x" + Long.toHexString(host.address())
                    + ": the segment is in use by another thread; nothing was freed", e);
        }
    }

    DevicePtr hostPtrToDevice(MemorySegment host) {
        Checks.alive(host, "host");
        return new DevicePtr(c.get(() -> c.driver().memHostGetDevicePointer(host),
                () -> "hostPtrToDevice 0x" + Long.toHexString(host.address())));
    }
}
