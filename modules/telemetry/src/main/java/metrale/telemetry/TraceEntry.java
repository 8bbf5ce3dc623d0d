// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.util.Arrays;
import java.util.Objects;

/**
 * One enqueued operation in a {@link LaunchTrace}.
 *
 * <p>Grid, block and shared-memory values are CUDA's unsigned 32-bit values
 * held in {@code int}s; the trace report prints them unsigned. Args are
 * 64-bit words: a buffer is its device address, a by-value argument its first
 * 8 bytes, little-endian.
 *
 * <p>{@code argKinds} holds one kind code per argument ({@link #KIND_I32},
 * {@link #KIND_I64}, {@link #KIND_F32}, {@link #KIND_F64}, {@link #KIND_PTR},
 * {@link #KIND_BYTES}), or is empty when the kinds are not known; the trace
 * report prints a float or double argument as its value and every other as hex.
 *
 * <p>The record owns a copy of {@code args}; {@link #args()} returns another
 * copy, and {@link #argc()} / {@link #arg(int)} read without copying.
 * Equality, hash code and string form use the array's content.
 *
 * @param kind           what the op is
 * @param func           the kernel function handle, {@code 0} for memsets and copies
 * @param gridX          grid size in blocks, x
 * @param gridY          grid size in blocks, y
 * @param gridZ          grid size in blocks, z
 * @param blockX         block size in threads, x
 * @param blockY         block size in threads, y
 * @param blockZ         block size in threads, z
 * @param sharedMemBytes dynamic shared memory in bytes
 * @param args           the arguments as 64-bit words
 * @param argKinds       one kind code per argument, or empty if unknown
 */
