// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.List;

/**
 * The runtime's stream-ordered allocator: device memory handed out in stream order and cached
 * after a free, so a steady-state step allocates without calling the driver.
 *
 * <p><b>Stream order.</b> A block belongs to the stream it was allocated on. Freed on that stream
 * it is reusable at once by later allocations on the same stream, since their work is queued after
 * the freed block's users. Another stream reuses it only once the runtime knows the freeing
 * stream's work before the free has completed: an event it records there has completed, or the
 * application synchronized that stream or the device. A block used by work on another stream must
 * be marked with {@link #recordStream}: the free then waits (without blocking the host) for that
 * stream's work queued before it.
 *
 * <p><b>The ledger.</b> Every block is a ledger entry with its call site and creation index, so
 * {@link Gpu#allocReport}, {@link Gpu#liveAllocations()}, {@link Gpu#sweepUnreleased()}, red zones
 * and the JFR allocation events see pool blocks as they see {@link Gpu#alloc} buffers.
 * {@link Gpu#free(DevicePtr)} frees a block on its own stream. A pool free walks no stack for its
 * own site (a walk costs more than the rest of a pool hit), so a double free names the
 * allocation's site and {@code pool.free} as where it was freed; on a backend that checks stream
 * order (the simulator) the free's site is recorded too.
 *
 * <p><b>Capture.</b> Allocating or freeing a block on a stream that is capturing a CUDA graph is
 * refused with {@code STREAM_CAPTURE_UNSUPPORTED} and leaves the capture valid: a block baked into
 * a graph must outlive every replay, so allocate it before the capture. Where CUDA refuses
 * {@code cuMemAlloc} and {@code cuMemFree}, the pool refuses every allocation and free on any
 * stream with the same error: while a {@code GLOBAL} capture is live, from every thread; while a
 * {@code THREAD_LOCAL} one is, from its capturing thread. Unlike the driver, it leaves the capture
 * valid. A {@code RELAXED} capture refuses nothing on other streams. A free, during any capture, of
 * a block marked with {@link #recordStream} reports no error: it orders itself after the marked
 * streams' work only once no capture is live (an event recorded on a capturing stream would join
 * its graph), and the block is reused only after that.
 *
 * <p><b>Sizes.</b> A size no device has (from {@code 2^62} bytes) is {@code OUT_OF_MEMORY}, as
 * {@code cuMemAlloc} answers it; 0 bytes is {@code INVALID_VALUE}.
 *
 * <p><b>Races.</b> On a backend that checks stream order (the simulator), a kernel counts as using
 * the whole block (or allocation) each of its pointer arguments lay in at launch: handing any byte
 * of it to another stream before that kernel's stream is ordered is a race ({@link #races()}).
 *
 * <p><b>Out of memory.</b> When the driver refuses a new chunk, the pool frees its cached chunks
 * and retries once; if that fails too, the {@code OUT_OF_MEMORY} names the bytes reserved,
 * allocated and cached, and the allocated bytes by call site.
 *
 * <p><b>Implementations.</b> {@link GpuOptions#allocator()} {@code cuda} uses CUDA's own
 * stream-ordered allocator ({@code cuMemAllocAsync}, the device's default memory pool); every
 * other value uses the runtime's caching allocator (size-class bins over driver chunks, block
 * splitting and coalescing).
 *
 * <p><b>Threads.</b> Every method may be called from any thread.
 */
public interface MemoryPool {

    /** {@return {@code caching} or {@code cuda}: which allocator backs this pool} */
    String kind();

    /**
     * Allocates a block for work on {@code stream}.
     *
     * @param bytes  at least 1
     * @param stream the stream that will use it first
     * @return the block's base, 256-byte aligned
     * @throws GpuException {@code OUT_OF_MEMORY} after the cache was freed and the retry failed, or
     *                      for a size no device has; {@code STREAM_CAPTURE_UNSUPPORTED} while
     *                      {@code stream} captures, or a capture forbids this thread {@code cuMemAlloc}
     */
    DevicePtr alloc(long bytes, Stream stream);

    /**
     * Frees a block on the stream it was allocated on.
     *
     * @param ptr a block's base; {@link DevicePtr#NULL} is a no-op
     */
    void free(DevicePtr ptr);

    /**
     * Frees a block in the order of {@code stream}: work queued on {@code stream} before this call
     * may still use it.
     *
     * @param ptr    a block's base; {@link DevicePtr#NULL} is a no-op
     * @param stream the stream whose order the free follows
     * @throws GpuException {@code INVALID_VALUE} for a pointer that is not a live block, naming why
     */
    void free(DevicePtr ptr, Stream stream);

    /**
     * Marks {@code stream} as a user of a block, so its free waits for the work queued on
     * {@code stream} until then.
     *
     * @param ptr    a live block's base
     * @param stream another stream that uses it
     */
    void recordStream(DevicePtr ptr, Stream stream);

    /**
     * Returns every cached chunk that holds no live block to the driver, after waiting for the
     * events the pool still waits on.
     */
    void emptyCache();

    /** {@return the pool's counters now} */
    PoolStats stats();

    /**
     * {@return the pool's chunks and blocks now, with its recent history of allocations and frees}
     * Write it with {@link PoolSnapshot#toJson()}, view it with {@link PoolSnapshot#toSvg()}.
     */
    PoolSnapshot snapshot();

    /**
     * {@return the stream-order races the backend reported} The simulator checks each block the
     * pool hands out against the work still pending on the device: work of the block's previous
     * life that the new owner's stream is not ordered after is a race (typically a free without
     * {@link #recordStream} for a stream that used the block). CUDA cannot tell, so it reports none.
     */
    List<PoolRace> races();
}
