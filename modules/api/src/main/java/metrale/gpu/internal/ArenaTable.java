// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw chunks handed to sub-allocators by {@code allocArena}: never on the ledger, never
 * red-zoned. Tracks each chunk's size and the bytes its sub-allocator last said it uses.
 * Thread-safe.
 */
final class ArenaTable {

    /** One chunk: its size and the bytes in use as last noted (0 until noted). */
    static final class Chunk {
        final long base;
        final long bytes;
        final AtomicLong used = new AtomicLong();

        Chunk(long base, long bytes) {
            this.base = base;
            this.bytes = bytes;
        }
    }

    // Device addresses are unsigned; ordered so a floor lookup finds the chunk that may hold an interior pointer.
    private final ConcurrentSkipListMap<Long, Chunk> chunks = new ConcurrentSkipListMap<>(Long::compareUnsigned);

    void add(long base, long bytes) {
        chunks.put(base, new Chunk(base, bytes));
    }

    /** {@return the chunk at {@code base}, or {@code null}} */
    Chunk get(long base) {
        return chunks.get(base);
    }

    /** {@return the removed chunk at {@code base}, or {@code null} when there is none (nothing changes)} */
    Chunk remove(long base) {
        return chunks.remove(base);
    }

    /** {@return whether {@code [p, p + bytes)} lies inside one live chunk} Sub-allocators hand out interior pointers. */
    boolean covers(long p, long bytes) {
        Map.Entry<Long, Chunk> f = chunks.floorEntry(p);
        if (f == null) {
            return false;
        }
        long off = p - f.getKey();
        long size = f.getValue().bytes;
        return Long.compareUnsigned(off, size) < 0 && Long.compareUnsigned(bytes, size - off) <= 0;
    }

    /** {@return whether a live chunk shares a byte with {@code [p, p + bytes)}} */
    boolean overlaps(long p, long bytes) {
        Map.Entry<Long, Chunk> lo = chunks.floorEntry(p);
        if (lo != null && Long.compareUnsigned(p - lo.getKey(), lo.getValue().bytes) < 0) {
            return true;
        }
        Map.Entry<Long, Chunk> hi = chunks.higherEntry(p);
        return hi != null && Long.compareUnsigned(hi.getKey() - p, bytes) < 0;
    }

    /** {@return bytes allocated in chunks but not in use} */
    long slackBytes() {
        long slack = 0;
        for (Chunk c : chunks.values()) {
            slack += c.bytes - c.used.get();
        }
        return slack;
    }

    /** Removes every chunk. {@return them} */
    List<Chunk> drain() {
        List<Chunk> out = List.copyOf(chunks.values());
        for (Chunk c : out) {
            chunks.remove(c.base, c);
        }
        return out;
    }
}
