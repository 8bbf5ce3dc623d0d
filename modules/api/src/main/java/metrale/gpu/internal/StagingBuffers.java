// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Driver;

/**
 * Host buffers through which the blocking copies stage Java heap memory (arrays and heap
 * segments), page-locked or pageable. The driver cannot read the Java heap, which the GC moves, so a heap copy goes
 * through native memory; through one of these it needs no native allocation per copy.
 *
 * <p><b>Page-locked or not.</b> A runtime keeps two sets: page-locked buffers for copies to the
 * host, and pageable native buffers (no driver call allocates them) for copies to the device. On
 * an H200 with driver 580 a 4 KiB {@code cuMemcpyHtoD} from page-locked memory costs more than from
 * pageable memory (9.2 against 7.0 µs from C), while {@code cuMemcpyDtoH} into page-locked memory
 * costs less (7.3 against 9.6 µs); either way the copy allocates nothing.
 *
 * <p>{@value #COUNT} buffers of {@value #BUFFER_BYTES} bytes per set, each allocated (page-locked
 * ones with {@code cuMemHostAlloc}) the first time it is taken, so a runtime that copies no heap memory
 * holds none. One atomic word holds which are taken. A copy of 1 to {@value #MAX_STAGED} bytes
 * goes through one buffer, {@value #BUFFER_BYTES} bytes per driver call; a copy of 0 bytes or of
 * more than {@value #MAX_STAGED}, one that finds every buffer taken, and one that cannot get its
 * buffer answer {@code false} having done nothing, and the caller takes the driver's own path (on
 * CUDA a pageable copy staged in chunks of 8 MiB: a large copy is bound by bandwidth, not by the
 * cost of a call).
 *
 * <p><b>Blocking copies only.</b> A buffer is taken again only after the copy through it returned:
 * {@code cuMemcpyHtoD} from page-locked memory returns once the device holds the bytes,
 * {@code cuMemcpyDtoH} once the host does, and the stream form waits for its stream. An
 * asynchronous copy is never staged: the device could read a buffer after another copy took it.
 * If the wait of the stream form fails, the copy may still write its buffer, which is then never
 * taken again and is freed at {@link #close}.
 *
 * <p><b>Captures.</b> {@code cuMemHostAlloc} is a potentially unsafe call, which invalidates a
 * global-mode capture of any thread: no buffer is allocated while the runtime knows of a live
 * capture, and a copy then takes the driver's path, as the stream form does whichever buffers are
 * held (on a capturing stream it would be recorded into a buffer). An allocation holds
 * {@link #allocationLock()}, which the runtime's {@code beginCapture} holds from its driver call
 * until the pool knows of the capture, so none runs while a capture of this runtime begins. A
 * failed allocation (page-locked memory exhausted, say) stops further allocations; buffers already
 * held stay in use.
 *
 * <p><b>Lifetime.</b> {@link #close} frees every buffer; after it nothing is staged. The runtime
 * closes this after every call has left its gate, so no copy holds a buffer then; should one still
 * hold it, the copy frees it as it gives it back. Each buffer is freed exactly once. Thread-safe;
 * taking and giving back a buffer are lock-free and allocate nothing, and only a buffer's first
 * allocation takes a lock.
 */
final class StagingBuffers {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /** Buffers per runtime: enough for a few threads copying at once, at 256 KiB of page-locked memory. */
    static final int COUNT = 4;
    /** Bytes of one buffer, and the most one staged driver call copies. */
    static final int BUFFER_BYTES = 64 << 10;
    /** The largest copy staged; a larger one takes the driver's path. */
    static final long MAX_STAGED = 256 << 10;

    private static final int ALL = (1 << COUNT) - 1;
    private static final int CLOSED = 1 << 31;

