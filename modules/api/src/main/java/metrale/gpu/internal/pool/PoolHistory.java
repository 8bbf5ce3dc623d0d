package metrale.gpu.internal.pool;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.PoolSnapshot;

/** The last {@link PoolSnapshot#HISTORY} events of a pool, in a ring. Guarded by the owner's lock. */
final class PoolHistory {

    private final long start = System.nanoTime();
    private final PoolSnapshot.Event[] ring = new PoolSnapshot.Event[PoolSnapshot.HISTORY];
    private long count;

    void add(String action, long ptr, long bytes, long stream, String site, long reserved, long allocated) {
        ring[(int) (count++ % ring.length)] = new PoolSnapshot.Event(System.nanoTime() - start, action, ptr, bytes,
                stream, site, reserved, allocated);
    }

    /** {@return the events, oldest first} */
    List<PoolSnapshot.Event> events() {
        int n = (int) Math.min(count, ring.length);
        List<PoolSnapshot.Event> out = new ArrayList<>(n);
        for (long i = count - n; i < count; i++) {
            out.add(ring[(int) (i % ring.length)]);
        }
        return out;
    }
}
