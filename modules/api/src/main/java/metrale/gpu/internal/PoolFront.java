// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.MemoryPool;
import metrale.gpu.PoolRace;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.Stream;
import metrale.gpu.internal.pool.AsyncAllocator;
import metrale.gpu.internal.pool.CachingAllocator;
import metrale.gpu.internal.pool.StreamAllocator;
import metrale.gpu.spi.Driver;

/**
 * The runtime core's side of the memory pool: the ledger, red zones, call sites, capture and the
 * fault latch around a {@link StreamAllocator}, which only manages memory. Every block is a
 * {@link Ledger} entry, so the ledger's queries, sweeps and red-zone scans see pool blocks.
 *
 * <p>The allocator is created at first use: a runtime that never pools holds nothing.
 */
final class PoolFront implements MemoryPool {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /** How many freed blocks are remembered, so a race can name the previous life of its memory. */
    private static final int FREED_MEMORY = 4096;
    /** How many races are kept. */
    private static final int MAX_RACES = 1024;
    /** The largest block, red zone included, either allocator is asked for (2^62 B: more than any device has). */
    static final long MAX_BYTES = 1L << 62;

    /** How the runtime turns a stream into its driver handle, refusing dead ones. */
    interface Streams {
        long resolve(Stream stream, String op);
    }

    /** The runtime's fault latch for a failed driver call. */
    interface Failure {
        RuntimeException fail(GpuException e, String call);
    }

    /** A freed block: what a race report says about the memory's previous life. */
    private record Freed(long ptr, long bytes, long index, String site, String freeSite, long stream) {
        String describe() {
            return "0x" + Long.toHexString(ptr) + " (" + bytes + " B, #" + index + ", allocated at " + site
                    + ", freed at " + freeSite + " on " + new Stream(stream) + ")";
        }
    }

    private final String kind;
    private final Driver driver;
    private final Ledger ledger;
    private final RedZones redZones;
    private final Quarantine quarantine;
    private final Gate gate;
    private final AllocSites sites;
    private final Streams streams;
    private final Failure failure;
    private final boolean raceChecks;
    /** Whether the driver is told each block's bounds: the caching allocator's blocks are pieces of its chunks. */
    private final boolean carves;
    private final PoolCaptures captures = new PoolCaptures();
    private final Object init = new Object();
    private volatile StreamAllocator impl;
    private final TreeMap<Long, Freed> freed = new TreeMap<>(Long::compareUnsigned);
    private final List<PoolRace> races = new ArrayList<>();

    /**
     * @param allocator {@code cuda} for CUDA's stream-ordered allocator, anything else for the caching one
     * @param sites     the call-site policy of allocations and frees
     */
    PoolFront(String allocator, Driver driver, Ledger ledger, RedZones redZones, Quarantine quarantine, Gate gate,
              AllocSites sites, Streams streams, Failure failure) {
        this.kind = "cuda".equals(allocator) ? "cuda" : "caching";
        this.driver = driver;
        this.ledger = ledger;
        this.redZones = redZones;
        this.quarantine = quarantine;
        this.gate = gate;
        this.sites = sites;
        this.streams = streams;
        this.failure = failure;
        // CUDA's own allocator orders its reuse itself; only the caching allocator's reuse is checked.
        this.raceChecks = "caching".equals(kind) && driver.detectsStreamOrderViolations();
        this.carves = "caching".equals(kind);
        if (raceChecks) {
            // A kernel reaches the whole block its pointer lies in, so reuse of any byte of it is checked.
            // Before the pool's first block no launch can reach pool memory (fresh ranges), so nothing is looked up.
            driver.allocationExtents(addr -> impl == null ? null : ledger.extentOf(addr));
        }
    }

    private StreamAllocator impl() {
        StreamAllocator a = impl;
        if (a == null) {
            synchronized (init) {
                a = impl;
                if (a == null) {
                    try {
                        a = "cuda".equals(kind) ? new AsyncAllocator(driver, captures::any) : new CachingAllocator(driver, captures::any);
                    } catch (GpuException e) {
                        throw failure.fail(e, "pool (allocator=" + kind + ")");
                    }
                    impl = a;
                }
            }
        }
        return a;
    }

