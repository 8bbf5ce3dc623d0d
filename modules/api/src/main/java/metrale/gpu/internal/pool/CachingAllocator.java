// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.spi.Driver;
import metrale.gpu.internal.pool.CachingBlocks.Block;
import metrale.gpu.internal.pool.CachingBlocks.Chunk;
import metrale.gpu.internal.pool.CachingBlocks.Lane;

/**
 * The runtime's caching allocator, in the manner of PyTorch's CUDA caching allocator: chunks from
 * {@link Driver#memAlloc}, cut into blocks, each free block kept in a size-ordered bin of the
 * stream it was freed on, split on allocation and coalesced with free neighbours on free.
 *
 * <p><b>Sizes.</b> Requests round up to {@value #MIN_BLOCK} bytes. Up to {@value #SMALL_SIZE}
 * bytes come from the small bins, whose chunks are {@value #SMALL_CHUNK} bytes; larger requests
 * from the large bins, whose chunks are {@value #LARGE_CHUNK} bytes for requests under
 * {@value #MIN_LARGE_ALLOC} and the request rounded up to {@value #ROUND_LARGE} bytes above it. A
 * small block is split when at least {@value #MIN_BLOCK} bytes remain, a large one when more than
 * {@value #SMALL_SIZE} remain (PyTorch's rule: large remainders stay useful).
 *
 * <p><b>Stream order.</b> A free block sits in the bins of the stream it was freed on, with the
 * sequence number of its free. On that stream it is reusable at once. Another stream may take it
 * once the freeing stream's work up to that free is known complete: the host synchronized the
 * stream or the device, or a fence event the allocator recorded on the freeing stream after the
 * free has completed. Fences are recorded lazily, when another stream first misses in its own
 * bins, so a free costs no driver call. A block marked by {@link #recordStream} goes to no bin
 * until the events recorded at its free on each extra stream have completed. While any capture is
 * live, no event is recorded: those of a free wait until no capture is live (PyTorch defers them
 * so too), and the block stays pending until then, since a record on a capturing stream would
 * join its graph and a query of that event fail with {@code CAPTURED_EVENT (907)}.
 *
 * <p>Invariants: the blocks of a chunk tile it in address order; a free block is either in
 * exactly one bin or in {@link #pending}; two neighbouring free blocks in the bins of the same
 * stream are merged.
 */
public final class CachingAllocator implements StreamAllocator {

    /** Requests round up to this, so every block keeps the 256-byte alignment of its chunk. */
    static final long MIN_BLOCK = 512;
    /** The largest request served from the small bins. */
    static final long SMALL_SIZE = 1 << 20;
    /** The chunk size of the small bins. */
    static final long SMALL_CHUNK = 2 << 20;
    /** The chunk size of the large bins for requests below {@link #MIN_LARGE_ALLOC}. */
    static final long LARGE_CHUNK = 20 << 20;
    /** From this size on, a large request gets its own chunk, rounded to {@link #ROUND_LARGE}. */
    static final long MIN_LARGE_ALLOC = 10 << 20;
    /** The rounding of own chunks. */
    static final long ROUND_LARGE = 2 << 20;

    /** {@code CU_EVENT_DISABLE_TIMING}: fences only order, and untimed events are cheaper. */
    private static final int EVENT_FLAGS = 2;

    private final Driver driver;
    private final BooleanSupplier anyCapture;
    private final PoolHistory history = new PoolHistory();
    private final Map<Long, Block> live = new HashMap<>();
    private final Map<Long, Lane> lanes = new HashMap<>();
    /** Lanes of destroyed streams that still hold free blocks. */
    private final List<Lane> retired = new ArrayList<>();
    private final TreeMap<Long, Chunk> chunks = new TreeMap<>(Long::compareUnsigned);
    private final List<Block> pending = new ArrayList<>();
    private final ArrayDeque<Long> spareEvents = new ArrayDeque<>();
    private final Block probe = new Block(null, 0, 0);
    private long seq;

