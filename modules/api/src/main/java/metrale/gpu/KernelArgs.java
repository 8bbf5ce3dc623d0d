// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Optional;
import metrale.telemetry.TraceArgs;
import metrale.telemetry.TraceEntry;

/**
 * A reusable native kernel-argument buffer and the {@code void**} table that points into it, as
 * {@code cuLaunchKernel}'s {@code kernelParams} expects.
 *
 * <p>Fill it in parameter order, launch, then {@link #clear()} and refill for the next launch:
 * <pre>{@code
 * try (KernelArgs args = new KernelArgs()) {
 *     for (int step = 0; step < n; step++) {
 *         args.clear().f32(a).ptr(x).ptr(y).i32(len);
 *         gpu.launch(axpy, cfg, stream, args);
 *     }
 * }
 * }</pre>
 * Reusing it allocates nothing. Each value sits 8-byte aligned in native memory owned by this
 * object; the table holds their addresses. The driver copies the values when the launch is
 * enqueued, so the buffer may be refilled as soon as {@link Gpu#launch} returns.
 *
 * <p>It is the launch trace's view of the arguments as well ({@link TraceArgs}): a traced launch
 * reads each argument's word and kind code from here, copying nothing first.
 *
 * <p>Not thread-safe: one thread fills and launches at a time. {@link #close()} frees the native
 * memory; it is idempotent, and any use after it throws {@link IllegalStateException}.
 */
public final class KernelArgs implements AutoCloseable, TraceArgs {

    /** How an argument was appended: which method filled its slot. */
    public enum Kind {
        /** {@link #i32(int)}. */
        I32(TraceEntry.KIND_I32),
        /** {@link #i64(long)}. */
        I64(TraceEntry.KIND_I64),
        /** {@link #f32(float)}. */
        F32(TraceEntry.KIND_F32),
        /** {@link #f64(double)}. */
        F64(TraceEntry.KIND_F64),
        /** {@link #ptr(DevicePtr)} or {@link #ptr(long)}. */
        PTR(TraceEntry.KIND_PTR),
        /** {@link #bytes(byte[])} or {@link #bytes(MemorySegment)}. */
        BYTES(TraceEntry.KIND_BYTES);

        private static final Kind[] ALL = values();

        /** The launch trace's code for this kind. */
        private final char traceCode;

        Kind(char traceCode) {
            this.traceCode = traceCode;
        }
    }

    /** Default maximum number of arguments. */
    public static final int DEFAULT_MAX_ARGS = 64;
    /** Default capacity of the value area in bytes (CUDA allows 32764 bytes of parameters). */
    public static final int DEFAULT_DATA_BYTES = 4096;

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Arena arena;
    private final MemorySegment table;
    private final MemorySegment data;
    private final long dataBase;
    private final int[] offsets;
    private final int[] sizes;
    private final byte[] kinds;
    /** Per argument: the step parameter it came from, or {@code null}; made by the first {@link #param}. */
    private StepParam<?>[] params;
    private int count;
    private int used;
    private boolean closed;

    /** Creates a buffer for up to {@value #DEFAULT_MAX_ARGS} arguments and {@value #DEFAULT_DATA_BYTES} bytes of values. */
    public KernelArgs() {
        this(DEFAULT_MAX_ARGS, DEFAULT_DATA_BYTES);
    }

    /**
     * Creates a buffer of the given capacity.
     *
     * @param maxArgs   the most arguments one launch may take, at least 1
     * @param dataBytes the value area's size in bytes, at least 8
     * @throws IllegalArgumentException if a capacity is out of range
     */
    public KernelArgs(int maxArgs, int dataBytes) {
        if (maxArgs < 1 || maxArgs > 4096) {
            throw new IllegalArgumentException("KernelArgs(maxArgs=" + maxArgs + "): must be in [1, 4096]");
        }
        if (dataBytes < 8 || dataBytes > (1 << 20)) {
            throw new IllegalArgumentException("KernelArgs(dataBytes=" + dataBytes + "): must be in [8, 1048576]");
        }
        // Shared: a launch may be issued from a thread other than the one that built the buffer.
        this.arena = Arena.ofShared();
        this.table = arena.allocate(8L * maxArgs, 8);
        this.data = arena.allocate(dataBytes, 16);
        this.dataBase = data.address();
        this.offsets = new int[maxArgs];
        this.sizes = new int[maxArgs];
        this.kinds = new byte[maxArgs];
    }

