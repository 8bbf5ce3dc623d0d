// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The few ledger entries a range check found last, so the hot case of a copy or memset (the same
 * allocations again and again) is a scan of {@value #SLOTS} slots without the ledger's lock, the
 * boxing of a tree key, or the tree walk.
 *
 * <p><b>Invariant.</b> Every cached entry is live on the ledger. {@link #remember}, {@link #forget}
 * and {@link #clear} run under the ledger's lock, the same lock the ledger's removals hold, so an
 * entry is cached only while it is live and leaves its slot before the free that took it off the
 * ledger returns (before the driver frees it or the pool hands it out again). A check that begins
 * after that return reads the cleared slot; a reused address has a new entry, which only a lookup
 * on the ledger caches. {@link #covers} takes no lock and allocates nothing.
 */
final class LedgerCache {

    /** Slots scanned by every check: enough for a step's working set of buffers, few enough to scan in a few nanoseconds. */
    static final int SLOTS = 8;

    /**
     * A cached entry's extent, its red-zone pad included, kept beside the entry so a check reads one object.
     *
     * @param base  the entry's base address
     * @param size  its bytes plus its pad
     * @param entry the ledger entry
     */
    private record Span(long base, long size, Ledger.Entry entry) {
    }

    private final AtomicReferenceArray<Span> slots = new AtomicReferenceArray<>(SLOTS);
    /** The slot the next {@link #remember} replaces, round robin; guarded by the ledger's lock. */
    private int next;

    /** {@return whether a cached entry holds {@code [p, p + bytes)}, its red zone included} Lock-free. */
    boolean covers(long p, long bytes) {
        for (int i = 0; i < SLOTS; i++) {
            Span s = slots.get(i);
            if (s != null && within(s.base, s.size, p, bytes)) {
                return true;
            }
        }
        return false;
    }

    /** {@return whether {@code [p, p + bytes)} lies in {@code [base, base + size)}} Addresses are unsigned. */
    static boolean within(long base, long size, long p, long bytes) {
        long off = p - base;
        return Long.compareUnsigned(off, size) < 0 && Long.compareUnsigned(bytes, size - off) <= 0;
    }

    /** Caches {@code e}, live on the ledger, in place of the oldest slot, unless it is cached. Under the ledger's lock. */
    void remember(Ledger.Entry e) {
        for (int i = 0; i < SLOTS; i++) {
            Span s = slots.get(i);
            if (s != null && s.entry == e) {
                return;
            }
        }
        slots.set(next, new Span(e.base(), e.allocation().bytes() + e.pad(), e));
        next = (next + 1) % SLOTS;
    }

    /** Drops {@code e}, just taken off the ledger, from its slot. Under the ledger's lock. */
    void forget(Ledger.Entry e) {
        for (int i = 0; i < SLOTS; i++) {
            Span s = slots.get(i);
            if (s != null && s.entry == e) {
                slots.set(i, null);
            }
        }
    }

    /** Empties every slot, as the ledger is drained. Under the ledger's lock. */
    void clear() {
        for (int i = 0; i < SLOTS; i++) {
            slots.set(i, null);
        }
    }

    /** {@return how many slots hold an entry} For tests. */
    int size() {
        int n = 0;
        for (int i = 0; i < SLOTS; i++) {
            if (slots.get(i) != null) {
                n++;
            }
        }
        return n;
    }
}
