package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
}