    private long slot(int size, Kind kind) {
        if (closed) {
            throw new IllegalStateException("KernelArgs is closed");
        }
        if (count == offsets.length) {
            throw new IllegalStateException("KernelArgs is full: " + offsets.length + " arguments");
        }
        int off = (used + 7) & ~7;
        if ((long) off + size > data.byteSize()) {
            throw new IllegalStateException("KernelArgs value area is full: argument " + count + " of "
                    + size + " bytes does not fit in " + data.byteSize() + " bytes");
        }
        offsets[count] = off;
        sizes[count] = size;
        kinds[count] = (byte) kind.ordinal();
        if (params != null) {
            params[count] = null;
        }
        table.setAtIndex(ValueLayout.JAVA_LONG, count, dataBase + off);
        count++;
        used = off + size;
        return off;
    }

    /**
     * Appends a 32-bit integer ({@code int}).
     *
     * @param v the value
     * @return this
     */
    public KernelArgs i32(int v) {
        data.set(I32, slot(4, Kind.I32), v);
        return this;
    }

    /**
     * Appends a 64-bit integer ({@code long long}, {@code size_t}).
     *
     * @param v the value
     * @return this
     */
    public KernelArgs i64(long v) {
        data.set(I64, slot(8, Kind.I64), v);
        return this;
    }

    /**
     * Appends a 32-bit float.
     *
     * @param v the value
     * @return this
     */
    public KernelArgs f32(float v) {
        data.set(F32, slot(4, Kind.F32), v);
        return this;
    }

    /**
     * Appends a 64-bit float.
     *
     * @param v the value
     * @return this
     */
    public KernelArgs f64(double v) {
        data.set(F64, slot(8, Kind.F64), v);
        return this;
    }

    /**
     * Appends a device pointer.
     *
     * @param p the pointer; not {@code null}
     * @return this
     */
    public KernelArgs ptr(DevicePtr p) {
        data.set(I64, slot(8, Kind.PTR), p.address());
        return this;
    }

    /**
     * Appends a device pointer given as its address.
     *
     * @param address the device address
     * @return this
     */
    public KernelArgs ptr(long address) {
        data.set(I64, slot(8, Kind.PTR), address);
        return this;
    }

    /**
     * Appends a by-value argument given as raw bytes (a struct), copied now.
     *
     * @param value the bytes; not {@code null}, not empty
     * @return this
     */
    public KernelArgs bytes(byte[] value) {
        if (value.length == 0) {
            throw new IllegalArgumentException("KernelArgs.bytes: an argument needs at least one byte");
        }
        MemorySegment.copy(value, 0, data, ValueLayout.JAVA_BYTE, slot(value.length, Kind.BYTES), value.length);
        return this;
    }

    /**
     * Appends a by-value argument given as the contents of a segment, copied now.
     *
     * @param value the bytes; not empty
     * @return this
     */
    public KernelArgs bytes(MemorySegment value) {
        long n = value.byteSize();
        if (n == 0 || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("KernelArgs.bytes: argument size " + n + " is out of range");
        }
        MemorySegment.copy(value, 0, data, slot((int) n, Kind.BYTES), n);
        return this;
    }

    /**
     * Appends a captured step's parameter: its current value, as its {@link StepParam#kind()}
     * appends it, and a mark that this argument came from it, so a captured step whose region
     * launches with this buffer knows which of its graph's nodes a {@link CapturedStep#set} changes.
     * Outside a captured step's traced run it is the plain value.
     *
     * @param p the parameter; not {@code null}
     * @return this
     */
    public KernelArgs param(StepParam<?> p) {
        long bits = p.bitsNow();
        switch (p.kind()) {
            case I32 -> i32((int) bits);
            case I64 -> i64(bits);
            case F32 -> f32(Float.intBitsToFloat((int) bits));
            case F64 -> f64(Double.longBitsToDouble(bits));
            case PTR -> ptr(bits);
            case BYTES -> bytes(p.wideNow());
        }
        if (params == null) {
            params = new StepParam<?>[offsets.length];
        }
        params[count - 1] = p;
        return this;
    }

    /**
     * {@return the step parameter argument {@code i} was appended from ({@link #param}), or empty
     * for a plain value}
     *
     * @param i the argument index
     */
    public Optional<StepParam<?>> paramAt(int i) {
        checkIndex(i);
        return params == null ? Optional.empty() : Optional.ofNullable(params[i]);
    }

    /**
     * Removes every argument, keeping the native memory for reuse.
     *
     * @return this
     */
    public KernelArgs clear() {
        count = 0;
        used = 0;
        return this;
    }

    /** {@return the number of arguments appended since the last {@link #clear()}} */
    public int count() {
        return count;
    }

