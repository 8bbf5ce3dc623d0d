package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import metrale.gpu.sim.DoubleView;

/** A bounds-checked double view over a segment; the check is explicit so a fault names the element. */
final class DoubleViewImpl implements DoubleView {

    private static final ValueLayout.OfDouble LAYOUT = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment segment;
    private final long length;
    private final ViewOrigin origin;

    DoubleViewImpl(MemorySegment segment, ViewOrigin origin) {
        this.segment = segment;
        this.length = segment.byteSize() / 8;
        this.origin = origin;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public double get(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, false);
        }
        return segment.get(LAYOUT, i << 3);
    }

    @Override
    public void set(long i, double v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        segment.set(LAYOUT, i << 3, v);
    }

    private SimFault outside(long i, boolean write) {
        return origin.fault(i, 8, "double", write, length);
    }

    // Atomic add is a compare-and-exchange loop on the bits, through an aligned var handle.
    private static final VarHandle BITS = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    @Override
    public double atomicAdd(long i, double v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        long off = i << 3;
        long old = (long) BITS.getVolatile(segment, off);
        while (true) {
            long seen = (long) BITS.compareAndExchange(segment, off, old, Double.doubleToRawLongBits(Double.longBitsToDouble(old) + v));
            if (seen == old) {
                return Double.longBitsToDouble(old);
            }
            old = seen;
        }
    }
}
