// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.sim.BlockBody;
import metrale.gpu.sim.ByteView;
import metrale.gpu.sim.DoubleView;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.LongView;
import metrale.gpu.sim.SimBlock;
import metrale.gpu.sim.SimBlockOrder;
import metrale.gpu.sim.SimLaunch;
import metrale.gpu.sim.ThreadBody;

/** One launch as its {@link SimKernel} sees it; lives for one {@link SimKernel#launch} call. */
final class LaunchImpl implements SimLaunch, AutoCloseable {

    /** Above this many blocks a shuffled order is a seeded affine permutation rather than a full shuffle. */
    private static final long FULL_SHUFFLE_MAX = 1 << 20;

    private final Works.Kernel k;
    private final DeviceMemory memory;
    private final Engine engine;
    private Arena sharedArena;
    private long declaredNanos = -1;

    LaunchImpl(Works.Kernel k, Engine engine) {
        this.k = k;
        this.memory = engine.memory;
        this.engine = engine;
    }

    @Override
    public String name() {
        return k.name();
    }

    @Override
    public Dim3 grid() {
        return k.grid();
    }

    @Override
    public Dim3 block() {
        return k.block();
    }

    @Override
    public int sharedMemBytes() {
        return k.sharedMemBytes();
    }

    @Override
    public void runsFor(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("runsFor(" + nanos + "): a duration is not negative");
        }
        declaredNanos = nanos;
    }

    /** {@return the duration the twin declared with {@link #runsFor}, or -1 when it declared none} */
    long declaredNanos() {
        return declaredNanos;
    }

    @Override
    public int argCount() {
        return k.sizes().length;
    }

    private long word(int i, int size, String type) {
        int[] sizes = k.sizes();
        if (i < 0 || i >= sizes.length) {
            throw new SimFault(CudaError.LAUNCH_FAILED, "the kernel reads argument " + i + " but the launch passed "
                    + sizes.length + " arguments");
        }
        if (sizes[i] < size) {
            throw new SimFault(CudaError.LAUNCH_FAILED, "the kernel reads argument " + i + " as " + type + " ("
                    + size + " bytes) but the launch passed " + sizes[i] + " bytes");
        }
        return k.words()[i];
    }

    @Override
    public int i32(int i) {
        return (int) word(i, 4, "int");
    }

    @Override
    public long i64(int i) {
        return word(i, 8, "long long");
    }

    @Override
    public float f32(int i) {
        return Float.intBitsToFloat((int) word(i, 4, "float"));
    }

    @Override
    public double f64(int i) {
        return Double.longBitsToDouble(word(i, 8, "double"));
    }

    @Override
    public long ptr(int i) {
        return word(i, 8, "a pointer");
    }

    @Override
    public byte[] bytes(int i) {
        word(i, 1, "bytes");
        byte[][] b = k.bytes();
        if (b[i] != null) {
            return b[i].clone();
        }
        int n = k.sizes()[i];
        byte[] out = new byte[n];
        long w = k.words()[i];
        for (int j = 0; j < n; j++) {
            out[j] = (byte) (w >>> (8 * j));
        }
        return out;
    }

    /**
     * A view's memory and the facts that explain a fault through it; {@code alloc} and {@code off}
     * (the view's start in it) are set for a view into live memory, for the initcheck.
     */
    private record Span(MemorySegment segment, ViewOrigin origin, String source, Alloc alloc, long off) {
    }

    /** {@return whether reads and writes through this span go to the initcheck's shadow map} */
    private boolean tracked(Span s) {
        return memory.init != null && s.alloc != null;
    }

    private String access(Span s) {
        return "kernel " + k.describe() + " through " + s.source;
    }

    private Span span(long p, int elem, String source) {
        if (p % elem != 0) {
            return new Span(MemorySegment.NULL, ViewOrigin.bad(source, p, CudaError.MISALIGNED_ADDRESS,
                    "is not aligned to " + elem + " bytes"), source, null, 0);
        }
        Alloc a = memory.find(p);
        if (a == null) {
            Alloc peer = engine.peerFind(p);
            if (peer != null) {
                // A peer's memory, with peer access enabled; the initcheck tracks this device's memory only.
                return new Span(peer.segment.asSlice(p - peer.base), new ViewOrigin(source, p, peer), source, null, 0);
            }
            String other = engine.notReachable(p);
            return new Span(MemorySegment.NULL, ViewOrigin.bad(source, p, CudaError.ILLEGAL_ADDRESS, other != null
                    ? "points into memory this context may not address: " + other
                    : "points into no live allocation: " + memory.explain(p, elem)), source, null, 0);
        }
        if (a.held) {
            return new Span(MemorySegment.NULL, ViewOrigin.bad(source, p, CudaError.ILLEGAL_ADDRESS,
                    "points into " + a + ", freed by the application"), source, null, 0);
        }
        return new Span(a.segment.asSlice(p - a.base), new ViewOrigin(source, p, a), source, a, p - a.base);
    }

    private static String arg(int i) {
        return "argument " + i;
    }

    @Override
    public FloatView floats(int argIndex) {
        Span s = span(ptr(argIndex), 4, arg(argIndex));
        FloatView v = new FloatViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.floats(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public IntView ints(int argIndex) {
        Span s = span(ptr(argIndex), 4, arg(argIndex));
        IntView v = new IntViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.ints(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public DoubleView doubles(int argIndex) {
        Span s = span(ptr(argIndex), 8, arg(argIndex));
        DoubleView v = new DoubleViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.doubles(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public LongView longs(int argIndex) {
        Span s = span(ptr(argIndex), 8, arg(argIndex));
        LongView v = new LongViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.longs(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public ByteView bytesAt(int argIndex) {
        Span s = span(ptr(argIndex), 1, arg(argIndex));
        ByteView v = new ByteViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.bytes(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public FloatView floats(long devicePtr) {
        Span s = span(devicePtr, 4, "address");
        FloatView v = new FloatViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.floats(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public IntView ints(long devicePtr) {
        Span s = span(devicePtr, 4, "address");
        IntView v = new IntViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.ints(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public DoubleView doubles(long devicePtr) {
        Span s = span(devicePtr, 8, "address");
        DoubleView v = new DoubleViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.doubles(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public LongView longs(long devicePtr) {
        Span s = span(devicePtr, 8, "address");
        LongView v = new LongViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.longs(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public ByteView bytesAt(long devicePtr) {
        Span s = span(devicePtr, 1, "address");
        ByteView v = new ByteViewImpl(s.segment, s.origin);
        return tracked(s) ? memory.init.bytes(v, s.alloc, s.off, access(s)) : v;
    }

    @Override
    public void forEachThread(ThreadBody body) {
        Dim3 g = k.grid();
        Dim3 b = k.block();
        switch (engine.blockOrder) {
            case ORDERED -> {
                Cursor c = new Cursor(g.x(), g.y(), g.z(), b.x(), b.y(), b.z());
                final int gx = g.x();
                final int gy = g.y();
                final int gz = g.z();
                for (int z = 0; z < gz; z++) {
                    c.bz = z;
                    for (int y = 0; y < gy; y++) {
                        c.by = y;
                        for (int x = 0; x < gx; x++) {
                            c.bx = x;
                            c.runBlock(body);
                        }
                    }
                }
            }
            case SHUFFLED -> {
                Cursor c = new Cursor(g.x(), g.y(), g.z(), b.x(), b.y(), b.z());
                BlockSequence seq = shuffled();
                for (long i = 0; i < seq.total; i++) {
                    place(c, seq.at(i));
                    c.runBlock(body);
                }
            }
            case PARALLEL -> BlockPool.shared().run(blocks(), () -> {
                Cursor c = new Cursor(g.x(), g.y(), g.z(), b.x(), b.y(), b.z());
                return blk -> {
                    place(c, blk);
                    c.runBlock(body);
                };
            });
        }
    }

    @Override
    public void forEachBlock(BlockBody body) {
        Dim3 g = k.grid();
        Dim3 b = k.block();
        if (engine.blockOrder == SimBlockOrder.PARALLEL) {
            BlockPool.shared().run(blocks(), () -> new BlockParticipant(body));
            return;
        }
        MemorySegment shared = MemorySegment.NULL;
        if (k.sharedMemBytes() > 0) {
            if (sharedArena == null) {
                sharedArena = Arena.ofConfined();
            }
            shared = sharedArena.allocate(k.sharedMemBytes(), 16);
        }
        BlockImpl block = new BlockImpl(new Cursor(g.x(), g.y(), g.z(), b.x(), b.y(), b.z()), shared);
        if (engine.blockOrder == SimBlockOrder.SHUFFLED) {
            BlockSequence seq = shuffled();
            for (long i = 0; i < seq.total; i++) {
                shared.fill((byte) 0);
                place(block.cursor, seq.at(i));
                body.run(block);
            }
            return;
        }
        for (int z = 0; z < g.z(); z++) {
            for (int y = 0; y < g.y(); y++) {
                for (int x = 0; x < g.x(); x++) {
                    shared.fill((byte) 0);
                    block.at(x, y, z);
                    body.run(block);
                }
            }
        }
    }

    /** {@return the launch's work: configuration and argument values} */
    Works.Kernel work() {
        return k;
    }

    /** {@return the device the launch runs on} */
    Engine engine() {
        return engine;
    }

    /** A body run once per block, given the block's indices. */
    interface BlockIndexBody {
        void run(int x, int y, int z);
    }

    /**
     * Runs a body once per block of the grid, in the device's block order ({@link SimBlockOrder});
     * each thread that runs blocks gets its own body from {@code bodies}, made on that thread.
     */
    void forEachBlockIndex(Supplier<BlockIndexBody> bodies) {
        Dim3 g = k.grid();
        switch (engine.blockOrder) {
            case ORDERED -> {
                BlockIndexBody body = bodies.get();
                for (int z = 0; z < g.z(); z++) {
                    for (int y = 0; y < g.y(); y++) {
                        for (int x = 0; x < g.x(); x++) {
                            body.run(x, y, z);
                        }
                    }
                }
            }
            case SHUFFLED -> {
                BlockIndexBody body = bodies.get();
                BlockSequence seq = shuffled();
                for (long i = 0; i < seq.total; i++) {
                    long blk = seq.at(i);
                    body.run((int) (blk % g.x()), (int) ((blk / g.x()) % g.y()), (int) (blk / ((long) g.x() * g.y())));
                }
            }
            case PARALLEL -> BlockPool.shared().run(blocks(), () -> {
                BlockIndexBody body = bodies.get();
                return blk -> body.run((int) (blk % g.x()), (int) ((blk / g.x()) % g.y()), (int) (blk / ((long) g.x() * g.y())));
            });
        }
    }

    /** {@return the number of blocks in the grid} */
    private long blocks() {
        Dim3 g = k.grid();
        return (long) g.x() * g.y() * g.z();
    }

    /** Moves {@code c} to the block of linear index {@code blk} (x fastest). */
    private void place(Cursor c, long blk) {
        Dim3 g = k.grid();
        c.bx = (int) (blk % g.x());
        c.by = (int) ((blk / g.x()) % g.y());
        c.bz = (int) (blk / ((long) g.x() * g.y()));
    }

    /** A permutation of the grid's linear block indices. */
    private record BlockSequence(long total, long[] order, long mul, long add) {
        long at(long i) {
            // No overflow: mul < 2^21, and a grid of 2^42 blocks is beyond what a CPU runs anyway.
            return order != null ? order[(int) i] : (i * mul + add) % total;
        }
    }

    /** {@return the grid's blocks in an order drawn from the schedule's seed} */
    private BlockSequence shuffled() {
        long total = blocks();
        if (total <= FULL_SHUFFLE_MAX) {
            long[] order = new long[(int) total];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            for (int i = order.length - 1; i > 0; i--) {
                int j = engine.choose(i + 1);
                long t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            return new BlockSequence(total, order, 0, 0);
        }
        // A huge grid: i -> (i * mul + add) mod total, a bijection when mul is coprime to total.
        long mul = 1 + 2L * engine.choose(1 << 20);
        while (gcd(mul, total) != 1) {
            mul += 2;
        }
        return new BlockSequence(total, null, mul, engine.choose(Integer.MAX_VALUE) % total);
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    @Override
    public void close() {
        if (sharedArena != null) {
            sharedArena.close();
            sharedArena = null;
        }
    }

    /**
     * One thread's part of a parallel {@link #forEachBlock}: its own block, moved from block to
     * block, and its own shared memory, in an arena of that thread's.
     */
    private final class BlockParticipant implements BlockPool.Participant {
        private final BlockBody body;
        private final Arena arena;
        private final BlockImpl block;

        BlockParticipant(BlockBody body) {
            this.body = body;
            Dim3 g = k.grid();
            Dim3 b = k.block();
            this.arena = k.sharedMemBytes() > 0 ? Arena.ofConfined() : null;
            MemorySegment shared = arena != null ? arena.allocate(k.sharedMemBytes(), 16) : MemorySegment.NULL;
            this.block = new BlockImpl(new Cursor(g.x(), g.y(), g.z(), b.x(), b.y(), b.z()), shared);
        }

        @Override
        public void run(long blk) {
            block.shared.fill((byte) 0);
            place(block.cursor, blk);
            body.run(block);
        }

        @Override
        public void done() {
            if (arena != null) {
                arena.close();
            }
        }
    }

    /** The block a {@link BlockBody} sees; one per launch (per thread, in parallel), moved from block to block. */
    private static final class BlockImpl implements SimBlock {
        final Cursor cursor;
        final MemorySegment shared;
        private final ViewOrigin origin;
        private FloatView floats;
        private IntView ints;
        private DoubleView doubles;
        private ByteView bytes;

        BlockImpl(Cursor cursor, MemorySegment shared) {
            this.cursor = cursor;
            this.shared = shared;
            this.origin = new ViewOrigin("dynamic shared memory", 0, null);
        }

        void at(int x, int y, int z) {
            cursor.bx = x;
            cursor.by = y;
            cursor.bz = z;
        }

        @Override
        public int blockX() {
            return cursor.bx;
        }

        @Override
        public int blockY() {
            return cursor.by;
        }

        @Override
        public int blockZ() {
            return cursor.bz;
        }

        @Override
        public void forEachThread(ThreadBody body) {
            cursor.runBlock(body);
        }

        @Override
        public FloatView sharedFloats() {
            if (floats == null) {
                floats = new FloatViewImpl(shared, origin);
            }
            return floats;
        }

        @Override
        public IntView sharedInts() {
            if (ints == null) {
                ints = new IntViewImpl(shared, origin);
            }
            return ints;
        }

        @Override
        public DoubleView sharedDoubles() {
            if (doubles == null) {
                doubles = new DoubleViewImpl(shared, origin);
            }
            return doubles;
        }

        @Override
        public ByteView sharedBytes() {
            if (bytes == null) {
                bytes = new ByteViewImpl(shared, origin);
            }
            return bytes;
        }
    }
}
