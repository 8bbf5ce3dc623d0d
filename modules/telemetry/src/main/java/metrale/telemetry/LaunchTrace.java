// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records the kernel launches, asynchronous memsets and device-to-device
 * copies a region enqueues, so two executions of it can be diffed op by op
 * ({@link #endAndDiff(int)}). Off until {@link #begin()}.
 *
 * <p>An op is stored only between {@link #begin()} and the next
 * {@link #endAndDiff(int)}; one that races with either call lands wholly on one
 * side of it. Thread-safe: any number of threads may record at once, nothing is
 * lost, and {@link #current()} lists the ops in the order they were recorded,
 * across threads. With recording off, every record method reads one volatile
 * field and returns.
 *
 * <p>With recording on, {@link #recordKernel}, {@link #recordMemset} and
 * {@link #recordD2d} take no lock and allocate nothing once the calling thread's
 * buffer has grown to the length of the trace: each recording thread writes the
 * op's words into primitive arrays of its own, and one atomic add on a sequence
 * shared by all threads orders it. The {@link TraceEntry} objects are built when
 * the trace is read ({@link #current()}, {@link #endAndDiff(int)}), so a launch
 * path should record through these methods rather than build an entry:
 * {@snippet :
 * trace.recordKernel(func, gx, gy, gz, bx, by, bz, smem, args);
 * }
 * {@link #record(TraceEntry)} stores a ready entry the same way. The readers
 * ({@link #begin()}, {@link #current()}, {@link #size()}, {@link #endAndDiff(int)})
 * serialize on a lock and wait for any op that a thread has started but not
 * finished writing.
 *
 * <p>A thread's buffer is registered with this trace on its first record and
 * dropped by the first {@link #begin()} or {@link #endAndDiff(int)} after the
 * thread has ended. A {@link TraceArgs} method that this trace is reading must
 * not call this trace.
 *
 * <p>Also holds the names of kernel handles ({@link #nameKernel}) that the
 * report and {@link KernelTiming} print.
 */
public final class LaunchTrace {

    /*
     * A record in a chunk: HEADER words, then one word per argument; the argument
     * kind codes sit in the chunk's codes array at the same indexes as the words.
     * Word 0 is the op's claim on the clock.
     */
    private static final int FUNC = 1;
    /** gridX in the high 32 bits, gridY in the low. */
    private static final int GRID_XY = 2;
    /** gridZ high, blockX low. */
    private static final int GRID_Z_BLOCK_X = 3;
    /** blockY high, blockZ low. */
    private static final int BLOCK_YZ = 4;
    /** sharedMemBytes high, argc low. */
    private static final int SMEM_ARGC = 5;
    /** The OpKind's ordinal in the low byte, and the KNOWN and VOID bits. */
    private static final int FLAGS = 6;
    /** Words of a record before its arguments. */
    static final int HEADER = 7;
    /** The record carries one kind code per argument. */
    private static final long KNOWN = 1L << 8;
    /** The op's claim was taken but reading its arguments threw: it takes its place and is no entry. */
    private static final long VOID = 1L << 9;
    private static final OpKind[] KINDS = OpKind.values();

    /** Words of a thread's first chunk (and of its first spare); later chunks double up to {@link #MAX_CHUNK_WORDS}. */
    static final int FIRST_CHUNK_WORDS = 512;
    private static final int MAX_CHUNK_WORDS = 1 << 16;
    /** The most arguments one op may have: more than CUDA's 32,764 bytes of kernel parameters hold. */
    static final int MAX_ARGC = 1 << 16;
    /** The most ops one trace may hold: a list's and an array's limit. */
    static final long MAX_OPS = Integer.MAX_VALUE - 8;
    /** What {@link #close()} returns when the trace was closed already; claims are never negative. */
    private static final long WAS_CLOSED = -1;

    private static final VarHandle CLOCK;
    private static final VarHandle COUNT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CLOCK = lookup.findVarHandle(LaunchTrace.class, "clock", long.class);
            COUNT = lookup.findVarHandle(Lane.class, "count", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A hint for the record methods' early return; {@link #clock}'s bit 0 is the truth. */
    private volatile boolean on;

    /*
     * The shared sequence. Bit 0 is set while the trace is closed. A record
     * claims its place by adding 2: an even claim is an op of the open trace,
     * at index (claim - start) / 2; an odd one is dropped. Only lock holders
     * flip bit 0, so every op claimed before the flip that closes a trace has
     * a place in it, and none claimed after.
     */
    @SuppressWarnings("unused") // read and written through CLOCK
    private volatile long clock = 1;

    // Guarded by lock: the readers' state. A writer never takes the lock after its claim,
    // so a reader may wait for claimed ops while holding it.
    private final Object lock = new Object();
    /** The claim the open trace's first op gets. */
    private long start;
    /** Every registered thread's lane, in registration order. */
    private Lane[] lanes = new Lane[0];
    private List<TraceEntry> prev;

    private final ThreadLocal<Lane> ownLane = ThreadLocal.withInitial(this::register);

    private final ConcurrentHashMap<Long, String> names = new ConcurrentHashMap<>();

    /**
     * One thread's records of the current trace, in claim order, in a chain of
     * chunks. The owner writes cur, pos, the chunks and count only between an
     * even claim and its publish; a lock holder resets them only while the
     * trace is closed and every claimed op is published, so the two never
     * write at once. spare and nextSize are the owner's alone.
     */
    private static final class Lane {
        final WeakReference<Thread> owner;
        final Chunk head;
        Chunk cur;
        /** Next free word in cur. */
        int pos;
        /** Records published: written with release by the owner, read with acquire by readers. */
        @SuppressWarnings("unused") // also read and written through COUNT
        int count;
        /** A chunk at least as long as the record being written, so a claimed op never allocates. */
        Chunk spare;
        int nextSize = 2 * FIRST_CHUNK_WORDS;

        Lane(Thread owner) {
            this.owner = new WeakReference<>(owner);
            this.head = new Chunk(FIRST_CHUNK_WORDS);
            this.cur = head;
            this.spare = new Chunk(FIRST_CHUNK_WORDS);
        }
    }

    /** Words and kind codes at the same indexes; {@code end} is where the records stop once the chunk is sealed. */
    private static final class Chunk {
        final long[] words;
        final char[] codes;
        int end;
        Chunk next;

        Chunk(int size) {
            words = new long[size];
            codes = new char[size];
            end = size;
        }
    }

    /** Creates a trace that is off, with no previous trace and no kernel names. */
    public LaunchTrace() {
    }

    /** Clears the current trace and turns recording on. */
    public void begin() {
        synchronized (lock) {
            long to = close();
            if (to != WAS_CLOSED) {
                await(to, ops(to));
            }
            resetLanes();
            start = (long) CLOCK.getAndAdd(this, 1L) + 1;
            on = true;
        }
    }

    /**
     * Whether recording is on.
     *
     * @return {@code true} between {@link #begin()} and the next {@link #endAndDiff(int)}
     */
    public boolean on() {
        return on;
    }

    /**
     * Stores {@code e} if recording is on; otherwise drops it. The entry read back is equal to
     * {@code e}.
     *
     * @param e the op
     * @throws NullPointerException     if recording is on and {@code e} is null
     * @throws IllegalArgumentException if recording is on and {@code e} has more than 2<sup>16</sup> arguments
     */
    public void record(TraceEntry e) {
        if (!on) {
            return;
        }
        Objects.requireNonNull(e, "e");
        int n = checkArgc(e.argc());
        Lane l = lane(n);
        long s = (long) CLOCK.getAndAdd(this, 2L);
        if ((s & 1) != 0) {
            return;
        }
        Chunk ch = room(l, HEADER + n);
        int p = l.pos;
        long[] w = ch.words;
        for (int i = 0; i < n; i++) {
            w[p + HEADER + i] = e.arg(i);
        }
        String kinds = e.argKinds();
        long known = 0;
        if (!kinds.isEmpty()) {
            kinds.getChars(0, n, ch.codes, p + HEADER);
            known = KNOWN;
        }
        header(w, p, s, e.func(), e.gridX(), e.gridY(), e.gridZ(), e.blockX(), e.blockY(), e.blockZ(),
                e.sharedMemBytes(), n, e.kind().ordinal() | known);
        publish(l, p + HEADER + n);
    }

    /**
     * Stores a kernel launch if recording is on; otherwise drops it. The entry read back is
     * {@link TraceEntry#kernel(long, int, int, int, int, int, int, int, long[], String)} of these
     * values, its words and kind codes read from {@code args} now.
     *
     * @param func the function handle
     * @param gx   grid x
     * @param gy   grid y
     * @param gz   grid z
     * @param bx   block x
     * @param by   block y
     * @param bz   block z
     * @param smem dynamic shared memory in bytes
     * @param args the arguments; read before this method returns, not kept
     * @throws NullPointerException     if recording is on and {@code args} is null
     * @throws IllegalArgumentException if recording is on and {@code args.argc()} is negative or
     *                                  more than 2<sup>16</sup>
     */
    public void recordKernel(long func, int gx, int gy, int gz, int bx, int by, int bz, int smem, TraceArgs args) {
        if (!on) {
            return;
        }
        int n = checkArgc(Objects.requireNonNull(args, "args").argc());
        Lane l = lane(n);
        long s = (long) CLOCK.getAndAdd(this, 2L);
        if ((s & 1) != 0) {
            return;
        }
        Chunk ch = room(l, HEADER + n);
        int p = l.pos;
        long[] w = ch.words;
        char[] k = ch.codes;
        try {
            for (int i = 0, a = p + HEADER; i < n; i++, a++) {
                w[a] = args.argWord(i);
                k[a] = args.argKind(i);
            }
        } catch (RuntimeException | Error t) {
            // The claim is taken and a reader waits for it: fill its place with a void.
            header(w, p, s, 0, 0, 0, 0, 0, 0, 0, 0, n, VOID);
            publish(l, p + HEADER + n);
            throw t;
        }
        header(w, p, s, func, gx, gy, gz, bx, by, bz, smem, n, OpKind.KERNEL.ordinal() | KNOWN);
        publish(l, p + HEADER + n);
    }

    /**
     * Stores an asynchronous memset if recording is on; otherwise drops it. The entry read back is
     * {@link TraceEntry#memset(long, int, long)} of these values.
     *
     * @param ptr   the device address
     * @param value the byte value; only its low 8 bits are kept, as CUDA does
     * @param bytes the byte count
     */
    public void recordMemset(long ptr, int value, long bytes) {
        recordCopyLike(OpKind.MEMSET, ptr, value & 0xff, bytes);
    }

    /**
     * Stores a device-to-device copy if recording is on; otherwise drops it. The entry read back
     * is {@link TraceEntry#d2d(long, long, long)} of these values.
     *
     * @param src   the source device address
     * @param dst   the destination device address
     * @param bytes the byte count
     */
    public void recordD2d(long src, long dst, long bytes) {
        recordCopyLike(OpKind.D2D, src, dst, bytes);
    }

    /** A memset or copy: function and dimensions 0, three arguments whose kinds are not known. */
    private void recordCopyLike(OpKind kind, long a0, long a1, long a2) {
        if (!on) {
            return;
        }
        Lane l = lane(3);
        long s = (long) CLOCK.getAndAdd(this, 2L);
        if ((s & 1) != 0) {
            return;
        }
        Chunk ch = room(l, HEADER + 3);
        int p = l.pos;
        long[] w = ch.words;
        w[p + HEADER] = a0;
        w[p + HEADER + 1] = a1;
        w[p + HEADER + 2] = a2;
        header(w, p, s, 0, 0, 0, 0, 0, 0, 0, 0, 3, kind.ordinal());
        publish(l, p + HEADER + 3);
    }

    private static int checkArgc(int n) {
        if (n < 0 || n > MAX_ARGC) {
            throw badArgc(n);
        }
        return n;
    }

    private static IllegalArgumentException badArgc(int n) {
        return new IllegalArgumentException("argc " + n + ": a traced op takes 0 to " + MAX_ARGC + " arguments");
    }

    /**
     * The calling thread's lane, with a spare chunk that holds a record of {@code argc} arguments.
     * Runs before the claim: what may allocate or take the lock is done here.
     */
    private Lane lane(int argc) {
        Lane l = ownLane.get();
        Chunk sp = l.spare;
        if (sp == null || sp.words.length < HEADER + argc) {
            newSpare(l, HEADER + argc);
        }
        return l;
    }

    private static void newSpare(Lane l, int need) {
        l.spare = new Chunk(Math.max(need, l.nextSize));
        l.nextSize = Math.min(2 * l.nextSize, MAX_CHUNK_WORDS);
    }

    /** Called once per thread, by the thread's first record, before its claim. */
    private Lane register() {
        Lane l = new Lane(Thread.currentThread());
        synchronized (lock) {
            Lane[] grown = Arrays.copyOf(lanes, lanes.length + 1);
            grown[lanes.length] = l;
            lanes = grown;
        }
        return l;
    }

    /**
     * The chunk that takes a record of {@code need} words at {@code l.pos}, after the claim:
     * {@code l.cur}, or the next chunk of the chain, or the spare, sealing the full one. Allocates
     * nothing: {@link #lane} made the spare long enough.
     */
    private static Chunk room(Lane l, int need) {
        Chunk ch = l.cur;
        if (l.pos + need <= ch.end) {
            return ch;
        }
        ch.end = l.pos;
        Chunk next = ch.next;
        if (next == null || next.words.length < need) {
            Chunk sp = l.spare;
            l.spare = null;
            sp.next = next;
            ch.next = sp;
            next = sp;
        }
        l.cur = next;
        l.pos = 0;
        return next;
    }

    private static void header(long[] w, int p, long seq, long func, int gx, int gy, int gz,
                               int bx, int by, int bz, int smem, int argc, long flags) {
        w[p] = seq;
        w[p + FUNC] = func;
        w[p + GRID_XY] = pack(gx, gy);
        w[p + GRID_Z_BLOCK_X] = pack(gz, bx);
        w[p + BLOCK_YZ] = pack(by, bz);
        w[p + SMEM_ARGC] = pack(smem, argc);
        w[p + FLAGS] = flags;
    }

    private static long pack(int hi, int lo) {
        return ((long) hi << 32) | (lo & 0xffff_ffffL);
    }

    /** Makes the record that ends at {@code end} visible to readers: the one release store of the record path. */
    private static void publish(Lane l, int end) {
        l.pos = end;
        COUNT.setRelease(l, l.count + 1);
    }

    // ---- readers: all below run under lock, the public ones taking it ----------------------------

    /**
     * Closes the open trace. {@return the claim that closed it, every op of the trace claimed
     * less; {@link #WAS_CLOSED} if it was closed}
     */
    private long close() {
        long c = (long) CLOCK.getVolatile(this);
        if ((c & 1) != 0) {
            return WAS_CLOSED;
        }
        on = false;
        return (long) CLOCK.getAndAdd(this, 1L);
    }

    /** The number of places the open trace has for claims less than {@code to}. */
    private int ops(long to) {
        return opsBetween(start, to);
    }

    /** {@return the number of even claims in {@code [from, to)}, {@code from} even} */
    static int opsBetween(long from, long to) {
        long n = (to - from) >>> 1;
        if (n > MAX_OPS) {
            throw new IllegalStateException("the launch trace holds " + n + " ops, more than the "
                    + MAX_OPS + " a list can");
        }
        return (int) n;
    }

    /**
     * Waits until each of the {@code n} claims less than {@code to} is published in its lane. A
     * claimed op is a few plain stores from its publish, so a reader rarely finds one unfinished,
     * and then only for as long as its thread is descheduled.
     */
    private void await(long to, int n) {
        while (records(to, 0) < n) {
            Thread.yield();
        }
    }

    /** The published records claimed less than {@code to} whose flags have every bit of {@code mask}. */
    private int records(long to, long mask) {
        int n = 0;
        for (Lane l : lanes) {
            int c = (int) COUNT.getAcquire(l);
            Chunk ch = l.head;
            int p = 0;
            for (int r = 0; r < c; r++) {
                if (p == ch.end) {
                    ch = ch.next;
                    p = 0;
                }
                if (ch.words[p] >= to) {
                    break; // a lane's records are in claim order
                }
                if ((ch.words[p + FLAGS] & mask) == mask) {
                    n++;
                }
                p += HEADER + (int) ch.words[p + SMEM_ARGC];
            }
        }
        return n;
    }

    /** The open trace's ops claimed less than {@code to}, in claim order, once all are published. */
    private TraceEntry[] collect(long to) {
        int n = ops(to);
        await(to, n);
        TraceEntry[] byClaim = new TraceEntry[n];
        int voids = 0;
        for (Lane l : lanes) {
            int c = (int) COUNT.getAcquire(l);
            Chunk ch = l.head;
            int p = 0;
            for (int r = 0; r < c; r++) {
                if (p == ch.end) {
                    ch = ch.next;
                    p = 0;
                }
                long s = ch.words[p];
                if (s >= to) {
                    break;
                }
                if ((ch.words[p + FLAGS] & VOID) != 0) {
                    voids++;
                } else {
                    byClaim[(int) ((s - start) >>> 1)] = entry(ch, p);
                }
                p += HEADER + (int) ch.words[p + SMEM_ARGC];
            }
        }
        if (voids == 0) {
            return byClaim;
        }
        TraceEntry[] out = new TraceEntry[n - voids];
        int i = 0;
        for (TraceEntry e : byClaim) {
            if (e != null) {
                out[i++] = e;
            }
        }
        return out;
    }

    private static TraceEntry entry(Chunk ch, int p) {
        long[] w = ch.words;
        long flags = w[p + FLAGS];
        int argc = (int) w[p + SMEM_ARGC];
        long[] args = Arrays.copyOfRange(w, p + HEADER, p + HEADER + argc);
        String kinds = (flags & KNOWN) != 0 ? new String(ch.codes, p + HEADER, argc) : "";
        return new TraceEntry(KINDS[(int) (flags & 0xff)], w[p + FUNC],
                hi(w[p + GRID_XY]), lo(w[p + GRID_XY]), hi(w[p + GRID_Z_BLOCK_X]), lo(w[p + GRID_Z_BLOCK_X]),
                hi(w[p + BLOCK_YZ]), lo(w[p + BLOCK_YZ]), hi(w[p + SMEM_ARGC]), args, kinds);
    }

    private static int hi(long v) {
        return (int) (v >>> 32);
    }

    private static int lo(long v) {
        return (int) v;
    }

    /**
     * Empties every lane for the next trace and drops the lanes of threads that have ended. A lane
     * that recorded keeps the chunks it used, so a trace as long needs no new ones, and lets go of
     * the rest. Only while the trace is closed and every claimed op is published: no owner writes
     * its lane then.
     */
    private void resetLanes() {
        int kept = 0;
        for (Lane l : lanes) {
            Thread t = l.owner.get();
            if (t == null || !t.isAlive()) {
                continue;
            }
            if (l.count != 0) {
                l.cur.next = null;
            }
            for (Chunk ch = l.head; ch != null; ch = ch.next) {
                ch.end = ch.words.length;
            }
            l.cur = l.head;
            l.pos = 0;
            l.count = 0;
            lanes[kept++] = l;
        }
        if (kept != lanes.length) {
            lanes = Arrays.copyOf(lanes, kept);
        }
    }

    /** {@return the number of threads whose lanes this trace holds} For tests of the lanes' cleanup. */
    int laneCount() {
        synchronized (lock) {
            return lanes.length;
        }
    }

    /**
     * The number of ops recorded since {@link #begin()}.
     *
     * @return the current trace's length
     */
    public int size() {
        synchronized (lock) {
            long to = (long) CLOCK.getVolatile(this);
            return (to & 1) != 0 ? 0 : openSize(to);
        }
    }

    /** The open trace's ops claimed less than {@code to}, voids left out, once all are published. */
    private int openSize(long to) {
        int n = ops(to);
        await(to, n);
        return n - records(to, VOID);
    }

    /**
     * A copy of the ops recorded since {@link #begin()}, in order.
     *
     * @return an unmodifiable list
     */
    public List<TraceEntry> current() {
        synchronized (lock) {
            long to = (long) CLOCK.getVolatile(this);
            return (to & 1) != 0 ? List.of() : List.of(collect(to));
        }
    }

    /**
     * Turns recording off and diffs this trace against the previous one, which
     * this one then replaces.
     *
     * <p>The report's first line is {@code "N differing op(s) of M"}, M being the
     * shorter trace's length; then {@code "OP COUNT differs: prev A vs cur B"} if
     * the lengths differ; then one line per differing op among the first M,
     * detailing at most {@code maxReport} of them (N counts them all):
     * {@code "#i NAME [kind] what; what"}, where each what is one of
     * {@code op OLD -> NEW}, {@code grid [x, y, z] -> [..]}, {@code block [..] -> [..]},
     * {@code smem A -> B}, {@code argK 0xOLD -> 0xNEW (Δ D)} (an integer, pointer or
     * bytes argument, or one whose kind is not known), {@code argK 2.0f -> 3.0f} (a float),
     * {@code argK 2.0 -> 3.0} (a double) and {@code argc A -> B}.
     * Every line ends in {@code '\n'}.
     *
     * @param maxReport the most differing ops to detail
     * @return the report, or empty on the first call
     * @throws IllegalArgumentException if {@code maxReport} is negative
     */
    public Optional<String> endAndDiff(int maxReport) {
        if (maxReport < 0) {
            throw new IllegalArgumentException("maxReport < 0: " + maxReport);
        }
        List<TraceEntry> cur;
        List<TraceEntry> before;
        synchronized (lock) {
            long to = close();
            cur = to == WAS_CLOSED ? List.of() : List.of(collect(to));
            resetLanes();
            before = prev;
            prev = cur;
        }
        if (before == null) {
            return Optional.empty();
        }
        return Optional.of(diff(before, cur, maxReport));
    }

    /**
     * Diffs two traces in the format of {@link #endAndDiff(int)}, naming kernels by this trace's
     * names; touches neither the current nor the previous trace.
     *
     * @param prev      the earlier trace
     * @param cur       the later trace
     * @param maxReport the most differing ops to detail
     * @return the report
     * @throws IllegalArgumentException if {@code maxReport} is negative
     */
    public String diff(List<TraceEntry> prev, List<TraceEntry> cur, int maxReport) {
        if (maxReport < 0) {
            throw new IllegalArgumentException("maxReport < 0: " + maxReport);
        }
        Objects.requireNonNull(prev, "prev");
        Objects.requireNonNull(cur, "cur");
        StringBuilder out = new StringBuilder();
        if (prev.size() != cur.size()) {
            out.append("OP COUNT differs: prev ").append(prev.size())
                    .append(" vs cur ").append(cur.size()).append('\n');
        }
        int common = Math.min(prev.size(), cur.size());
        int n = 0;
        List<String> what = new ArrayList<>();
        for (int i = 0; i < common; i++) {
            TraceEntry p = prev.get(i);
            TraceEntry c = cur.get(i);
            if (p.equals(c)) {
                continue;
            }
            n++;
            if (n > maxReport) {
                continue;
            }
            what.clear();
            if (p.kind() != c.kind() || p.func() != c.func()) {
                what.add("op " + nameOf(p.func()) + " -> " + nameOf(c.func()));
            }
            if (p.gridX() != c.gridX() || p.gridY() != c.gridY() || p.gridZ() != c.gridZ()) {
                what.add("grid " + dims(p.gridX(), p.gridY(), p.gridZ())
                        + " -> " + dims(c.gridX(), c.gridY(), c.gridZ()));
            }
            if (p.blockX() != c.blockX() || p.blockY() != c.blockY() || p.blockZ() != c.blockZ()) {
                what.add("block " + dims(p.blockX(), p.blockY(), p.blockZ())
                        + " -> " + dims(c.blockX(), c.blockY(), c.blockZ()));
            }
            if (p.sharedMemBytes() != c.sharedMemBytes()) {
                what.add("smem " + Integer.toUnsignedString(p.sharedMemBytes())
                        + " -> " + Integer.toUnsignedString(c.sharedMemBytes()));
            }
            int argc = Math.min(p.argc(), c.argc());
            for (int a = 0; a < argc; a++) {
                long pv = p.arg(a);
                long cv = c.arg(a);
                if (pv != cv) {
                    what.add("arg" + a + " " + argChange(p.argKind(a) == c.argKind(a) ? c.argKind(a) : '?', pv, cv));
                }
            }
            if (p.argc() != c.argc()) {
                what.add("argc " + p.argc() + " -> " + c.argc());
            }
            out.append('#').append(i).append(' ').append(nameOf(c.func()))
                    .append(" [").append(c.kind().label()).append("] ")
                    .append(String.join("; ", what)).append('\n');
        }
        return n + " differing op(s) of " + common + "\n" + out;
    }

    /** A float or double as its value, anything else in the seed's hex form with the signed delta. */
    private static String argChange(char kind, long pv, long cv) {
        return switch (kind) {
            case TraceEntry.KIND_F32 -> Float.intBitsToFloat((int) pv) + "f -> " + Float.intBitsToFloat((int) cv) + "f";
            case TraceEntry.KIND_F64 -> Double.longBitsToDouble(pv) + " -> " + Double.longBitsToDouble(cv);
            // Wrapping subtraction of the words read as signed, as the seed's `cv as i64 - pv as i64`.
            default -> hex(pv) + " -> " + hex(cv) + " (Δ " + (cv - pv) + ")";
        };
    }

    private static String dims(int x, int y, int z) {
        return "[" + Integer.toUnsignedString(x) + ", " + Integer.toUnsignedString(y)
                + ", " + Integer.toUnsignedString(z) + "]";
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /**
     * Remembers a kernel handle's name as {@code module::func}; the runtime
     * calls it on every successful kernel lookup. A later call for the same
     * handle replaces the name.
     *
     * @param handle the function handle
     * @param module the module name
     * @param func   the function name
     * @throws NullPointerException if {@code module} or {@code func} is null
     */
    public void nameKernel(long handle, String module, String func) {
        Objects.requireNonNull(module, "module");
        Objects.requireNonNull(func, "func");
        names.put(handle, module + "::" + func);
    }

    /**
     * The {@code module::func} a handle was named as.
     *
     * @param handle the function handle
     * @return the name, or empty if the handle was never named
     */
    public Optional<String> kernelName(long handle) {
        return Optional.ofNullable(names.get(handle));
    }

    /**
     * The handle's name, or {@code fn@0x} and its lowercase hex digits if it was never named.
     *
     * @param handle the function handle
     * @return a printable name
     */
    public String nameOf(long handle) {
        String name = names.get(handle);
        return name != null ? name : "fn@" + hex(handle);
    }
}