    /** {@return whether {@code ptr} is a live pool block} Cheap when the pool was never used. */
    boolean owns(long ptr) {
        StreamAllocator a = impl;
        return a != null && a.owns(ptr);
    }

    /** {@return the pool's cached bytes, free for its blocks but not for the driver} */
    long cachedBytes() {
        StreamAllocator a = impl;
        return a == null ? 0 : a.cachedBytes();
    }

    // The legacy default stream has two handles; the pool keeps one lane for it.
    private static long lane(long s) {
        return s == 1 ? 0 : s;
    }

    @Override
    public String kind() {
        return kind;
    }

    @Override
    public DevicePtr alloc(long bytes, Stream stream) {
        try (var _ = gate.enter("pool.alloc")) {
            return allocOn(bytes, stream, "pool.alloc");
        }
    }

    /** Allocates on {@code stream} for {@code op} ({@code alloc} when the pool is the default allocator). */
    DevicePtr allocOn(long bytes, Stream stream, String op) {
        Checks.size(bytes, "bytes", op);
        if (bytes == 0) {
            throw new GpuException(CudaError.INVALID_VALUE, op, "bytes=0: an allocation needs at least one byte");
        }
        long s = lane(streams.resolve(Objects.requireNonNull(stream, "stream"), op));
        String site = sites.get();
        long index = ledger.nextIndex();
        long pad = redZones.on() ? redZones.padFor(index) : 0;
        refuseDuringCapture(s, stream, op, "allocate");
        if (bytes > MAX_BYTES - pad) {
            // What cuMemAlloc answers for a size no device has; the caching allocator's rounding would overflow.
            throw new GpuException(CudaError.OUT_OF_MEMORY, op, "bytes=" + bytes + (pad > 0 ? " (+" + pad + " B red zone)" : "")
                    + ": larger than any device memory (at most " + MAX_BYTES + " B per block); nothing was allocated");
        }
        StreamAllocator a = impl();
        long p;
        try {
            p = allocRetrying(a, bytes + pad, s, site, index);
        } catch (GpuException e) {
            throw failure.fail(e, op + " " + bytes + " B on " + stream);
        }
        Ledger.Entry entry = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, site, index, false), pad);
        if (carves) {
            try {
                driver.poolBlockCarved(p, bytes + pad);
            } catch (GpuException e) {
                RuntimeException r = failure.fail(e, op + " (pool block bounds)");
                try {
                    a.free(p, s);
                } catch (RuntimeException suppressed) {
                    r.addSuppressed(suppressed);
                }
                throw r;
            }
        }
        if (pad > 0) {
            try {
                redZones.fill(driver, p, bytes, pad, capturing(), s);
            } catch (GpuException e) {
                RuntimeException r = failure.fail(e, op + " (red-zone fill)");
                // The backend forgets the block before the allocator may hand its address out again.
                blockReleased(p, s);
                try {
                    a.free(p, s);
                } catch (RuntimeException suppressed) {
                    r.addSuppressed(suppressed);
                }
                throw r;
            }
        }
        ledger.add(entry);
        Jfr.alloc(Jfr.beginAlloc(), p, bytes, site, false);
        if (raceChecks) {
            checkOrder(p, bytes + pad, s, stream, site);
        }
        return entry.allocation().ptr();
    }

    /** Out of memory first gives the quarantine back to the allocator, then tries once more. */
    private long allocRetrying(StreamAllocator a, long bytes, long s, String site, long index) {
        try {
            return a.alloc(bytes, s, site, index);
        } catch (GpuException e) {
            if (e.error() != CudaError.OUT_OF_MEMORY || capturing() || !quarantine.mayRelieve(bytes)) {
                throw e;
            }
            quarantine.flush(true);
            return a.alloc(bytes, s, site, index);
        }
    }

    /**
     * {@return whether a capture in flight forbids {@code cuMemFree} on this thread now} (a
     * {@code GLOBAL} capture anywhere, or a {@code THREAD_LOCAL} one of this thread)
     */
    boolean forbidsFree() {
        return captures.any() && captures.forbidding() != null;
    }

    /** {@return whether a capture is in flight on any stream of the runtime} */
    boolean capturing() {
        return captures.any();
    }

    /**
     * {@return whether the quarantine must neither sync, scan nor evict now}: during a capture (a
     * sync would break it) and once a sticky fault is latched (every sync reports it again; close
     * gives the memory back)
     */
    boolean quarantineWaits() {
        return capturing() || gate.latched() != null;
    }

    private void checkOrder(long p, long bytes, long s, Stream stream, String site) {
        String unordered;
        try {
            unordered = driver.streamOrderViolation(p, bytes, s);
        } catch (GpuException e) {
            throw failure.fail(e, "pool.alloc (stream-order check)");
        }
        if (unordered == null) {
            return;
        }
        StringBuilder prev = new StringBuilder();
        synchronized (freed) {
            Map.Entry<Long, Freed> lo = freed.floorEntry(p);
            Long from = lo != null && Long.compareUnsigned(lo.getKey() + lo.getValue().bytes(), p) > 0 ? lo.getKey() : p;
            for (Freed f : freed.subMap(from, true, p + bytes, false).values()) {
                prev.append(prev.isEmpty() ? "" : "; ").append(f.describe());
            }
        }
        PoolRace race = new PoolRace(new DevicePtr(p), bytes, stream, site,
                prev.isEmpty() ? "earlier blocks (not remembered)" : prev.toString(), unordered);
        synchronized (races) {
            if (races.size() < MAX_RACES) {
                races.add(race);
            }
        }
        LOG.log(System.Logger.Level.WARNING, "metrale-gpu: " + race);
    }

    @Override
    public void free(DevicePtr ptr) {
        try (var _ = gate.enter("pool.free")) {
            free(ptr, null, "pool.free");
        }
    }

    @Override
    public void free(DevicePtr ptr, Stream stream) {
        try (var _ = gate.enter("pool.free")) {
            free(ptr, Objects.requireNonNull(stream, "stream"), "pool.free");
        }
    }

    private void free(DevicePtr ptr, Stream stream, String op) {
        long p = Checks.ptr(ptr, "ptr");
        if (p == 0) {
            return;
        }
        long s = stream == null ? -1 : lane(streams.resolve(stream, op));
        Ledger.Entry e = ledger.remove(p, AllocSites.POOL_FREE_NOT_RECORDED);
        if (e == null) {
            throw new GpuException(CudaError.INVALID_VALUE, op, ledger.explainNotLive(p) + "; nothing was freed");
        }
        if (!owns(p)) {
            ledger.add(e);
            throw new GpuException(CudaError.INVALID_VALUE, op, "ptr=" + ptr + " is " + e.describe()
                    + ", not a pool block: free it with Gpu.free(ptr); nothing was freed");
        }
        release(e, s, stream, freeSite(e, AllocSites.POOL_FREE_NOT_RECORDED), op);
    }

    /**
     * {@return the site a pool free of {@code e}, just taken off the ledger, records} One stack walk
     * per pair, at the allocation: a walk costs more than the rest of a pool hit. Only where races are
     * checked, red zones are on or the quarantine holds freed blocks does the free's line matter
     * enough to walk for it, and then only for a block whose own site was walked; elsewhere it is
     * {@code notRecorded}.
     *
     * @param e           the block's entry
     * @param notRecorded what the ledger recorded for the free when it took the entry off
     */
    String freeSite(Ledger.Entry e, String notRecorded) {
        // A quarantined block's refusal and a race's report name the free's line.
        return raceChecks || quarantine.on() ? sites.freeSite(e, ledger) : notRecorded;
    }

    /**
     * Returns a block already taken off the ledger to the allocator, on its own stream.
     *
     * @param e        the block's ledger entry
     * @param freeSite where it was freed, or what freed it
     */
    void release(Ledger.Entry e, String freeSite) {
        release(e, -1, null, freeSite, "free");
    }

    /**
     * Refused (a capture) or failed in the allocator, the block is still allocated and goes back on
     * the ledger; once the quarantine holds it, it stays off the ledger whatever fails after.
     */
    private void release(Ledger.Entry e, long s, Stream stream, String freeSite, String op) {
        StreamAllocator a;
        long on;
        try {
            a = impl();
            on = s >= 0 ? s : a.streamOf(e.base());
            refuseDuringCapture(on, stream != null ? stream : new Stream(on), op, "free");
        } catch (RuntimeException x) {
            ledger.add(e);
            throw x;
        }
        if (quarantine.on()) {
            quarantine.hold(e.base());
            try {
                quarantine.admit(new Quarantine.Held(e, freeSite, on, () -> giveBack(a, e, on, freeSite)), quarantineWaits());
            } catch (GpuException x) {
                throw failure.fail(x, op + " " + e.allocation().ptr());
            }
            return;
        }
        try {
            handBack(a, e, on);
        } catch (GpuException x) {
            ledger.add(e);
            throw failure.fail(x, op + " " + e.allocation().ptr());
        }
        recordFree(e, on, freeSite);
    }

    /** Gives a block the quarantine held back to the allocator, on the lane it was freed on. */
    private void giveBack(StreamAllocator a, Ledger.Entry e, long on, String freeSite) {
        handBack(a, e, on);
        recordFree(e, on, freeSite);
    }

    /**
     * Gives block {@code e} back to the allocator on lane {@code on}, telling the backend first: once
     * the allocator holds the block, another thread may carve the same base, and a release told
     * after that would end the new block. An allocator that refuses the free keeps the block, so
     * the backend is told it is a block again.
     *
     * @throws GpuException the allocator's refusal
     */
    private void handBack(StreamAllocator a, Ledger.Entry e, long on) {
        long p = e.base();
        blockReleased(p, on);
        try {
            a.free(p, on);
        } catch (RuntimeException x) {
            if (carves) {
                try {
                    driver.poolBlockCarved(p, e.allocation().bytes() + e.pad());
                } catch (GpuException again) {
                    x.addSuppressed(again);
                }
            }
            throw x;
        }
    }

    /**
     * Tells a driver that checks bounds that the block at {@code p} goes back on lane {@code on}.
     * Before the allocator takes it back, so that no other thread can have carved the same base
     * yet. A driver failing here (a latched fault) only leaves the block's bounds standing: a stale
     * access to it then passes the simulator's bounds, and nothing legal faults.
     */
    private void blockReleased(long p, long on) {
        if (carves) {
            try {
                driver.poolBlockReleased(p, on);
            } catch (GpuException e) {
                LOG.log(System.Logger.Level.DEBUG, "metrale-gpu: pool block release of 0x" + Long.toHexString(p)
                        + " not told to the driver: " + e.getMessage());
            }
        }
    }

    private void recordFree(Ledger.Entry e, long on, String freeSite) {
        long p = e.base();
        if (raceChecks) {
            synchronized (freed) {
                freed.put(p, new Freed(p, e.allocation().bytes() + e.pad(), e.allocation().index(),
                        e.allocation().site(), freeSite, on));
                while (freed.size() > FREED_MEMORY) {
                    freed.pollFirstEntry();
                }
            }
        }
        Jfr.free(Jfr.beginFree(), p, e.allocation().bytes());
    }

    private void refuseDuringCapture(long s, Stream stream, String op, String what) {
        if (!captures.any()) {
            return;
        }
        String forbidding = captures.forbidding();
        if (forbidding != null) {
            // cuMemAlloc and cuMemFree answer 900 here and invalidate the capture; the pool only refuses.
            throw new GpuException(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, forbidding + ": the pool does not " + what
                    + " blocks then, as cuMemAlloc/cuMemFree do not; " + what + " it before beginCapture or after endCapture, "
                    + "or capture in RELAXED mode (the capture is still valid; nothing was " + (what.equals("free") ? "freed" : "allocated") + ")");
        }
        if (!driver.supportsCaptureQuery()) {
            return;
        }
        int status;
        try {
            status = driver.streamIsCapturing(s);
        } catch (GpuException e) {
            if (e.error() == CudaError.STREAM_CAPTURE_IMPLICIT) {
                // CUDA answers so for the legacy stream while a blocking stream captures: the legacy
                // stream itself is not capturing, and taking or returning a block enqueues nothing,
                // so the pool goes on as cuMemAlloc would (a miss under GLOBAL mode fails in the driver).
                return;
            }
            throw failure.fail(e, op + " (capture query of " + stream + ")");
        }
        if (status != 0) {
            throw new GpuException(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, stream + " is capturing a graph: the pool does "
                    + "not " + what + " blocks during a capture, since a block baked into a graph must outlive its "
                    + "replays; " + what + " it before beginCapture or after endCapture (the capture is still valid)");
        }
    }

    @Override
    public void recordStream(DevicePtr ptr, Stream stream) {
        try (var _ = gate.enter("pool.recordStream")) {
            long p = Checks.ptr(ptr, "ptr");
            long s = lane(streams.resolve(Objects.requireNonNull(stream, "stream"), "pool.recordStream"));
            if (!owns(p)) {
                throw new GpuException(CudaError.INVALID_VALUE, "pool.recordStream",
                        "ptr=" + ptr + " is not a live pool block (" + ledger.explainNotLive(p) + ")");
            }
            try {
                impl().recordStream(p, s);
            } catch (GpuException e) {
                throw failure.fail(e, "pool.recordStream " + ptr);
            }
        }
    }

    @Override
    public void emptyCache() {
        try (var _ = gate.enter("pool.emptyCache")) {
            StreamAllocator a = impl;
            if (a == null) {
                return;
            }
            try {
                a.emptyCache();
            } catch (GpuException e) {
                throw failure.fail(e, "pool.emptyCache");
            }
        }
    }

    @Override
    public PoolStats stats() {
        try (var _ = gate.enter("pool.stats")) {
            try {
                return impl().stats();
            } catch (GpuException e) {
                throw failure.fail(e, "pool.stats");
            }
        }
    }

    @Override
    public PoolSnapshot snapshot() {
        try (var _ = gate.enter("pool.snapshot")) {
            try {
                return impl().snapshot();
            } catch (GpuException e) {
                throw failure.fail(e, "pool.snapshot");
            }
        }
    }

    @Override
    public List<PoolRace> races() {
        try (var _ = gate.enter("pool.races")) {
            synchronized (races) {
                return List.copyOf(races);
            }
        }
    }

    // ---- what the runtime tells the pool ----------------------------------------------------------

    /** The host waited for {@code stream}. */
    void streamSynchronized(long stream) {
        StreamAllocator a = impl;
        if (a != null) {
            a.streamSynchronized(lane(stream));
        }
    }

    /** The host waited for the device. */
    void deviceSynchronized() {
        StreamAllocator a = impl;
        if (a != null) {
            a.deviceSynchronized();
        }
    }

    /** {@code stream} is about to be destroyed. */
    void streamDestroyed(long stream) {
        StreamAllocator a = impl;
        if (a != null) {
            try {
                quarantine.flushStream(lane(stream), capturing());
                a.streamDestroyed(lane(stream));
            } catch (GpuException e) {
                throw failure.fail(e, "destroyStream " + new Stream(stream) + " (pool fence)");
            }
        }
    }

    /**
     * A capture began on this thread: until it ends, allocations and frees are refused where its
     * mode forbids {@code cuMemAlloc}, and checked for their stream's capture status elsewhere.
     *
     * @param stream the capturing stream's driver handle
     * @param name   the stream as its user knows it
     * @param mode   its {@code CUstreamCaptureMode}
     */
    void captureBegan(long stream, String name, int mode) {
        captures.began(stream, name, mode);
    }

    /** The capture on {@code stream} ended, was aborted, or failed to end. */
    void captureEnded(long stream) {
        captures.ended(stream);
    }

    /**
     * Releases every chunk: at close, after the ledger's leaks went back to the pool.
     *
     * @param step runs one release and reports its failure
     */
    void close(BiConsumer<String, Runnable> step) {
        StreamAllocator a = impl;
        if (a != null) {
            a.close(step);
        }
    }

    @Override
    public String toString() {
        return "MemoryPool[" + kind + "]";
    }
}
