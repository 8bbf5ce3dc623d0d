// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import metrale.gpu.GpuException;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.spi.Driver;

/**
 * Freed device memory on its way back to the driver or the pool, in AddressSanitizer's manner: a
 * FIFO of freed ranges, bounded in bytes. A freed buffer is off the ledger at once (so a copy,
 * memset or checked launch argument into it is refused, naming where it was allocated and freed)
 * but its memory is given back only when it is evicted, oldest first, once the held bytes exceed
 * the limit. So a stale pointer lands in "freed at", not in a live neighbour that reused its
 * address.
 *
 * <p>The free's red-zone scan happens here too: a freed buffer's pad is read back before its
 * memory can be reused. Outside a capture the scan runs at the free, after a context sync (a
 * non-blocking stream's work is ordered before nothing else the host can wait for). During a
 * capture a sync would break it, so the entry is held unscanned, whatever the limit, and scanned
 * at the first {@link #settle} outside a capture; nothing is evicted during a capture either, since
 * {@code cuMemFree} is refused then.
 *
 * <p>Thread-safe: one lock guards the queue, and driver calls are made outside it; scans and
 * evictions are serialized among themselves.
 */
final class Quarantine {

    /** How many violations found at free are kept. */
    private static final int MAX_VIOLATIONS = 1024;

    /** What gives a held range back for real: {@code cuMemFree} or the pool's stream-ordered free. */
    interface Release {
        void run();
    }

    /**
     * A held range.
     *
     * @param entry    its ledger entry when it was freed
     * @param freeSite where it was freed
     * @param stream   the pool lane its release is ordered on, or -1 for a driver allocation
     * @param release  gives the memory back
     */
    record Held(Ledger.Entry entry, String freeSite, long stream, Release release) {
        long bytes() {
            return entry.allocation().bytes() + entry.pad();
        }
    }

    private final Driver driver;
    private final RedZones redZones;
    private final long limit;
    private final Object lock = new Object();
    // Held while scanning or evicting, so no range is given back while another thread's scan reads
    // it. Taken before lock, never inside it.
    private final Object settling = new Object();
    private final ArrayDeque<Held> queue = new ArrayDeque<>();
    private final List<Held> unscanned = new ArrayList<>();
    private final List<RedZoneViolation> violations = new ArrayList<>();
    private long bytes;

    /** @param limit the most bytes held; 0 gives memory back at the free (after its scan) */
    Quarantine(Driver driver, RedZones redZones, long limit) {
        this.driver = driver;
        this.redZones = redZones;
        this.limit = limit;
    }

    /** {@return whether a free has anything to do here} Off when neither red zones nor a limit are on. */
    boolean on() {
        return limit > 0 || redZones.on();
    }

    /** {@return whether freed memory is held back at all} */
    boolean holds() {
        return limit > 0;
    }

    /**
     * Tells the driver that the memory based at {@code base}, about to be admitted, is held: a
     * driver that checks bounds then faults a kernel that touches it. Before the admission, while
     * nothing can have reused the address. A driver failing here (a latched fault) only leaves the
     * memory reachable by a stale kernel.
     */
    void hold(long base) {
        if (limit > 0) {
            try {
                driver.memoryHeld(base);
            } catch (GpuException e) {
                System.getLogger("metrale.gpu").log(System.Logger.Level.DEBUG, "metrale-gpu: quarantine hold of 0x"
                        + Long.toHexString(base) + " not told to the driver: " + e.getMessage());
            }
        }
    }

    /** {@return the bytes held, pads included} */
    long bytes() {
        synchronized (lock) {
            return bytes;
        }
    }

    /**
     * Takes a freed range in: scans its red zone (now, or at the first settle outside a capture),
     * then evicts the oldest ranges while more than the limit is held.
     *
     * @param capturing whether a capture is in flight (no sync, scan or eviction then)
     * @throws GpuException when the sync, the scan or an eviction fails; the range stays held
     */
    void admit(Held h, boolean capturing) {
        synchronized (lock) {
            queue.addLast(h);
            bytes += h.bytes();
            if (h.entry().pad() > 0) {
                unscanned.add(h);
            }
        }
        settle(capturing);
    }

