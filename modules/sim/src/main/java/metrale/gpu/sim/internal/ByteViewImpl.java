package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.sim.ByteView;

/** A bounds-checked byte view over a segment; the check is explicit so a fault names the element. */
final class ByteViewImpl implements ByteView {

    private static final ValueLayout.OfByte LAYOUT = ValueLayout.JAVA_BYTE;

    private final MemorySegment segment;
    private final long length;
    private final ViewOrigin origin;

    ByteViewImpl(MemorySegment segment, ViewOrigin origin) {
        this.segment = segment;
        this.length = segment.byteSize() / 1;
        this.origin = origin;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public byte get(long i) {
        if (i < 0 || i >= length) {
            throw outside(i, false);
        }
        return segment.get(LAYOUT, i);
    }

    @Override
    public void set(long i, byte v) {
        if (i < 0 || i >= length) {
            throw outside(i, true);
        }
        segment.set(LAYOUT, i, v);
    }

    private SimFault outside(long i, boolean write) {
        return origin.fault(i, 1, "byte", write, length);
    }
}
