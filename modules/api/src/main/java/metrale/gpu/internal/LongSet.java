package metrale.gpu.internal;

import java.util.Arrays;

/**
 * A copy-on-write set of {@code long}s for handles that are checked on hot paths (a launch checks
 * its stream and its function): {@link #contains} reads one volatile array and allocates nothing;
 * adds and removes, which are rare, copy it under a lock.
 */
final class LongSet {

    private static final long[] EMPTY = new long[0];

    private volatile long[] values = EMPTY;

    /** {@return whether {@code v} is in the set} */
    boolean contains(long v) {
        long[] a = values;
        for (long x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }

    /** Adds {@code v}. {@return whether it was absent} */
    synchronized boolean add(long v) {
        if (contains(v)) {
            return false;
        }
        long[] a = values;
        long[] b = Arrays.copyOf(a, a.length + 1);
        b[a.length] = v;
        values = b;
        return true;
    }

    /** Removes {@code v}. {@return whether it was present} */
    synchronized boolean remove(long v) {
        long[] a = values;
        for (int i = 0; i < a.length; i++) {
            if (a[i] == v) {
                long[] b = new long[a.length - 1];
                System.arraycopy(a, 0, b, 0, i);
                System.arraycopy(a, i + 1, b, i, a.length - i - 1);
                values = b;
                return true;
            }
        }
        return false;
    }

    /** Empties the set. {@return what it held} */
    synchronized long[] drain() {
        long[] a = values;
        values = EMPTY;
        return a;
    }
}
