// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * An owned device allocation that knows its size: {@link #close()} frees it, so
 * try-with-resources works. Made by {@link Gpu#allocBuffer}.
 *
 * <p>Copies are bounds-checked against the buffer's size before they reach the device. Safe to
 * use from several threads; {@link #close()} is idempotent and never throws, and any other use
 * after it throws {@link IllegalStateException}.
 * {@snippet :
 * float[] host = new float[1024];
 * try (DeviceBuffer buf = gpu.allocBuffer(4L * host.length)) {   // on the ledger, with this line as its site
 *     buf.copyFrom(host);                                         // blocking H2D
 *     gpu.launch(kernel, LaunchConfig.forElements(host.length, 256), Stream.DEFAULT,
 *                args.clear().ptr(buf.ptr()).i32(host.length));
 *     buf.copyTo(host);                                           // blocking D2H: waits for the launch
 * }                                                               // freed here
 * }
 * {@link #at(long)} gives a pointer into the buffer, and a copy that does not fit throws
 * {@link IndexOutOfBoundsException} naming the range and the buffer.
 */
public final class DeviceBuffer implements AutoCloseable {

    private final Gpu gpu;
    private final DevicePtr ptr;
    private final long bytes;
    private volatile boolean closed;
    private volatile RuntimeException closeFailure;

    DeviceBuffer(Gpu gpu, DevicePtr ptr, long bytes) {
        this.gpu = Objects.requireNonNull(gpu, "gpu");
        this.ptr = Objects.requireNonNull(ptr, "ptr");
        this.bytes = bytes;
    }

    /** {@return the base pointer} */
    public DevicePtr ptr() {
        checkOpen();
        return ptr;
    }

    /** {@return the size in bytes} */
    public long bytes() {
        return bytes;
    }

    /**
     * {@return the pointer {@code offset} bytes into the buffer}
     *
     * @param offset in {@code [0, bytes()]}
     */
    public DevicePtr at(long offset) {
        checkRange("at", offset, 0);
        return ptr.plus(offset);
    }

    /**
     * Copies all of {@code src} to the start of the buffer; blocking.
     *
     * @param src host memory no larger than the buffer
     * @return this
     */
    public DeviceBuffer copyFrom(MemorySegment src) {
        checkRange("copyFrom", 0, src.byteSize());
        gpu.copyH2D(src, ptr);
        return this;
    }

    /**
     * Copies floats to the start of the buffer; blocking.
     *
     * @param src no more than {@code bytes() / 4} values
     * @return this
     */
    public DeviceBuffer copyFrom(float[] src) {
        checkRange("copyFrom", 0, 4L * src.length);
        gpu.copyH2D(src, ptr);
        return this;
    }

    /**
     * Copies ints to the start of the buffer; blocking.
     *
     * @param src no more than {@code bytes() / 4} values
     * @return this
     */
    public DeviceBuffer copyFrom(int[] src) {
        checkRange("copyFrom", 0, 4L * src.length);
        gpu.copyH2D(src, ptr);
        return this;
    }

    /**
     * Copies doubles to the start of the buffer; blocking.
     *
     * @param src no more than {@code bytes() / 8} values
     * @return this
     */
    public DeviceBuffer copyFrom(double[] src) {
        checkRange("copyFrom", 0, 8L * src.length);
        gpu.copyH2D(src, ptr);
        return this;
    }

    /**
     * Copies bytes to the start of the buffer; blocking.
     *
     * @param src no more than {@code bytes()} values
     * @return this
     */
    public DeviceBuffer copyFrom(byte[] src) {
        checkRange("copyFrom", 0, src.length);
        gpu.copyH2D(src, ptr);
        return this;
    }

    /**
     * Fills {@code dst} from the start of the buffer; blocking.
     *
     * @param dst host memory no larger than the buffer
     */
    public void copyTo(MemorySegment dst) {
        checkRange("copyTo", 0, dst.byteSize());
        gpu.copyD2H(ptr, dst);
    }

    /**
     * Fills {@code dst} from the start of the buffer; blocking.
     *
     * @param dst no more than {@code bytes() / 4} values
     */
    public void copyTo(float[] dst) {
        checkRange("copyTo", 0, 4L * dst.length);
        gpu.copyD2H(ptr, dst);
    }

    /**
     * Fills {@code dst} from the start of the buffer; blocking.
     *
     * @param dst no more than {@code bytes() / 4} values
     */
    public void copyTo(int[] dst) {
        checkRange("copyTo", 0, 4L * dst.length);
        gpu.copyD2H(ptr, dst);
    }

    /**
     * Fills {@code dst} from the start of the buffer; blocking.
     *
     * @param dst no more than {@code bytes() / 8} values
     */
    public void copyTo(double[] dst) {
        checkRange("copyTo", 0, 8L * dst.length);
        gpu.copyD2H(ptr, dst);
    }

    /**
     * Fills {@code dst} from the start of the buffer; blocking.
     *
     * @param dst no more than {@code bytes()} values
     */
    public void copyTo(byte[] dst) {
        checkRange("copyTo", 0, dst.length);
        gpu.copyD2H(ptr, dst);
    }

    /**
     * Sets every byte of the buffer.
     *
     * @param value the byte, 0 to 255
     * @return this
     */
    public DeviceBuffer fill(int value) {
        checkOpen();
        gpu.memset(ptr, value, bytes);
        return this;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("DeviceBuffer " + ptr + " (" + bytes + " B) is closed");
        }
    }

    private void checkRange(String op, long offset, long length) {
        checkOpen();
        if (offset < 0 || length < 0 || offset + length > bytes) {
            throw new IndexOutOfBoundsException("DeviceBuffer." + op + ": range [" + offset + ", " + (offset + length)
                    + ") does not fit the buffer of " + bytes + " bytes at " + ptr);
        }
    }

    /** {@return whether {@link #close()} has been called} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * {@return why the free in {@link #close()} failed, if it did} A close path never throws (as
     * cudarc's {@code record_err}): the failure is kept here and logged, and the runtime's own
     * {@link Gpu#close()} still sweeps the allocation.
     */
    public java.util.Optional<RuntimeException> closeFailure() {
        return java.util.Optional.ofNullable(closeFailure);
    }

    /**
     * Frees the allocation. Idempotent, and never throws: a failed free (a sticky device fault, a
     * runtime already closed) is recorded in {@link #closeFailure()} and logged to
     * {@code metrale.gpu}, at WARNING unless the runtime was closed first (its close frees every
     * allocation, so nothing is lost).
     */
    @Override
    public void close() {
        if (!closed) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            try {
                gpu.free(ptr);
            } catch (RuntimeException e) {
                closeFailure = e;
                boolean runtimeClosed = gpu.isClosed();
                System.getLogger("metrale.gpu").log(runtimeClosed ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                        () -> "metrale-gpu: DeviceBuffer.close could not free " + ptr + " (" + bytes + " B)"
                                + (runtimeClosed ? "; the runtime was closed first and freed it" : "") + ": " + e, e);
            }
        }
    }

    @Override
    public String toString() {
        return "DeviceBuffer[" + ptr + ", " + bytes + " B" + (closed ? ", closed" : "") + "]";
    }
}
