// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.spi.Driver;

/**
 * CUDA's own stream-ordered allocator behind the pool's API: {@code cuMemAllocAsync} and
 * {@code cuMemFreeAsync} on the device's default memory pool, whose release threshold is raised
 * so freed memory stays cached across synchronizations.
 *
 * <p>CUDA keeps the chunks and does the stream-ordered reuse itself (a block freed on one stream
 * is reused by another once ordered after the free). {@link #recordStream} is kept here: at the
 * free, an event recorded on each extra stream is waited for by the freeing stream, so the free is
 * ordered after their work. While any capture is live, such a free is deferred whole until none is
 * (the record would join a capturing stream's graph and the wait pull the freeing stream into it);
 * the memory stays reserved until then. Reserved and used bytes come from the pool's attributes; the largest
 * cached block and fragmentation are not known and read 0.
 */
public final class AsyncAllocator implements StreamAllocator {

    /** {@code CU_EVENT_DISABLE_TIMING}. */
    private static final int EVENT_FLAGS = 2;

    private record Live(long bytes, long stream, String site, long[] uses) {
    }

    /** A free deferred past the live captures. */
    private record Deferred(long ptr, long stream, long[] uses) {
    }

    private final Driver driver;
    private final PoolHistory history = new PoolHistory();
    private final Map<Long, Live> live = new HashMap<>();
    private final ArrayDeque<Long> spareEvents = new ArrayDeque<>();
    private final BooleanSupplier anyCapture;
    private final List<Deferred> deferred = new ArrayList<>();
    private long allocatedBytes;
    private long peakAllocated;
    private long allocs;
    private long driverAllocs;
    private long driverFrees;
    private long flushes;
    /** The reserved bytes when last read: the history records it without a driver call per event. */
    private long lastReserved;

