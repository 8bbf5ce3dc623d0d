package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import metrale.gpu.sim.LongView;

/** A bounds-checked long view over a segment; the check is explicit so a fault names the element. */
final class LongViewImpl implements LongView {

    private static final ValueLayout.OfLong LAYOUT = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment segment;
    private final long length;
    private final ViewOrigin origin;

    LongViewImpl(MemorySegment segment, ViewOrigin origin) {
        this.segment = segment;
        this.length = segment.byteSize() / 8;
        this.origin = origin;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public long get(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, false);
        }
        return segment.get(LAYOUT, i << 3);
    }

    @Override
    public void set(long i, long v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        segment.set(LAYOUT, i << 3, v);
    }

    private SimFault outside(long i, boolean write) {
        return origin.fault(i, 8, "long", write, length);
    }

    // Atomic operations go through an aligned var handle: views start aligned to the element size.
    private static final VarHandle ATOMIC = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private long at(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        return i << 3;
    }

    @Override
    public long atomicAdd(long i, long v) {
        return (long) ATOMIC.getAndAdd(segment, at(i), v);
    }

    @Override
    public long atomicExch(long i, long v) {
        return (long) ATOMIC.getAndSet(segment, at(i), v);
    }

    @Override
    public long atomicAnd(long i, long v) {
        return (long) ATOMIC.getAndBitwiseAnd(segment, at(i), v);
    }

    @Override
    public long atomicOr(long i, long v) {
        return (long) ATOMIC.getAndBitwiseOr(segment, at(i), v);
    }

    @Override
    public long atomicXor(long i, long v) {
        return (long) ATOMIC.getAndBitwiseXor(segment, at(i), v);
    }

    @Override
    public long atomicCas(long i, long expected, long v) {
        return (long) ATOMIC.compareAndExchange(segment, at(i), expected, v);
    }

    @Override
    public long atomicMin(long i, long v) {
        long off = at(i);
        long old = (long) ATOMIC.getVolatile(segment, off);
        while (v < old) {
            long seen = (long) ATOMIC.compareAndExchange(segment, off, old, v);
            if (seen == old) {
                break;
            }
            old = seen;
        }
        return old;
    }

    @Override
    public long atomicMax(long i, long v) {
        long off = at(i);
        long old = (long) ATOMIC.getVolatile(segment, off);
        while (v > old) {
            long seen = (long) ATOMIC.compareAndExchange(segment, off, old, v);
            if (seen == old) {
                break;
            }
            old = seen;
        }
        return old;
    }
}
