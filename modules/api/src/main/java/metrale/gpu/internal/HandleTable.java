// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live handles of one kind (streams, events, functions, graphs) that a runtime issued, keyed by
 * the opaque value the application holds.
 *
 * <p>A handle's value is {@code serial << 24 | slot}: the slot indexes an array, so {@link #get}
 * is one volatile array read and one compare, O(1) however many handles are live, and allocates
 * nothing. The serial comes from one counter for the whole JVM, so a value is never issued twice
 * in the process: a destroyed handle, or one of another runtime, finds its slot empty or holding
 * another serial, and is refused instead of aliasing a live object. Values are at least
 * {@code 1 << 24}, so they never collide with the default streams 0, 1 and 2.
 *
 * <p>Thread-safe: {@link #get} is lock-free; adds and removes take a lock.
 */
final class HandleTable {

    /**
     * A live handle.
     *
     * @param id    the value the application holds
     * @param raw   the driver's handle (for a graph, its exec)
     * @param extra what the kind needs besides (a graph's {@code CUgraph}, a function's module), or {@code null}
     */
    record Slot(long id, long raw, Object extra) {
    }

    private static final int SLOT_BITS = 24;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
    private static final AtomicLong SERIALS = new AtomicLong(1);
    private static final VarHandle ELEMENT = MethodHandles.arrayElementVarHandle(Slot[].class);

    private final Object lock = new Object();
    private volatile Slot[] slots = new Slot[16];
    private int[] free = new int[16];
    private int freeCount;
    private int next;
    private int live;

    /**
     * Issues a handle.
     *
     * @return its value
     * @throws IllegalStateException when 2^24 handles of this kind are live
     */
    long add(long raw, Object extra) {
        synchronized (lock) {
            int s;
            if (freeCount > 0) {
                s = free[--freeCount];
            } else if (next <= SLOT_MASK) {
                s = next++;
            } else {
                throw new IllegalStateException("more than " + SLOT_MASK + " live handles of one kind");
            }
            Slot[] arr = slots;
            if (s >= arr.length) {
                arr = Arrays.copyOf(arr, arr.length * 2);
            }
            long id = (SERIALS.getAndIncrement() << SLOT_BITS) | s;
            Slot slot = new Slot(id, raw, extra);
            ELEMENT.setRelease(arr, s, slot);
            slots = arr;
            live++;
            return id;
        }
    }

    /** {@return the live handle {@code id}, or {@code null} if it is not live in this table} */
    Slot get(long id) {
        Slot[] arr = slots;
        long s = id & SLOT_MASK;
        if (id < (1L << SLOT_BITS) || s >= arr.length) {
            return null;
        }
        Slot slot = (Slot) ELEMENT.getAcquire(arr, (int) s);
        return slot != null && slot.id == id ? slot : null;
    }

    /** {@return the handle {@code id} taken out of the table, or {@code null} if it was not live} */
    Slot remove(long id) {
        synchronized (lock) {
            Slot slot = get(id);
            if (slot == null) {
                return null;
            }
            int s = (int) (id & SLOT_MASK);
            ELEMENT.setRelease(slots, s, (Slot) null);
            if (freeCount == free.length) {
                free = Arrays.copyOf(free, free.length * 2);
            }
            free[freeCount++] = s;
            live--;
            return slot;
        }
    }

    /** {@return how many handles are live} */
    int size() {
        synchronized (lock) {
            return live;
        }
    }

    /** {@return the live handles, in slot order} */
    List<Slot> snapshot() {
        synchronized (lock) {
            List<Slot> out = new ArrayList<>(live);
            for (Slot slot : slots) {
                if (slot != null) {
                    out.add(slot);
                }
            }
            return out;
        }
    }

    /** Takes every handle out. {@return them, in slot order} */
    List<Slot> drain() {
        synchronized (lock) {
            List<Slot> out = new ArrayList<>(live);
            Slot[] arr = slots;
            for (int s = 0; s < arr.length; s++) {
                Slot slot = arr[s];
                if (slot != null) {
                    out.add(slot);
                    ELEMENT.setRelease(arr, s, (Slot) null);
                }
            }
            Arrays.fill(free, 0);
            freeCount = 0;
            next = 0;
            live = 0;
            return out;
        }
    }
}
