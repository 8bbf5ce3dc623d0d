package metrale.gpu.sim.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.sim.BlockBody;
import metrale.gpu.sim.ByteView;
import metrale.gpu.sim.DoubleView;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.LongView;
import metrale.gpu.sim.SimBlock;
import metrale.gpu.sim.SimLaunch;
import metrale.gpu.sim.ThreadBody;

/** One launch as its {@link SimKernel} sees it; lives for one {@link SimKernel#launch} call. */
final class LaunchImpl implements SimLaunch, AutoCloseable {

    private final Works.Kernel k;
    private final DeviceMemory memory;
    private Arena sharedArena;

    LaunchImpl(Works.Kernel k, DeviceMemory memory) {
        this.k = k;
        this.memory = memory;
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
            return new Span(MemorySegment.NULL, ViewOrigin.bad(source, p, CudaError.ILLEGAL_ADDRESS,
                    "points into no live allocation: " + memory.explain(p, elem)), source, null, 0);
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

    @Override
    public void forEachBlock(BlockBody body) {
        Dim3 g = k.grid();
        Dim3 b = k.block();
        MemorySegment shared = MemorySegment.NULL;
        if (k.sharedMemBytes() > 0) {
            if (sharedArena == null) {
                sharedArena = Arena.ofConfined();
            }
            shared = sharedArena.allocate(k.sharedMemBytes(), 16);
        }
        BlockImpl block = new BlockImpl(new Cursor(g.x(), g.y(), g.z(), b.x(), b.y(), b.z()), shared);
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

    @Override
    public void close() {
        if (sharedArena != null) {
            sharedArena.close();
            sharedArena = null;
        }
    }

    /** The block a {@link BlockBody} sees; one per launch, moved from block to block. */
    private static final class BlockImpl implements SimBlock {
        private final Cursor cursor;
        private final MemorySegment shared;
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
