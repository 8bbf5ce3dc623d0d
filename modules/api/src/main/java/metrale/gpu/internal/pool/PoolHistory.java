// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.PoolSnapshot;

/**
 * The last {@link PoolSnapshot#HISTORY} events of a pool, in a ring of columns: recording an event
 * on the allocation path stores values and allocates nothing. Guarded by the owner's lock.
 */
final class PoolHistory {

    private static final int N = PoolSnapshot.HISTORY;

    private final long start = System.nanoTime();
    private final long[] nanos = new long[N];
    private final String[] action = new String[N];
    private final long[] ptr = new long[N];
    private final long[] bytes = new long[N];
    private final long[] stream = new long[N];
    private final String[] site = new String[N];
    private final long[] reserved = new long[N];
    private final long[] allocated = new long[N];
    private long count;

    void add(String what, long p, long n, long s, String where, long res, long alloc) {
        int i = (int) (count++ % N);
        nanos[i] = System.nanoTime() - start;
        action[i] = what;
        ptr[i] = p;
        bytes[i] = n;
        stream[i] = s;
        site[i] = where;
        reserved[i] = res;
        allocated[i] = alloc;
    }

    /** {@return the events, oldest first} */
    List<PoolSnapshot.Event> events() {
        int n = (int) Math.min(count, N);
        List<PoolSnapshot.Event> out = new ArrayList<>(n);
        for (long k = count - n; k < count; k++) {
            int i = (int) (k % N);
            out.add(new PoolSnapshot.Event(nanos[i], action[i], ptr[i], bytes[i], stream[i], site[i], reserved[i], allocated[i]));
        }
        return out;
    }
}
