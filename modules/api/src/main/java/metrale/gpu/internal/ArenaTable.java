package metrale.gpu.internal;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
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

    private final ConcurrentHashMap<Long, Chunk> chunks = new ConcurrentHashMap<>();

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
