package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import metrale.gpu.sim.FloatView;

/** A bounds-checked float view over a segment; the check is explicit so a fault names the element. */
final class FloatViewImpl implements FloatView {

    private static final ValueLayout.OfFloat LAYOUT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment segment;
    private final long length;
    private final ViewOrigin origin;

    FloatViewImpl(MemorySegment segment, ViewOrigin origin) {
        this.segment = segment;
        this.length = segment.byteSize() / 4;
        this.origin = origin;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public float get(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, false);
        }
        return segment.get(LAYOUT, i << 2);
    }

    @Override
    public void set(long i, float v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        segment.set(LAYOUT, i << 2, v);
    }

    private SimFault outside(long i, boolean write) {
        return origin.fault(i, 4, "float", write, length);
    }

    // Atomic add is a compare-and-exchange loop on the bits, through an aligned var handle.
    private static final VarHandle BITS = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    @Override
    public float atomicAdd(long i, float v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        long off = i << 2;
        int old = (int) BITS.getVolatile(segment, off);
        while (true) {
            int seen = (int) BITS.compareAndExchange(segment, off, old, Float.floatToRawIntBits(Float.intBitsToFloat(old) + v));
            if (seen == old) {
                return Float.intBitsToFloat(old);
            }
            old = seen;
        }
    }
}