public record TraceEntry(OpKind kind, long func, int gridX, int gridY, int gridZ,
                         int blockX, int blockY, int blockZ, int sharedMemBytes, long[] args, String argKinds) {

    /** Kind code of a 32-bit integer argument. */
    public static final char KIND_I32 = 'i';
    /** Kind code of a 64-bit integer argument. */
    public static final char KIND_I64 = 'l';
    /** Kind code of a 32-bit float argument; its word's low 32 bits are the float's bits. */
    public static final char KIND_F32 = 'f';
    /** Kind code of a 64-bit float argument; its word is the double's bits. */
    public static final char KIND_F64 = 'd';
    /** Kind code of a device pointer argument. */
    public static final char KIND_PTR = 'p';
    /** Kind code of a by-value argument given as bytes; its word is its first 8 bytes. */
    public static final char KIND_BYTES = 'b';

    /**
     * Checks for nulls and copies {@code args}.
     *
     * @throws NullPointerException     if {@code kind}, {@code args} or {@code argKinds} is null
     * @throws IllegalArgumentException if {@code argKinds} is neither empty nor one code per argument
     */
    public TraceEntry {
        Objects.requireNonNull(kind, "kind");
        args = Objects.requireNonNull(args, "args").clone();
        Objects.requireNonNull(argKinds, "argKinds");
        if (!argKinds.isEmpty() && argKinds.length() != args.length) {
            throw new IllegalArgumentException("argKinds '" + argKinds + "' has " + argKinds.length()
                    + " codes for " + args.length + " arguments");
        }
    }

    /**
     * An entry whose argument kinds are not known (every argument prints as hex).
     *
     * @param kind           what the op is
     * @param func           the kernel function handle, {@code 0} for memsets and copies
     * @param gridX          grid size in blocks, x
     * @param gridY          grid size in blocks, y
     * @param gridZ          grid size in blocks, z
     * @param blockX         block size in threads, x
     * @param blockY         block size in threads, y
     * @param blockZ         block size in threads, z
     * @param sharedMemBytes dynamic shared memory in bytes
     * @param args           the arguments as 64-bit words
     */
    public TraceEntry(OpKind kind, long func, int gridX, int gridY, int gridZ,
                      int blockX, int blockY, int blockZ, int sharedMemBytes, long[] args) {
        this(kind, func, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, args, "");
    }

    /**
     * A kernel launch whose argument kinds are known.
     *
     * @param func     the function handle
     * @param gx       grid x
     * @param gy       grid y
     * @param gz       grid z
     * @param bx       block x
     * @param by       block y
     * @param bz       block z
     * @param smem     dynamic shared memory in bytes
     * @param args     the arguments as 64-bit words (copied)
     * @param argKinds one kind code per argument
     * @return the entry
     */
    public static TraceEntry kernel(long func, int gx, int gy, int gz, int bx, int by, int bz,
                                    int smem, long[] args, String argKinds) {
        return new TraceEntry(OpKind.KERNEL, func, gx, gy, gz, bx, by, bz, smem, args, argKinds);
    }

    /**
     * {@return argument {@code i}'s kind code, or {@code '?'} if the kinds are not known}
     *
     * @param i the argument index
     */
    public char argKind(int i) {
        return argKinds.isEmpty() ? '?' : argKinds.charAt(i);
    }

    /**
     * A kernel launch.
     *
     * @param func the function handle
     * @param gx   grid x
     * @param gy   grid y
     * @param gz   grid z
     * @param bx   block x
     * @param by   block y
     * @param bz   block z
     * @param smem dynamic shared memory in bytes
     * @param args the arguments as 64-bit words (copied)
     * @return the entry
     */
    public static TraceEntry kernel(long func, int gx, int gy, int gz, int bx, int by, int bz,
                                    int smem, long[] args) {
        return new TraceEntry(OpKind.KERNEL, func, gx, gy, gz, bx, by, bz, smem, args);
    }

    /**
     * An asynchronous memset: args {@code {ptr, value & 0xff, bytes}}, function and dimensions 0.
     *
     * @param ptr   the device address
     * @param value the byte value; only its low 8 bits are kept, as CUDA does
     * @param bytes the byte count
     * @return the entry
     */
    public static TraceEntry memset(long ptr, int value, long bytes) {
        return new TraceEntry(OpKind.MEMSET, 0, 0, 0, 0, 0, 0, 0, 0,
                new long[] {ptr, value & 0xff, bytes});
    }

    /**
     * A device-to-device copy: args {@code {src, dst, bytes}}, function and dimensions 0.
     *
     * @param src   the source device address
     * @param dst   the destination device address
     * @param bytes the byte count
     * @return the entry
     */
    public static TraceEntry d2d(long src, long dst, long bytes) {
        return new TraceEntry(OpKind.D2D, 0, 0, 0, 0, 0, 0, 0, 0, new long[] {src, dst, bytes});
    }

    /**
     * A copy of the arguments.
     *
     * @return the arguments as 64-bit words
     */
    @Override
    public long[] args() {
        return args.clone();
    }

    /**
     * The number of arguments.
     *
     * @return the argument count
     */
    public int argc() {
        return args.length;
    }

    /**
     * One argument, without copying the array.
     *
     * @param i the argument index
     * @return the argument word
     * @throws ArrayIndexOutOfBoundsException if {@code i} is not in {@code [0, argc())}
     */
    public long arg(int i) {
        return args[i];
    }

    /**
     * Compares every component, {@code args} by content.
     *
     * @param o the other object
     * @return whether {@code o} is an equal entry
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof TraceEntry e
                && kind == e.kind && func == e.func
                && gridX == e.gridX && gridY == e.gridY && gridZ == e.gridZ
                && blockX == e.blockX && blockY == e.blockY && blockZ == e.blockZ
                && sharedMemBytes == e.sharedMemBytes
                && Arrays.equals(args, e.args)
                && argKinds.equals(e.argKinds);
    }

    /**
     * A hash of every component, {@code args} by content.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        int h = kind.hashCode();
        h = 31 * h + Long.hashCode(func);
        h = 31 * h + gridX;
        h = 31 * h + gridY;
        h = 31 * h + gridZ;
        h = 31 * h + blockX;
        h = 31 * h + blockY;
        h = 31 * h + blockZ;
        h = 31 * h + sharedMemBytes;
        h = 31 * h + Arrays.hashCode(args);
        return 31 * h + argKinds.hashCode();
    }

    /**
     * The record's usual form with {@code args} listed by content.
     *
     * @return the string form
     */
    @Override
    public String toString() {
        return "TraceEntry[kind=" + kind + ", func=" + func
                + ", gridX=" + gridX + ", gridY=" + gridY + ", gridZ=" + gridZ
                + ", blockX=" + blockX + ", blockY=" + blockY + ", blockZ=" + blockZ
                + ", sharedMemBytes=" + sharedMemBytes + ", args=" + Arrays.toString(args)
                + ", argKinds=" + argKinds + "]";
    }
}