    /**
     * Scans what is unscanned and evicts down to the limit; nothing while a capture is in flight.
     *
     * @throws GpuException when the sync, a scan or an eviction fails
     */
    void settle(boolean capturing) {
        if (capturing) {
            return;
        }
        synchronized (settling) {
            scanPending();
            evict(limit);
        }
    }

    /**
     * Scans every unscanned pad. A pad that cannot be read (the driver refuses the read of a held
     * range, which only a runtime bug or a broken backend does) is reported once: the range leaves
     * the quarantine unscanned and goes back, and one exception names it, both its sites and the
     * bytes. A failed context sync or a sticky error leaves every range unscanned for the next
     * settle, since the fault is the context's, not the range's.
     */
    private void scanPending() {
        List<Held> todo;
        synchronized (lock) {
            if (unscanned.isEmpty()) {
                return;
            }
            todo = new ArrayList<>(unscanned);
            unscanned.clear();
        }
        List<RedZoneViolation> found = new ArrayList<>();
        List<Held> unreadable = new ArrayList<>();
        GpuException readFailure = null;
        try {
            // The pad may be written by any stream's work, a non-blocking one's included.
            driver.ctxSynchronize();
            for (int i = 0; i < todo.size(); i++) {
                Held h = todo.get(i);
                try {
                    found.addAll(redZones.find(driver, List.of(h.entry()), e -> true));
                } catch (GpuException e) {
                    if (e.error().isSticky()) {
                        synchronized (lock) {
                            unscanned.addAll(0, todo.subList(i, todo.size()));
                        }
                        throw e;
                    }
                    unreadable.add(h);
                    readFailure = readFailure == null ? e : readFailure;
                }
            }
        } catch (GpuException e) {
            if (found.isEmpty() && unreadable.isEmpty()) {
                synchronized (lock) {
                    unscanned.addAll(0, todo);
                }
            }
            throw e;
        }
        if (!found.isEmpty()) {
            report(found, todo);
        }
        if (!unreadable.isEmpty()) {
            throw dropUnreadable(unreadable, readFailure);
        }
    }

    private void report(List<RedZoneViolation> found, List<Held> todo) {
        synchronized (lock) {
            for (RedZoneViolation v : found) {
                if (violations.size() < MAX_VIOLATIONS) {
                    violations.add(v);
                }
            }
        }
        for (RedZoneViolation v : found) {
            String freeSite = "?";
            for (Held h : todo) {
                if (h.entry().allocation().equals(v.allocation())) {
                    freeSite = h.freeSite();
                }
            }
            System.getLogger("metrale.gpu").log(System.Logger.Level.WARNING,
                    "metrale-gpu: " + v + " (found when it was freed at " + freeSite + ")");
        }
    }

    /**
     * Takes ranges whose pads could not be read out of the quarantine and gives them back.
     *
     * @return the one exception that reports them: the first range with both sites and its bytes,
     *         the driver's error, and how many more
     */
    private GpuException dropUnreadable(List<Held> unreadable, GpuException cause) {
        synchronized (lock) {
            for (Held h : unreadable) {
                if (queue.remove(h)) {
                    bytes -= h.bytes();
                }
            }
        }
        GpuException failedRelease = null;
        for (Held h : unreadable) {
            failedRelease = giveBack(h, failedRelease);
        }
        Held first = unreadable.getFirst();
        GpuException e = new GpuException(cause.error(), cause.rawCode(), "red-zone scan at free",
                "the pad of " + first.entry().describe() + ", freed at " + first.freeSite() + ", could not be read back ("
                + first.entry().pad() + " pad bytes at 0x" + Long.toHexString(first.entry().end()) + "): " + cause.getMessage()
                + "; it left the quarantine unscanned and went back to its allocator"
                + (unreadable.size() > 1 ? "; " + (unreadable.size() - 1) + " more freed range(s) likewise" : ""), cause);
        if (failedRelease != null) {
            e.addSuppressed(failedRelease);
        }
        return e;
    }

