// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;

/**
 * A stream-ordered allocator over a driver: the engine behind {@link metrale.gpu.MemoryPool}.
 * Knows nothing of the ledger, red zones or call-site policy; the runtime core's pool front does.
 * Streams are driver stream handles.
 *
 * <p>Errors are the driver's {@link metrale.gpu.GpuException}s; {@code OUT_OF_MEMORY} names the
 * pool's reserved, allocated and cached bytes by call site. Thread-safe.
 */
public sealed interface StreamAllocator permits CachingAllocator, AsyncAllocator {

    /** {@return {@code caching} or {@code cuda}} */
    String kind();

    /**
     * Allocates a block for {@code stream}.
     *
     * @param bytes  at least 1
     * @param stream the stream
     * @param site   the call site, kept for statistics and the snapshot
     * @param index  the ledger's creation index
     * @return the block's base
     */
    long alloc(long bytes, long stream, String site, long index);

    /**
     * {@return whether {@code ptr} is the base of a live block}
     *
     * @param ptr a device address
     */
    boolean owns(long ptr);

    /**
     * {@return the stream a live block was allocated on}
     *
     * @param ptr a live block's base
     */
    long streamOf(long ptr);

    /**
     * Frees a live block in the order of {@code stream}.
     *
     * @param ptr    a live block's base
     * @param stream the stream
     */
    void free(long ptr, long stream);

    /**
     * Marks a stream as a user of a live block: a free on any other stream waits for the work
     * queued on it until then. The block's own stream may be marked too, for a free elsewhere.
     *
     * @param ptr    a live block's base
     * @param stream the stream
     */
    void recordStream(long ptr, long stream);

    /** Returns cached memory that holds no live block to the driver. */
    void emptyCache();

    /**
     * Notes that the host waited for all work queued on {@code stream} so far.
     *
     * @param stream the stream
     */
    void streamSynchronized(long stream);

    /** Notes that the host waited for all work of the device. */
    void deviceSynchronized();

    /**
     * Notes that {@code stream} is about to be destroyed: blocks freed on it become reusable
     * elsewhere once its queued work completes, its live blocks stop naming it, and a new stream
     * with the same handle starts afresh.
     *
     * @param stream the stream
     */
    void streamDestroyed(long stream);

    /** {@return reserved bytes in free blocks} */
    long cachedBytes();

    /** {@return the counters} */
    PoolStats stats();

    /** {@return the chunks, blocks and recent history} */
    PoolSnapshot snapshot();

    /**
     * Releases everything to the driver, live blocks included: for teardown.
     *
     * @param step runs one release; it reports (never throws) a failure, named by its first argument
     */
    void close(java.util.function.BiConsumer<String, Runnable> step);
}
