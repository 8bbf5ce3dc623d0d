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
 */
public record TraceEntry(OpKind kind, long func, int gridX, int gridY, int gridZ,
                         int blockX, int blockY, int blockZ, int sharedMemBytes, long[] args) {

    /**
     * Checks for nulls and copies {@code args}.
     *
     * @throws NullPointerException if {@code kind} or {@code args} is null
     */
    public TraceEntry {
        Objects.requireNonNull(kind, "kind");
        args = Objects.requireNonNull(args, "args").clone();
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
                && Arrays.equals(args, e.args);
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
        return 31 * h + Arrays.hashCode(args);
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
                + ", sharedMemBytes=" + sharedMemBytes + ", args=" + Arrays.toString(args) + "]";
    }
}