    /** {@return the most arguments this buffer holds} */
    public int capacity() {
        return offsets.length;
    }

    /**
     * {@return the {@code void**} table: {@link #count()} addresses, one per argument}
     * The segment spans the full capacity; only the first {@code count()} entries are meaningful.
     *
     * @throws IllegalStateException if closed
     */
    public MemorySegment table() {
        if (closed) {
            throw new IllegalStateException("KernelArgs is closed");
        }
        return table;
    }

    /**
     * {@return how argument {@code i} was appended}
     *
     * @param i the argument index
     */
    public Kind kind(int i) {
        checkIndex(i);
        return Kind.ALL[kinds[i]];
    }

    /**
     * {@return the size in bytes of argument {@code i}}
     *
     * @param i the argument index
     */
    public int size(int i) {
        checkIndex(i);
        return sizes[i];
    }

    /**
     * {@return argument {@code i} read as a 32-bit integer (its first 4 bytes)}
     *
     * @param i the argument index
     */
    public int getInt(int i) {
        checkIndex(i);
        return data.get(I32, offsets[i]);
    }

    /**
     * {@return argument {@code i} read as a 64-bit integer or pointer (its first 8 bytes)}
     *
     * @param i the argument index
     */
    public long getLong(int i) {
        checkIndex(i);
        return data.get(I64, offsets[i]);
    }

    /**
     * {@return argument {@code i} read as a 32-bit float}
     *
     * @param i the argument index
     */
    public float getFloat(int i) {
        checkIndex(i);
        return data.get(F32, offsets[i]);
    }

    /**
     * {@return argument {@code i} read as a 64-bit float}
     *
     * @param i the argument index
     */
    public double getDouble(int i) {
        checkIndex(i);
        return data.get(F64, offsets[i]);
    }

    /**
     * {@return a copy of argument {@code i}'s bytes}
     *
     * @param i the argument index
     */
    public byte[] getBytes(int i) {
        checkIndex(i);
        return data.asSlice(offsets[i], sizes[i]).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * {@return argument {@code i} as the launch trace records it: its first 8 bytes (fewer if it
     * is smaller), little-endian, zero-extended}
     *
     * @param i the argument index
     */
    public long word(int i) {
        checkIndex(i);
        int n = sizes[i];
        if (n >= 8) {
            return data.get(I64, offsets[i]);
        }
        if (n == 4) {
            return Integer.toUnsignedLong(data.get(I32, offsets[i]));
        }
        long w = 0;
        for (int b = 0; b < n; b++) {
            w |= (data.get(ValueLayout.JAVA_BYTE, offsets[i] + b) & 0xffL) << (8 * b);
        }
        return w;
    }

    /** {@return the number of arguments, as {@link #count()}} */
    @Override
    public int argc() {
        return count;
    }

    /**
     * {@return argument {@code i} as {@link #word(int)} gives it}
     *
     * @param i the argument index
     * @throws IndexOutOfBoundsException if {@code i} is not in {@code [0, count())}
     * @throws IllegalStateException     if closed
     */
    @Override
    public long argWord(int i) {
        return word(i);
    }

    /**
     * {@return argument {@code i}'s kind as the launch trace records it: its {@link TraceEntry}
     * kind code, the {@code i}-th char of {@link #argKinds()}}
     *
     * @param i the argument index
     * @throws IndexOutOfBoundsException if {@code i} is not in {@code [0, count())}
     * @throws IllegalStateException     if closed
     */
    @Override
    public char argKind(int i) {
        checkIndex(i);
        return Kind.ALL[kinds[i]].traceCode;
    }

    /** {@return every argument as {@link #word(int)}, in order} */
    public long[] words() {
        long[] w = new long[count];
        for (int i = 0; i < count; i++) {
            w[i] = word(i);
        }
        return w;
    }

    /**
     * {@return each argument's kind as the launch trace records it, one {@link TraceEntry} kind
     * code per argument in order (for example {@code "pfi"} for a pointer, a float and an int)}
     */
    public String argKinds() {
        char[] k = new char[count];
        for (int i = 0; i < count; i++) {
            k[i] = Kind.ALL[kinds[i]].traceCode;
        }
        return new String(k);
    }

    private void checkIndex(int i) {
        if (closed) {
            throw new IllegalStateException("KernelArgs is closed");
        }
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("argument " + i + " of " + count);
        }
    }

    /** {@return whether {@link #close()} has been called} */
    public boolean isClosed() {
        return closed;
    }

    /** Frees the native memory. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