    private long reserved;
    private long allocated;
    private long requested;
    private long peakReserved;
    private long peakAllocated;
    private long allocs;
    private long hits;
    private long driverAllocs;
    private long driverFrees;
    private long flushes;

    /**
     * @param driver     the driver whose memory and events it uses
     * @param anyCapture whether any stream may be capturing now; fences are not recorded then,
     *                   since a record on a capturing stream would join the graph
     */
    public CachingAllocator(Driver driver, BooleanSupplier anyCapture) {
        this.driver = driver;
        this.anyCapture = anyCapture;
    }

    @Override
    public String kind() {
        return "caching";
    }

    /** {@return {@code bytes} rounded up to the block granularity} */
    static long roundSize(long bytes) {
        return bytes < MIN_BLOCK ? MIN_BLOCK : (bytes + MIN_BLOCK - 1) & -MIN_BLOCK;
    }

    /** {@return the chunk size for a rounded request} */
    static long chunkSize(long size) {
        if (size <= SMALL_SIZE) {
            return SMALL_CHUNK;
        }
        if (size < MIN_LARGE_ALLOC) {
            return LARGE_CHUNK;
        }
        return (size + ROUND_LARGE - 1) & -ROUND_LARGE;
    }

    @Override
    public synchronized long alloc(long bytes, long stream, String site, long index) {
        if (bytes <= 0 || bytes > Long.MAX_VALUE - ROUND_LARGE) {
            throw new GpuException(CudaError.INVALID_VALUE, "pool.alloc", "bytes=" + bytes + ": must be in [1, 2^63 - 2^21]");
        }
        if (!pending.isEmpty()) {
            processPending(false);
        }
        long size = roundSize(bytes);
        boolean small = size <= SMALL_SIZE;
        Lane own = lane(stream);
        Block b = bestFit(own.bins(small), size, Long.MAX_VALUE);
        if (b == null) {
            b = fromOtherStreams(stream, small, size);
        }
        if (b != null) {
            hits++;
            b.lane.bins(small).remove(b);
            b.lane = null;
        } else {
            b = newChunk(size, small, stream, bytes, site);
        }
        long rest = b.size - size;
        if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) {
            Block r = new Block(b.chunk, b.ptr + size, rest);
            r.prev = b;
            r.next = b.next;
            if (b.next != null) {
                b.next.prev = r;
            }
            b.next = r;
            b.size = size;
            r.stream = b.stream;
            r.freeSeq = b.freeSeq;
            insert(r, laneOf(r.stream));
        }
        b.allocated = true;
        b.stream = stream;
        b.requested = bytes;
        b.site = site;
        b.index = index;
        b.useCount = 0;
        live.put(b.ptr, b);
        allocs++;
        allocated += b.size;
        requested += bytes;
        peakAllocated = Math.max(peakAllocated, allocated);
        history.add("alloc", b.ptr, b.size, stream, site, reserved, allocated);
        return b.ptr;
    }

    /** {@return the smallest block of {@code bins} of at least {@code size} freed at or before {@code maxSeq}, or null} */
    private Block bestFit(TreeSet<Block> bins, long size, long maxSeq) {
        probe.size = size;
        probe.ptr = 0;
        for (Block b : bins.tailSet(probe, true)) {
            if (b.freeSeq <= maxSeq) {
                return b;
            }
        }
        return null;
    }

    /** Takes the best block other streams' bins hold that is known safe for every stream, refreshing their fences. */
    private Block fromOtherStreams(long stream, boolean small, long size) {
        Block best = null;
        for (Lane l : lanes.values()) {
            if (l.stream != stream && !l.empty()) {
                best = CachingBlocks.better(best, candidate(l, small, size));
            }
        }
        for (Lane l : retired) {
            best = CachingBlocks.better(best, candidate(l, small, size));
        }
        return best;
    }

    private Block candidate(Lane l, boolean small, long size) {
        refreshFence(l);
        return bestFit(l.bins(small), size, l.safeSeq);
    }

    /** Sees whether a lane's fence completed, and records one when frees are not yet covered. */
    private void refreshFence(Lane l) {
        if (l.fenceEvent != 0 && l.fenceSeq > l.safeSeq) {
            if (driver.eventQuery(l.fenceEvent)) {
                l.safeSeq = l.fenceSeq;
            } else {
                return;
            }
        }
        if (l.lastFreeSeq > l.safeSeq && !l.retired && !anyCapture.getAsBoolean()) {
            if (l.fenceEvent == 0) {
                l.fenceEvent = takeEvent();
            }
            driver.eventRecord(l.fenceEvent, l.stream);
            l.fenceSeq = l.lastFreeSeq;
        }
    }

    private Block newChunk(long size, boolean small, long stream, long bytes, String site) {
        long want = chunkSize(size);
        long base;
        try {
            base = driverAlloc(want);
        } catch (GpuException e) {
            if (e.error() != CudaError.OUT_OF_MEMORY) {
                throw e;
            }
            history.add("oom", 0, want, stream, site, reserved, allocated);
            // Out of memory: give the cache back and retry, first the usual chunk, then just the block.
            releaseCached(true);
            flushes++;
            base = 0;
            for (long tryBytes : want > size ? new long[] {want, size} : new long[] {size}) {
                try {
                    base = driverAlloc(tryBytes);
                    want = tryBytes;
                    break;
                } catch (GpuException again) {
                    if (again.error() != CudaError.OUT_OF_MEMORY) {
                        throw again;
                    }
                    if (tryBytes == size) {
                        throw outOfMemory(again, bytes, size, site);
                    }
                }
            }
        }
        Chunk c = new Chunk(base, want, small, stream);
        Block b = new Block(c, base, want);
        b.stream = stream;
        c.first = b;
        chunks.put(base, c);
        reserved += want;
        peakReserved = Math.max(peakReserved, reserved);
        history.add("chunk_alloc", base, want, stream, site, reserved, allocated);
        return b;
    }

    private long driverAlloc(long bytes) {
        long p = driver.memAlloc(bytes);
        driverAllocs++;
        return p;
    }

    private GpuException outOfMemory(GpuException e, long bytes, long size, String site) {
        StringBuilder d = new StringBuilder();
        d.append("pool: requested ").append(bytes).append(" bytes (").append(size).append(" rounded) at ").append(site)
                .append(" after freeing the cache and retrying; the pool reserves ").append(reserved)
                .append(" bytes, ").append(allocated).append(" allocated in ").append(live.size())
                .append(" block(s), ").append(reserved - allocated).append(" free; allocated by site:");
        Map<String, Long> bySite = CachingBlocks.bySite(live.values());
        bySite.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(10)
                .forEach(en -> d.append(' ').append(en.getKey()).append('=').append(en.getValue()).append(" B;"));
        if (bySite.size() > 10) {
            d.append(" ... ").append(bySite.size() - 10).append(" more site(s);");
        }
        d.append(" the device reports ").append(deviceFree()).append(" bytes free; driver: ").append(e.getMessage());
        return new GpuException(CudaError.OUT_OF_MEMORY, e.rawCode(), "pool.alloc", d.toString(), e);
    }

    private String deviceFree() {
        try {
            return String.valueOf(driver.memGetInfo().free());
        } catch (GpuException x) {
            return "? (" + x.getMessage() + ")";
        }
    }

    @Override
    public synchronized boolean owns(long ptr) {
        return live.containsKey(ptr);
    }

    @Override
    public synchronized long streamOf(long ptr) {
        return block(ptr, "streamOf").stream;
    }

    private Block block(long ptr, String op) {
        Block b = live.get(ptr);
        if (b == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "pool." + op, "ptr=0x" + Long.toHexString(ptr) + " is not a live pool block");
        }
        return b;
    }

    @Override
    public synchronized void free(long ptr, long stream) {
        Block b = block(ptr, "free");
        int extra = 0;
        for (int i = 0; i < b.useCount; i++) {
            if (b.uses[i] != stream) {
                extra++;
            }
        }
        long[] evs = null;
        long[] deferred = null;
        if (extra > 0 && anyCapture.getAsBoolean()) {
            evs = new long[0];
            deferred = new long[extra];
            int k = 0;
            for (int i = 0; i < b.useCount; i++) {
                if (b.uses[i] != stream) {
                    deferred[k++] = b.uses[i];
                }
            }
        } else if (extra > 0) {
            // Record first, so a failed record leaves the block live and the caller's free refused.
            evs = new long[extra];
            int k = 0;
            try {
                for (int i = 0; i < b.useCount; i++) {
                    if (b.uses[i] != stream) {
                        long ev = takeEvent();
                        evs[k++] = ev;
                        driver.eventRecord(ev, b.uses[i]);
                    }
                }
            } catch (GpuException e) {
                for (int i = 0; i < k; i++) {
                    spareEvents.push(evs[i]);
                }
                throw e;
            }
        }
        live.remove(ptr);
        allocated -= b.size;
        requested -= b.requested;
        history.add("free", b.ptr, b.size, stream, b.site, reserved, allocated);
        b.allocated = false;
        b.site = "";
        b.index = -1;
        b.requested = 0;
        b.stream = stream;
        b.useCount = 0;
        if (evs != null) {
            b.events = evs;
            b.deferred = deferred;
            pending.add(b);
        } else {
            binFree(b);
        }
    }

    /** Gives a free block a sequence number on its stream, merges it with free neighbours and bins it. */
    private void binFree(Block b) {
        Lane l = laneOf(b.stream);
        b.freeSeq = ++seq;
        l.lastFreeSeq = b.freeSeq;
        for (Block n : new Block[] {b.prev, b.next}) {
            if (n != null && !n.allocated && n.lane == l) {
                l.bins(b.chunk.small).remove(n);
                n.lane = null;
                if (n == b.prev) {
                    b.ptr = n.ptr;
                    b.prev = n.prev;
                    if (n.prev != null) {
                        n.prev.next = b;
                    } else {
                        b.chunk.first = b;
                    }
                } else {
                    b.next = n.next;
                    if (n.next != null) {
                        n.next.prev = b;
                    }
                }
                b.size += n.size;
                // The merged block is as safe as its least safe part.
                b.freeSeq = Math.max(b.freeSeq, n.freeSeq);
            }
        }
        insert(b, l);
    }

    private void insert(Block b, Lane l) {
        b.lane = l;
        l.bins(b.chunk.small).add(b);
    }

    /** Bins the pending blocks whose events completed; with {@code wait}, waits for them all. */
    private void processPending(boolean wait) {
        boolean capture = anyCapture.getAsBoolean();
        for (Iterator<Block> it = pending.iterator(); it.hasNext(); ) {
            Block b = it.next();
            if (b.deferred != null) {
                if (capture) {
                    continue;
                }
                recordDeferred(b, -1);
            }
            boolean done = true;
            for (long ev : b.events) {
                if (wait) {
                    driver.eventSynchronize(ev);
                } else if (!driver.eventQuery(ev)) {
                    done = false;
                    break;
                }
            }
            if (done) {
                for (long ev : b.events) {
                    spareEvents.push(ev);
                }
                b.events = null;
                it.remove();
                binFree(b);
            }
        }
    }

    /**
     * Records the deferred events of a pending block, each on its stream as soon as it is recorded
     * (so a failure leaves the rest deferred); with {@code only >= 0}, just that stream's.
     */
    private void recordDeferred(Block b, long only) {
        long[] ds = b.deferred;
        long[] keep = new long[ds.length];
        int left = 0;
        for (int i = 0; i < ds.length; i++) {
            if (only >= 0 && ds[i] != only) {
                keep[left++] = ds[i];
                continue;
            }
            long ev = takeEvent();
            try {
                driver.eventRecord(ev, ds[i]);
            } catch (GpuException e) {
                spareEvents.push(ev);
                for (int j = i; j < ds.length; j++) {
                    keep[left++] = ds[j];
                }
                b.deferred = java.util.Arrays.copyOf(keep, left);
                throw e;
            }
            b.events = java.util.Arrays.copyOf(b.events, b.events.length + 1);
            b.events[b.events.length - 1] = ev;
        }
        b.deferred = left == 0 ? null : java.util.Arrays.copyOf(keep, left);
    }

    @Override
    public synchronized void recordStream(long ptr, long stream) {
        Block b = block(ptr, "recordStream");
        // The block's own stream is kept too: a free on another stream must wait for its work.
        for (int i = 0; i < b.useCount; i++) {
            if (b.uses[i] == stream) {
                return;
            }
        }
        if (b.uses == null || b.useCount == b.uses.length) {
            b.uses = java.util.Arrays.copyOf(b.uses == null ? new long[0] : b.uses, b.useCount + 2);
        }
        b.uses[b.useCount++] = stream;
    }

    @Override
    public synchronized void emptyCache() {
        flushes++;
        releaseCached(true);
    }

    /** Frees every chunk whose blocks are all free and binned; with {@code wait}, pending blocks are waited for first. */
    private void releaseCached(boolean wait) {
        processPending(wait);
        for (Iterator<Chunk> it = chunks.values().iterator(); it.hasNext(); ) {
            Chunk c = it.next();
            boolean free = true;
            for (Block b = c.first; b != null; b = b.next) {
                if (b.allocated || b.lane == null) {
                    free = false;
                    break;
                }
            }
            if (!free) {
                continue;
            }
            // cuMemFree waits for the work still using the chunk, so no block needs a fence.
            driver.memFree(c.base);
            driverFrees++;
            for (Block b = c.first; b != null; b = b.next) {
                b.lane.bins(c.small).remove(b);
                b.lane = null;
            }
            it.remove();
            reserved -= c.bytes;
            history.add("chunk_free", c.base, c.bytes, c.stream, "", reserved, allocated);
        }
        retired.removeIf(Lane::empty);
    }

    @Override
    public synchronized void streamSynchronized(long stream) {
        Lane l = lanes.get(stream);
        if (l != null) {
            l.safeSeq = l.lastFreeSeq;
        }
    }

    @Override
    public synchronized void deviceSynchronized() {
        for (Lane l : lanes.values()) {
            l.safeSeq = l.lastFreeSeq;
        }
        for (Lane l : retired) {
            l.safeSeq = l.lastFreeSeq;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>When the pool holds blocks of the stream, it waits for the stream first (not during a
     * capture, which a sync would invalidate): then every block freed on it is safe for any stream,
     * and its live blocks are re-owned by the legacy stream, so no later free or reuse names a
     * handle CUDA may give to a new stream.
     */
    @Override
    public synchronized void streamDestroyed(long stream) {
        Lane l = lanes.remove(stream);
        boolean holds = l != null && !l.empty();
        for (Block b : live.values()) {
            holds |= b.stream == stream || b.uses(stream);
        }
        for (Block b : pending) {
            holds |= b.stream == stream;
            if (b.deferred != null) {
                for (long u : b.deferred) {
                    if (u == stream) {
                        // Its event must be recorded while the handle lives; a stream being
                        // destroyed is not expected to capture (its capture would die with it).
                        recordDeferred(b, stream);
                        break;
                    }
                }
            }
        }
        if (!holds) {
            if (l != null && l.fenceEvent != 0) {
                // The lane goes; its fence event stays the pool's, to be reused or destroyed at close.
                spareEvents.add(l.fenceEvent);
                l.fenceEvent = 0;
            }
            return;
        }
        if (!anyCapture.getAsBoolean()) {
            driver.streamSynchronize(stream);
            if (l != null) {
                l.safeSeq = l.lastFreeSeq;
            }
        }
        if (l != null && !l.empty()) {
            l.retired = true;
            retired.add(l);
        }
        for (Block b : live.values()) {
            if (b.stream == stream) {
                b.stream = 0;
            }
            // Waited for above, so the mark is spent; a free must not record on the dead handle.
            b.dropUse(stream);
        }
        for (Block b : pending) {
            if (b.stream == stream) {
                b.stream = 0;
            }
        }
    }

    private Lane lane(long stream) {
        Lane l = lanes.get(stream);
        if (l == null) {
            l = new Lane(stream);
            lanes.put(stream, l);
        }
        return l;
    }

    /** The lane a free block of {@code stream} goes to: the live stream's, or the retired lane of a destroyed one. */
    private Lane laneOf(long stream) {
        Lane l = lanes.get(stream);
        if (l != null) {
            return l;
        }
        for (Lane r : retired) {
            if (r.stream == stream) {
                return r;
            }
        }
        return lane(stream);
    }

    private long takeEvent() {
        Long ev = spareEvents.poll();
        return ev != null ? ev : driver.eventCreate(EVENT_FLAGS);
    }

    @Override
    public synchronized long cachedBytes() {
        return reserved - allocated;
    }

    @Override
    public synchronized PoolStats stats() {
        long largest = 0;
        for (Lane l : lanes.values()) {
            largest = Math.max(largest, l.largest());
        }
        for (Lane l : retired) {
            largest = Math.max(largest, l.largest());
        }
        long cached = reserved - allocated;
        double frag = cached == 0 ? 0 : 1 - (double) largest / cached;
        return new PoolStats(kind(), reserved, allocated, requested, peakReserved, peakAllocated, cached, largest,
                Math.max(0, frag), live.size(), chunks.size(), allocs, hits, driverAllocs, driverFrees, flushes, CachingBlocks.bySite(live.values()));
    }

    @Override
    public synchronized PoolSnapshot snapshot() {
        List<PoolSnapshot.Chunk> cs = new ArrayList<>(chunks.size());
        for (Chunk c : chunks.values()) {
            List<PoolSnapshot.Block> bs = new ArrayList<>();
            for (Block b = c.first; b != null; b = b.next) {
                bs.add(new PoolSnapshot.Block(b.ptr, b.size, b.allocated, b.requested, b.site, b.index, b.stream));
            }
            cs.add(new PoolSnapshot.Chunk(c.base, c.bytes, c.stream, bs));
        }
        return new PoolSnapshot(kind(), stats(), cs, history.events());
    }

    @Override
    public synchronized void close(BiConsumer<String, Runnable> step) {
        List<Long> evs = new ArrayList<>(spareEvents);
        for (Block b : pending) {
            for (long ev : b.events) {
                evs.add(ev);
            }
        }
        List<Lane> all = new ArrayList<>(lanes.values());
        all.addAll(retired);
        for (Lane l : all) {
            if (l.fenceEvent != 0) {
                evs.add(l.fenceEvent);
            }
        }
        for (Chunk c : chunks.values()) {
            step.accept("cuMemFree_v2 pool chunk 0x" + Long.toHexString(c.base), () -> driver.memFree(c.base));
        }
        for (long ev : evs) {
            step.accept("cuEventDestroy_v2 pool event", () -> driver.eventDestroy(ev));
        }
        chunks.clear();
        live.clear();
        lanes.clear();
        retired.clear();
        pending.clear();
        spareEvents.clear();
        reserved = 0;
        allocated = 0;
        requested = 0;
    }

    @Override
    public synchronized String toString() {
        return String.format(Locale.ROOT, "CachingAllocator[reserved=%d, allocated=%d, chunks=%d, live=%d]",
                reserved, allocated, chunks.size(), live.size());
    }
}