    private static final VarHandle TAKEN;
    private static final VarHandle RETIRED;
    private static final VarHandle FREED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            TAKEN = l.findVarHandle(StagingBuffers.class, "taken", int.class);
            RETIRED = l.findVarHandle(StagingBuffers.class, "retired", int.class);
            FREED = l.findVarHandle(StagingBuffers.class, "freed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Driver driver;
    private final BooleanSupplier capturing;
    private final boolean pageLocked;
    /** Slot i's arena when the buffers are pageable: closing it frees the buffer. */
    private final Arena[] arenas = new Arena[COUNT];
    /** Slot i's buffer, {@code null} until first taken; read and written only by the holder of bit i, or by the free that claimed it. */
    private final MemorySegment[] buffers = new MemorySegment[COUNT];
    /** Bit i: slot i is taken; {@link #CLOSED}: nothing is taken any more. */
    @SuppressWarnings("unused") // accessed through TAKEN
    private volatile int taken;
    /** Bit i: slot i's buffer may still be written by a copy whose wait failed; its bit in {@code taken} stays set. */
    @SuppressWarnings("unused") // accessed through RETIRED
    private volatile int retired;
    /** Bit i: slot i's buffer was claimed for freeing; whoever sets it frees. */
    @SuppressWarnings("unused") // accessed through FREED
    private volatile int freed;
    private volatile boolean allocationFailed;
    private final Object allocationLock = new Object();

    /**
     * Makes the slots; no buffer is allocated until a copy takes one.
     *
     * @param driver     the runtime's driver, which copies, and allocates and frees page-locked buffers
     * @param capturing  whether a capture of the runtime may be live, when no page-locked buffer may be allocated
     * @param pageLocked whether the buffers are page-locked ({@code cuMemHostAlloc}) or pageable native memory
     */
    StagingBuffers(Driver driver, BooleanSupplier capturing, boolean pageLocked) {
        this.driver = driver;
        this.capturing = capturing;
        this.pageLocked = pageLocked;
    }

    // ---- the copies ----------------------------------------------------------------------------

    /**
     * Copies {@code bytes} from the start of {@code src} to {@code dst} through a buffer, with
     * {@code cuMemcpyHtoD}. {@return whether it did; {@code false}: nothing was copied}
     *
     * @throws GpuException a driver call's failure; the bytes before the failed chunk were copied
     */
    boolean copyH2D(MemorySegment src, long dst, long bytes) {
        int i = stageable(bytes) ? take() : -1;
        if (i < 0) {
            return false;
        }
        try {
            MemorySegment buf = buffer(i);
            if (buf == null) {
                return false;
            }
            for (long off = 0; off < bytes; off += BUFFER_BYTES) {
                long n = Math.min(BUFFER_BYTES, bytes - off);
                MemorySegment.copy(src, off, buf, 0, n);
                driver.memcpyHtoD(dst + off, buf, n);
            }
            return true;
        } finally {
            give(i);
        }
    }

    /**
     * Copies {@code bytes} from {@code src} to the start of {@code dst} through a buffer, with
     * {@code cuMemcpyDtoH}. {@return whether it did; {@code false}: nothing was copied}
     *
     * @throws GpuException a driver call's failure; the bytes before the failed chunk were copied
     */
    boolean copyD2H(long src, MemorySegment dst, long bytes) {
        int i = stageable(bytes) ? take() : -1;
        if (i < 0) {
            return false;
        }
        try {
            MemorySegment buf = buffer(i);
            if (buf == null) {
                return false;
            }
            for (long off = 0; off < bytes; off += BUFFER_BYTES) {
                long n = Math.min(BUFFER_BYTES, bytes - off);
                driver.memcpyDtoH(buf, src + off, n);
                MemorySegment.copy(buf, 0, dst, off, n);
            }
            return true;
        } finally {
            give(i);
        }
    }

    /**
     * Copies {@code bytes} from {@code src} to the start of {@code dst} through a buffer, each
     * chunk with {@code cuMemcpyDtoHAsync} on {@code stream} then {@code cuStreamSynchronize}.
     * Not while a capture may be live: on a capturing stream the copy would be recorded with the
     * buffer as its destination (and its wait would fail). {@return whether it did; {@code false}:
     * nothing was copied}
     *
     * @throws GpuException a driver call's failure; the bytes before the failed chunk were copied.
     *                      After a failed wait the buffer is retired, never taken again.
     */
    boolean copyD2HOnStream(long src, MemorySegment dst, long bytes, long stream) {
        int i = stageable(bytes) && !capturing.getAsBoolean() ? take() : -1;
        if (i < 0) {
            return false;
        }
        boolean reusable = true;
        try {
            MemorySegment buf = buffer(i);
            if (buf == null) {
                return false;
            }
            for (long off = 0; off < bytes; off += BUFFER_BYTES) {
                long n = Math.min(BUFFER_BYTES, bytes - off);
                driver.memcpyDtoHAsync(buf, src + off, n, stream);
                reusable = false;
                driver.streamSynchronize(stream);
                reusable = true;
                MemorySegment.copy(buf, 0, dst, off, n);
            }
            return true;
        } finally {
            if (reusable) {
                give(i);
            } else {
                retire(i);
            }
        }
    }

    private static boolean stageable(long bytes) {
        return bytes > 0 && bytes <= MAX_STAGED;
    }

    // ---- the slots -----------------------------------------------------------------------------

    /** {@return a free slot, now taken; -1 when every slot is taken or this is closed} */
    int take() {
        for (;;) {
            int w = (int) TAKEN.getVolatile(this);
            int free = ~w & ALL;
            if ((w & CLOSED) != 0 || free == 0) {
                return -1;
            }
            int bit = free & -free;
            if (TAKEN.compareAndSet(this, w, w | bit)) {
                return Integer.numberOfTrailingZeros(bit);
            }
        }
    }

    /** Gives slot {@code i} back; after {@link #close} its buffer is freed instead. */
    void give(int i) {
        int w = (int) TAKEN.getAndBitwiseAnd(this, ~(1 << i));
        if ((w & CLOSED) != 0) {
            freeQuietly(i);
        }
    }

    /** Keeps slot {@code i} taken for good: a copy may still write its buffer. Freed at close. */
    private void retire(int i) {
        RETIRED.getAndBitwiseOr(this, 1 << i);
        if (((int) TAKEN.getVolatile(this) & CLOSED) != 0) {
            freeQuietly(i);
        }
    }

    /** {@return slot {@code i}'s buffer, allocated if it has none; {@code null} when it cannot be} The caller holds slot {@code i}. */
    MemorySegment buffer(int i) {
        MemorySegment b = buffers[i];
        if (b != null || allocationFailed) {
            return b;
        }
        if (!pageLocked) {
            // No driver call: nothing a capture forbids. Shared, as the freeing thread may be another.
            Arena arena = Arena.ofShared();
            arenas[i] = arena;
            b = arena.allocate(BUFFER_BYTES, 64);
            buffers[i] = b;
            return b;
        }
        synchronized (allocationLock) {
            if (allocationFailed || capturing.getAsBoolean()) {
                return null;
            }
            try {
                b = driver.memHostAlloc(BUFFER_BYTES, 0);
            } catch (GpuException e) {
                allocationFailed = true;
                LOG.log(e.error().isSticky() ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                        "metrale-gpu: copies of Java heap memory are no longer staged through page-locked buffers "
                                + "(they take the driver's path): " + e.getMessage());
                return null;
            }
        }
        buffers[i] = b;
        return b;
    }

    /**
     * {@return the lock every buffer allocation holds} A capture's begin holds it from its driver
     * call until the capture is registered, so no {@code cuMemHostAlloc} of this runtime can fall
     * inside that window and invalidate the capture.
     */
    Object allocationLock() {
        return allocationLock;
    }

    /** {@return how many buffers are allocated and not freed} For tests. */
    int allocated() {
        int n = 0;
        for (int i = 0; i < COUNT; i++) {
            if (buffers[i] != null && ((int) FREED.getVolatile(this) & (1 << i)) == 0) {
                n++;
            }
        }
        return n;
    }

    // ---- teardown ------------------------------------------------------------------------------

    /**
     * Stops staging and frees every buffer no copy holds; one still held is freed by its copy as it
     * gives it back. Idempotent.
     *
     * @param step runs one release and reports its failure
     */
    void close(BiConsumer<String, Runnable> step) {
        int w;
        do {
            w = (int) TAKEN.getVolatile(this);
            if ((w & CLOSED) != 0) {
                return;
            }
        } while (!TAKEN.compareAndSet(this, w, w | CLOSED));
        int held = w & ~(int) RETIRED.getVolatile(this);
        for (int i = 0; i < COUNT; i++) {
            if ((held & (1 << i)) == 0 && claim(i)) {
                MemorySegment b = buffers[i];
                if (b != null) {
                    int slot = i;
                    step.accept(pageLocked ? "cuMemFreeHost (staging buffer)" : "freeing a staging buffer",
                            () -> free(slot, b));
                }
            }
        }
    }

    /** {@return whether this call claimed slot {@code i}'s buffer for freeing} Exactly one caller does. */
    private boolean claim(int i) {
        return ((int) FREED.getAndBitwiseOr(this, 1 << i) & (1 << i)) == 0;
    }

    private void freeQuietly(int i) {
        MemorySegment b = buffers[i];
        if (b == null || !claim(i)) {
            return;
        }
        try {
            free(i, b);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "metrale-gpu: freeing a staging buffer after close failed: " + e.getMessage());
        }
    }

    /** Frees slot {@code i}'s buffer {@code b}, which this caller claimed. */
    private void free(int i, MemorySegment b) {
        if (pageLocked) {
            driver.memFreeHost(b);
        } else {
            arenas[i].close();
        }
    }
}
