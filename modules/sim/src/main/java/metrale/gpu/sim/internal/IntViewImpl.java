package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import metrale.gpu.sim.IntView;

/** A bounds-checked int view over a segment; the check is explicit so a fault names the element. */
final class IntViewImpl implements IntView {

    private static final ValueLayout.OfInt LAYOUT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment segment;
    private final long length;
    private final ViewOrigin origin;

    IntViewImpl(MemorySegment segment, ViewOrigin origin) {
        this.segment = segment;
        this.length = segment.byteSize() / 4;
        this.origin = origin;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public int get(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, false);
        }
        return segment.get(LAYOUT, i << 2);
    }

    @Override
    public void set(long i, int v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        segment.set(LAYOUT, i << 2, v);
    }

    private SimFault outside(long i, boolean write) {
        return origin.fault(i, 4, "int", write, length);
    }

    // Atomic operations go through an aligned var handle: views start aligned to the element size.
    private static final VarHandle ATOMIC = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private long at(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        return i << 2;
    }

    @Override
    public int atomicAdd(long i, int v) {
        return (int) ATOMIC.getAndAdd(segment, at(i), v);
    }

    @Override
    public int atomicExch(long i, int v) {
        return (int) ATOMIC.getAndSet(segment, at(i), v);
    }

    @Override
    public int atomicAnd(long i, int v) {
        return (int) ATOMIC.getAndBitwiseAnd(segment, at(i), v);
    }

    @Override
    public int atomicOr(long i, int v) {
        return (int) ATOMIC.getAndBitwiseOr(segment, at(i), v);
    }

    @Override
    public int atomicXor(long i, int v) {
        return (int) ATOMIC.getAndBitwiseXor(segment, at(i), v);
    }

    @Override
    public int atomicCas(long i, int expected, int v) {
        return (int) ATOMIC.compareAndExchange(segment, at(i), expected, v);
    }

    @Override
    public int atomicMin(long i, int v) {
        long off = at(i);
        int old = (int) ATOMIC.getVolatile(segment, off);
        while (v < old) {
            int seen = (int) ATOMIC.compareAndExchange(segment, off, old, v);
            if (seen == old) {
                break;
            }
            old = seen;
        }
        return old;
    }

    @Override
    public int atomicMax(long i, int v) {
        long off = at(i);
        int old = (int) ATOMIC.getVolatile(segment, off);
        while (v > old) {
            int seen = (int) ATOMIC.compareAndExchange(segment, off, old, v);
            if (seen == old) {
                break;
            }
            old = seen;
        }
        return old;
    }
}