    /** Gives back the oldest ranges until at most {@code keep} bytes are held; a failed release is rethrown after the rest. */
    private void evict(long keep) {
        GpuException first = null;
        while (true) {
            Held h;
            synchronized (lock) {
                if (bytes <= keep || queue.isEmpty()) {
                    break;
                }
                h = queue.pollFirst();
                if (!unscanned.isEmpty()) {
                    unscanned.remove(h);
                }
                bytes -= h.bytes();
            }
            first = giveBack(h, first);
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Gives {@code h}'s memory back for real; a teardown status is no failure.
     *
     * @return the first failure: {@code first} if there was one already, else this release's, else {@code null}
     */
    private static GpuException giveBack(Held h, GpuException first) {
        try {
            h.release().run();
        } catch (GpuException e) {
            if (!e.error().isTeardown() && first == null) {
                return e;
            }
        }
        return first;
    }

    /**
     * {@return whether giving the held memory back may let an allocation of {@code request} bytes
     * that ran out of memory succeed} Not when nothing is held, nor when the device reports enough
     * free memory beyond what is held (the failure is then not for want of it: an injected fault,
     * or a limit of the pool).
     */
    boolean mayRelieve(long request) {
        long held = bytes();
        if (held == 0) {
            return false;
        }
        try {
            return Long.compareUnsigned(driver.memGetInfo().free(), request + held) < 0;
        } catch (GpuException e) {
            return true;
        }
    }

    /**
     * Scans and gives back everything held: before an out-of-memory retry, a sweep, and close.
     *
     * @param scan whether to scan the unscanned pads first (not when the context is faulted or closing)
     * @throws GpuException when a scan or a release fails (every release is still tried)
     */
    void flush(boolean scan) {
        synchronized (settling) {
            if (scan) {
                scanPending();
            }
            evict(0);
        }
    }

    /**
     * Gives back everything held on pool lane {@code stream}, which is about to be destroyed: its
     * stream-ordered frees must be enqueued while it exists.
     *
     * @param capturing whether a capture is in flight: the held pads are then given back unscanned
     */
    void flushStream(long stream, boolean capturing) {
        synchronized (settling) {
            flushStreamSettling(stream, capturing);
        }
    }

    private void flushStreamSettling(long stream, boolean capturing) {
        List<Held> out = new ArrayList<>();
        boolean scan = false;
        synchronized (lock) {
            for (Iterator<Held> it = queue.iterator(); it.hasNext(); ) {
                Held h = it.next();
                if (h.stream() == stream) {
                    it.remove();
                    bytes -= h.bytes();
                    out.add(h);
                    scan |= unscanned.contains(h);
                }
            }
            if (capturing) {
                unscanned.removeAll(out);
            }
        }
        if (scan && !capturing) {
            scanPending();
        }
        GpuException first = null;
        for (Held h : out) {
            first = giveBack(h, first);
        }
        if (first != null) {
            throw first;
        }
    }

    /** {@return the red-zone damage found in freed buffers, oldest first} */
    List<RedZoneViolation> violations() {
        synchronized (lock) {
            return List.copyOf(violations);
        }
    }

    /**
     * {@return why {@code [p, p + bytes)} is refused, when it starts in a held range; {@code null} otherwise}
     * A walk over the held ranges: it runs only on the way to an error.
     */
    String explain(long p, long bytes) {
        synchronized (lock) {
            Held h = null;
            long off = 0;
            for (Held x : queue) {
                off = p - x.entry().base();
                if (Long.compareUnsigned(off, x.bytes()) < 0) {
                    h = x;
                    break;
                }
            }
            if (h == null) {
                return null;
            }
            return "[0x" + Long.toHexString(p) + ", +" + bytes + ") lies in freed memory (+" + off + " into it): it was "
                    + h.entry().describe() + ", freed at " + h.freeSite()
                    + "; it is held in the quarantine, not yet reused";
        }
    }
}