    /**
     * @param driver     a driver with {@link Driver#supportsMemPools()}
     * @param anyCapture whether any stream may be capturing now
     * @throws GpuException {@code NOT_SUPPORTED} when it has no stream-ordered allocator
     */
    public AsyncAllocator(Driver driver, BooleanSupplier anyCapture) {
        if (!driver.supportsMemPools()) {
            throw new GpuException(CudaError.NOT_SUPPORTED, "allocator=cuda",
                    "the " + driver.name() + " driver has no stream-ordered allocator (cuMemAllocAsync, CUDA 11.2+); "
                            + "use allocator=caching");
        }
        this.driver = driver;
        this.anyCapture = anyCapture;
        // Keep every freed byte: the default threshold 0 returns memory to the device at each sync.
        driver.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, -1L);
    }

    @Override
    public String kind() {
        return "cuda";
    }

    @Override
    public synchronized long alloc(long bytes, long stream, String site, long index) {
        flushDeferred();
        long p;
        try {
            p = driver.memAllocAsync(bytes, stream);
        } catch (GpuException e) {
            if (e.error() != CudaError.OUT_OF_MEMORY) {
                throw e;
            }
            history.add("oom", 0, bytes, stream, site, reserved(), allocatedBytes);
            flushes++;
            trim();
            try {
                p = driver.memAllocAsync(bytes, stream);
            } catch (GpuException again) {
                if (again.error() != CudaError.OUT_OF_MEMORY) {
                    throw again;
                }
                throw outOfMemory(again, bytes, site);
            }
        }
        driverAllocs++;
        allocs++;
        live.put(p, new Live(bytes, stream, site, null));
        allocatedBytes += bytes;
        peakAllocated = Math.max(peakAllocated, allocatedBytes);
        history.add("alloc", p, bytes, stream, site, lastReserved, allocatedBytes);
        return p;
    }

    private GpuException outOfMemory(GpuException e, long bytes, String site) {
        StringBuilder d = new StringBuilder("pool (cuMemAllocAsync): requested ").append(bytes).append(" bytes at ")
                .append(site).append(" after trimming the pool and retrying; CUDA's pool reserves ").append(reserved())
                .append(" bytes, ").append(allocatedBytes).append(" allocated in ").append(live.size())
                .append(" block(s); allocated by site:");
        bySite().entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(10)
                .forEach(en -> d.append(' ').append(en.getKey()).append('=').append(en.getValue()).append(" B;"));
        String free;
        try {
            free = String.valueOf(driver.memGetInfo().free());
        } catch (GpuException x) {
            free = "? (" + x.getMessage() + ")";
        }
        d.append(" the device reports ").append(free).append(" bytes free; driver: ").append(e.getMessage());
        return new GpuException(CudaError.OUT_OF_MEMORY, e.rawCode(), "pool.alloc", d.toString(), e);
    }

    /** Waits for pending frees, then returns the pool's unused memory to the device. */
    private void trim() {
        driver.ctxSynchronize();
        driver.memPoolTrimTo(0);
    }

    private long reserved() {
        lastReserved = driver.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
        return lastReserved;
    }

    @Override
    public synchronized boolean owns(long ptr) {
        return live.containsKey(ptr);
    }

    @Override
    public synchronized long streamOf(long ptr) {
        return block(ptr, "streamOf").stream();
    }

    private Live block(long ptr, String op) {
        Live l = live.get(ptr);
        if (l == null) {
            throw new GpuException(CudaError.INVALID_VALUE, "pool." + op, "ptr=0x" + Long.toHexString(ptr) + " is not a live pool block");
        }
        return l;
    }

    @Override
    public synchronized void free(long ptr, long stream) {
        Live l = block(ptr, "free");
        flushDeferred();
        boolean extra = false;
        if (l.uses() != null) {
            for (long u : l.uses()) {
                extra |= u != stream;
            }
        }
        if (extra && anyCapture.getAsBoolean()) {
            deferred.add(new Deferred(ptr, stream, l.uses()));
        } else {
            release(ptr, stream, l.uses());
        }
        live.remove(ptr);
        allocatedBytes -= l.bytes();
        history.add("free", ptr, l.bytes(), stream, l.site(), lastReserved, allocatedBytes);
    }

    /** Frees on {@code stream} after the work so far of each extra stream in {@code uses}. */
    private void release(long ptr, long stream, long[] uses) {
        if (uses != null) {
            for (long u : uses) {
                if (u != stream) {
                    long ev = takeEvent();
                    try {
                        driver.eventRecord(ev, u);
                        // The wait takes the record's position now, so the event can be reused at once.
                        driver.streamWaitEvent(stream, ev, 0);
                    } finally {
                        spareEvents.push(ev);
                    }
                }
            }
        }
        driver.memFreeAsync(ptr, stream);
        driverFrees++;
    }

    /** Does the deferred frees once no capture is live; a failed one stays deferred. */
    private void flushDeferred() {
        if (deferred.isEmpty() || anyCapture.getAsBoolean()) {
            return;
        }
        while (!deferred.isEmpty()) {
            Deferred d = deferred.getFirst();
            release(d.ptr(), d.stream(), d.uses());
            deferred.removeFirst();
        }
    }

    @Override
    public synchronized void recordStream(long ptr, long stream) {
        Live l = block(ptr, "recordStream");
        // The block's own stream is kept too: a free on another stream must wait for its work.
        long[] uses = l.uses() == null ? new long[0] : l.uses();
        for (long u : uses) {
            if (u == stream) {
                return;
            }
        }
        long[] more = java.util.Arrays.copyOf(uses, uses.length + 1);
        more[uses.length] = stream;
        live.put(ptr, new Live(l.bytes(), l.stream(), l.site(), more));
    }

    @Override
    public synchronized void emptyCache() {
        flushDeferred();
        flushes++;
        trim();
    }

    @Override
    public void streamSynchronized(long stream) {
        // CUDA tracks its own frees.
    }

    @Override
    public void deviceSynchronized() {
        // CUDA tracks its own frees.
    }

    /**
     * {@inheritDoc}
     *
     * <p>Live blocks of the stream would later be freed on a dead handle: the pool waits for the
     * stream and re-owns them by the legacy stream.
     */
    @Override
    public synchronized void streamDestroyed(long stream) {
        for (int i = 0; i < deferred.size(); i++) {
            Deferred d = deferred.get(i);
            if (d.stream() == stream) {
                // Freed later on the legacy stream, once this stream's work is done.
                driver.streamSynchronize(stream);
                d = new Deferred(d.ptr(), 0, d.uses());
                deferred.set(i, d);
            }
            long[] others = java.util.Arrays.stream(d.uses()).filter(u -> u != stream).toArray();
            if (others.length < d.uses().length) {
                // The dying stream's work is ordered now, while its handle lives: an event it waits for.
                long ev = takeEvent();
                try {
                    driver.eventRecord(ev, stream);
                    driver.streamWaitEvent(d.stream(), ev, 0);
                } finally {
                    spareEvents.push(ev);
                }
                deferred.set(i, new Deferred(d.ptr(), d.stream(), others));
            }
        }
        boolean holds = false;
        for (Live l : live.values()) {
            holds |= l.stream() == stream || (l.uses() != null && java.util.Arrays.stream(l.uses()).anyMatch(u -> u == stream));
        }
        if (!holds) {
            return;
        }
        driver.streamSynchronize(stream);
        for (Map.Entry<Long, Live> e : live.entrySet()) {
            Live l = e.getValue();
            // Waited for above: a later free must neither free on nor wait for the dead handle.
            long[] uses = l.uses() == null ? null : java.util.Arrays.stream(l.uses()).filter(u -> u != stream).toArray();
            if (l.stream() == stream || (uses != null && uses.length < l.uses().length)) {
                e.setValue(new Live(l.bytes(), l.stream() == stream ? 0 : l.stream(), l.site(), uses));
            }
        }
    }

    @Override
    public synchronized long cachedBytes() {
        return Math.max(0, reserved() - driver.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT));
    }

    private Map<String, Long> bySite() {
        Map<String, Long> m = new HashMap<>();
        for (Live l : live.values()) {
            m.merge(l.site(), l.bytes(), Long::sum);
        }
        return m;
    }

    @Override
    public synchronized PoolStats stats() {
        long reserved = reserved();
        long used = driver.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT);
        long peakReserved = driver.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_HIGH);
        long peakUsed = driver.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_HIGH);
        return new PoolStats(kind(), reserved, used, allocatedBytes, peakReserved, Math.max(peakUsed, 0),
                Math.max(0, reserved - used), 0, 0, live.size(), 0, allocs, 0, driverAllocs, driverFrees, flushes, bySite());
    }

    @Override
    public synchronized PoolSnapshot snapshot() {
        return new PoolSnapshot(kind(), stats(), List.of(), history.events());
    }

    private long takeEvent() {
        Long ev = spareEvents.poll();
        return ev != null ? ev : driver.eventCreate(EVENT_FLAGS);
    }

    @Override
    public synchronized void close(BiConsumer<String, Runnable> step) {
        for (Deferred d : deferred) {
            step.accept("cuMemFreeAsync 0x" + Long.toHexString(d.ptr()), () -> release(d.ptr(), d.stream(), d.uses()));
        }
        deferred.clear();
        for (Map.Entry<Long, Live> e : live.entrySet()) {
            long p = e.getKey();
            step.accept("cuMemFreeAsync 0x" + Long.toHexString(p), () -> driver.memFreeAsync(p, 0));
        }
        live.clear();
        step.accept("cuMemPoolTrimTo", this::trim);
        step.accept("cuMemPoolSetAttribute (release threshold)",
                () -> driver.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, 0));
        for (long ev : spareEvents) {
            step.accept("cuEventDestroy_v2 pool event", () -> driver.eventDestroy(ev));
        }
        spareEvents.clear();
    }
}
