package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
}
