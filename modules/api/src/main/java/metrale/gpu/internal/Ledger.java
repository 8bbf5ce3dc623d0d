// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import metrale.gpu.Allocation;
import metrale.gpu.LeakDetection;

/**
 * The allocation ledger: every live pointer from {@code alloc} and {@code allocManaged}, with its
 * size, red-zone pad, call site and creation index. Thread-safe; one lock guards the maps, and
 * no driver call is made while it is held. {@link #covers} first asks a {@link LedgerCache} of the
 * entries it found last, without the lock.
 *
 * <p>Invariant: {@link #liveBytes()} is the sum of the caller-visible sizes of the entries in
 * {@code live}; pads are not counted.
 */
final class Ledger {

    /** How many freed entries are remembered so a double free can say what it was. */
    private static final int FREED_MEMORY = 4096;

    /**
     * One live allocation.
     *
     * @param allocation what the caller sees
     * @param pad        red-zone bytes allocated after it; 0 when none
     */
    record Entry(Allocation allocation, long pad) {

        long base() {
            return allocation.ptr().address();
        }

        long end() {
            return base() + allocation.bytes();
        }

        /** {@return the entry's line in messages: pointer, size, index and site} */
        String describe() {
            return allocation.ptr() + " (" + allocation.bytes() + " B, #" + allocation.index()
                    + (allocation.managed() ? ", managed" : "") + ", allocated at " + allocation.site() + ")";
        }
    }

    /**
     * A freed entry and where it was freed.
     *
     * @param entry    the entry
     * @param freeSite the caller of the free, or {@code ?} when sites are off
     */
    private record Freed(Entry entry, String freeSite) {
    }

    private final AtomicLong sequence = new AtomicLong();
    private final Object lock = new Object();
    // Device addresses are unsigned; keyed so floor/ceiling lookups follow address order.
    private final TreeMap<Long, Entry> live = new TreeMap<>(Long::compareUnsigned);
    private final LinkedHashMap<Long, Freed> freed = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Freed> eldest) {
            return size() > FREED_MEMORY;
        }
    };
    private long liveBytes;
    private final LedgerCache cache = new LedgerCache();

    /** {@return the next creation index} Indices are consumed even when the allocation then fails. */
    long nextIndex() {
        return sequence.getAndIncrement();
    }

    /** Records a new live entry. */
    void add(Entry e) {
        synchronized (lock) {
            live.put(e.base(), e);
            freed.remove(e.base());
            liveBytes += e.allocation().bytes();
        }
    }

    /**
     * Takes the entry whose base is {@code ptr} off the ledger.
     *
     * @param freeSite the caller of the free, remembered for a later double free
     * @return the entry, or {@code null} when {@code ptr} is not a live base pointer (nothing changes)
     */
    Entry remove(long ptr, String freeSite) {
        synchronized (lock) {
            Entry e = live.remove(ptr);
            if (e != null) {
                cache.forget(e);
                liveBytes -= e.allocation().bytes();
                freed.put(ptr, new Freed(e, freeSite));
            }
            return e;
        }
    }

    /**
     * Names where {@code e}, just removed, was freed, in place of what {@link #remove} recorded: a
     * free takes its line only after the entry is off the ledger, and only for a report that names it.
     * Nothing changes if the address was reused meanwhile.
     */
    void freedAt(Entry e, String freeSite) {
        synchronized (lock) {
            Freed f = freed.get(e.base());
            if (f != null && f.entry() == e) {
                freed.put(e.base(), new Freed(e, freeSite));
            }
        }
    }

    /**
     * {@return why {@code ptr} is not a live base pointer}: an interior pointer (naming the
     * allocation it falls in), a pointer into a red zone, an already freed pointer, or unknown.
     */
    String explainNotLive(long ptr) {
        synchronized (lock) {
            Map.Entry<Long, Entry> floor = live.floorEntry(ptr);
            if (floor != null) {
                Entry e = floor.getValue();
                long off = ptr - e.base();
                if (Long.compareUnsigned(ptr, e.end()) < 0) {
                    return "ptr=0x" + Long.toHexString(ptr) + " is an interior pointer, +" + off
                            + " into the allocation " + e.describe() + "; free its base pointer";
                }
                if (Long.compareUnsigned(ptr, e.end() + e.pad()) < 0) {
                    return "ptr=0x" + Long.toHexString(ptr) + " points into the red zone after " + e.describe();
                }
            }
            Freed f = freed.get(ptr);
            if (f != null) {
                return "ptr=0x" + Long.toHexString(ptr) + " was already freed: it was " + f.entry().describe()
                        + ", freed at " + f.freeSite();
            }
            return "ptr=0x" + Long.toHexString(ptr) + " was not allocated by this runtime's alloc or allocManaged";
        }
    }

    /**
     * {@return whether {@code [p, p + bytes)} lies inside one live allocation, its red zone
     * included} The red zone is memory of the allocation, so a host write into it reaches it and the
     * scan names it, as a kernel's would. A hit in the {@link LedgerCache} takes no lock and
     * allocates nothing; a miss looks in the ledger and caches the entry it finds.
     */
    boolean covers(long p, long bytes) {
        if (cache.covers(p, bytes)) {
            return true;
        }
        synchronized (lock) {
            Map.Entry<Long, Entry> f = live.floorEntry(p);
            if (f == null) {
                return false;
            }
            Entry e = f.getValue();
            if (!LedgerCache.within(e.base(), e.allocation().bytes() + e.pad(), p, bytes)) {
                return false;
            }
            cache.remember(e);
            return true;
        }
    }

    /** {@return the cache {@link #covers} asks first} For tests. */
    LedgerCache cache() {
        return cache;
    }

    /**
     * {@return why {@code [p, p + bytes)} is not inside one live allocation}: it runs past an
     * allocation's end (into its red zone or beyond), starts in a red zone, lies in freed memory
     * (naming where it was freed), or is in no memory of this runtime (naming the nearest allocation).
     */
    String explainRange(long p, long bytes) {
        String range = "[0x" + Long.toHexString(p) + ", +" + bytes + ")";
        synchronized (lock) {
            Map.Entry<Long, Entry> floor = live.floorEntry(p);
            if (floor != null) {
                Entry e = floor.getValue();
                long off = p - e.base();
                long size = e.allocation().bytes();
                if (Long.compareUnsigned(off, size + e.pad()) < 0) {
                    long over = bytes - (size - off);
                    return range + " starts at +" + off + " in " + e.describe() + " but runs " + over
                            + " byte(s) past its end" + (e.pad() > 0 ? " and past its " + e.pad() + "-byte red zone" : "");
                }
            }
            for (Freed f : freed.values()) {
                long off = p - f.entry().base();
                if (Long.compareUnsigned(off, f.entry().allocation().bytes()) < 0) {
                    return range + " lies in freed memory: it was " + f.entry().describe() + ", freed at " + f.freeSite();
                }
            }
        }
        Entry near = nearest(p);
        return range + " is not in device memory this runtime allocated"
                + (near == null ? " (it holds no allocation)" : "; the nearest allocation is " + near.describe());
    }

    /**
     * {@return what the ledger remembers of freed memory holding {@code addr}, when no live entry
     * (pad included) holds it: {@code "it was <entry>, freed at <site>"}; {@code null} otherwise}
     * The most recent free at each base is remembered, a bounded number of them.
     */
    String freedHolding(long addr) {
        synchronized (lock) {
            Map.Entry<Long, Entry> floor = live.floorEntry(addr);
            if (floor != null && Long.compareUnsigned(addr - floor.getKey(),
                    floor.getValue().allocation().bytes() + floor.getValue().pad()) < 0) {
                return null;
            }
            Freed hit = null;
            for (Freed f : freed.values()) {
                if (Long.compareUnsigned(addr - f.entry().base(), f.entry().allocation().bytes() + f.entry().pad()) < 0) {
                    hit = f;
                }
            }
            return hit == null ? null : "it was " + hit.entry().describe() + ", freed at " + hit.freeSite();
        }
    }

    /** {@return {@code {base, bytes}} of the live entry, pad included, that holds {@code addr}; {@code null} when none} */
    long[] extentOf(long addr) {
        synchronized (lock) {
            Map.Entry<Long, Entry> f = live.floorEntry(addr);
            if (f == null) {
                return null;
            }
            long size = f.getValue().allocation().bytes() + f.getValue().pad();
            return Long.compareUnsigned(addr - f.getKey(), size) < 0 ? new long[] {f.getKey(), size} : null;
        }
    }

    /** {@return the live entry whose range, pad included, holds {@code addr}, or the nearest one; {@code null} when empty} */
    Entry nearest(long addr) {
        synchronized (lock) {
            Map.Entry<Long, Entry> lo = live.floorEntry(addr);
            Map.Entry<Long, Entry> hi = live.ceilingEntry(addr);
            if (lo == null) {
                return hi == null ? null : hi.getValue();
            }
            Entry below = lo.getValue();
            if (hi == null || Long.compareUnsigned(addr, below.end() + below.pad()) < 0) {
                return below;
            }
            long distBelow = addr - (below.end() + below.pad());
            long distAbove = hi.getKey() - addr;
            return Long.compareUnsigned(distBelow, distAbove) <= 0 ? below : hi.getValue();
        }
    }

    /** {@return a live entry whose range, pad included, shares a byte with {@code [p, p + bytes)}, or {@code null}} */
    Entry overlapping(long p, long bytes) {
        synchronized (lock) {
            Map.Entry<Long, Entry> lo = live.floorEntry(p);
            if (lo != null && Long.compareUnsigned(p - lo.getKey(), lo.getValue().allocation().bytes() + lo.getValue().pad()) < 0) {
                return lo.getValue();
            }
            Map.Entry<Long, Entry> hi = live.higherEntry(p);
            return hi != null && Long.compareUnsigned(hi.getKey() - p, bytes) < 0 ? hi.getValue() : null;
        }
    }

    /** {@return the bytes of live entries, pads excluded} */
    long liveBytes() {
        synchronized (lock) {
            return liveBytes;
        }
    }

    /** {@return the number of live entries} */
    int count() {
        synchronized (lock) {
            return live.size();
        }
    }

    /** {@return the live entries, oldest (lowest creation index) first} */
    List<Entry> snapshot() {
        List<Entry> out;
        synchronized (lock) {
            out = new ArrayList<>(live.values());
        }
        out.sort(Comparator.comparingLong(e -> e.allocation().index()));
        return out;
    }

    /**
     * Takes every entry off the ledger, remembering each as freed.
     *
     * @param freeSite what freed them, for a later double free's message
     * @return them, oldest first
     */
    List<Entry> drain(String freeSite) {
        List<Entry> out;
        synchronized (lock) {
            out = new ArrayList<>(live.values());
            for (Entry e : out) {
                freed.put(e.base(), new Freed(e, freeSite));
            }
            live.clear();
            cache.clear();
            liveBytes = 0;
        }
        out.sort(Comparator.comparingLong(e -> e.allocation().index()));
        return out;
    }

    /**
     * {@return live bytes grouped by call site, largest first (ties by site)}
     *
     * <p>Format: a header {@code "live device memory: N allocation(s), X.X MiB at S site(s)"},
     * then one line per listed site {@code "  %10.1f MiB  %6d  site"} (MiB, count, site), then
     * {@code "  ... K more site(s), X.X MiB"} when sites were left out. Each line ends in a newline.
     *
     * @param topN  the most sites to list, at least 0
     * @param minMb the smallest total to list, in MiB, at least 0
     */
    String report(int topN, long minMb) {
        return report(topN, minMb, null);
    }

    /**
     * {@return the report of {@link #report(int, long)}, with a last line when some live entries have
     * no site}: {@code "  3 of 40 live allocations have their site; 37 unsampled (leakDetection=sampled, 1 in 64)"}
     *
     * @param topN  the most sites to list, at least 0
     * @param minMb the smallest total to list, in MiB, at least 0
     * @param policy the policy that named the sites, or {@code null} for no such line
     */
    String report(int topN, long minMb, AllocSites policy) {
        if (topN < 0) {
            throw new IllegalArgumentException("allocReport(topN=" + topN + "): must be >= 0");
        }
        if (minMb < 0) {
            throw new IllegalArgumentException("allocReport(minMb=" + minMb + "): must be >= 0");
        }
        record Site(String site, long bytes, int count) {
        }
        Map<String, long[]> bySite = new HashMap<>();
        long total;
        int n;
        int named = 0;
        synchronized (lock) {
            for (Entry e : live.values()) {
                long[] acc = bySite.computeIfAbsent(e.allocation().site(), s -> new long[2]);
                acc[0] += e.allocation().bytes();
                acc[1]++;
                if (LeakDetection.hasSite(e.allocation().site())) {
                    named++;
                }
            }
            total = liveBytes;
            n = live.size();
        }
        List<Site> sites = new ArrayList<>();
        bySite.forEach((s, acc) -> sites.add(new Site(s, acc[0], (int) acc[1])));
        sites.sort(Comparator.comparingLong(Site::bytes).reversed().thenComparing(Site::site));
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "live device memory: %d allocation(s), %.1f MiB at %d site(s)",
                n, mib(total), sites.size())).append('\n');
        long minBytes = minMb > Long.MAX_VALUE >> 20 ? Long.MAX_VALUE : minMb << 20;
        int shown = 0;
        long restBytes = 0;
        int restSites = 0;
        for (Site s : sites) {
            if (shown < topN && s.bytes() >= minBytes) {
                sb.append(String.format(Locale.ROOT, "  %10.1f MiB  %6d  %s", mib(s.bytes()), s.count(), s.site()))
                        .append('\n');
                shown++;
            } else {
                restBytes += s.bytes();
                restSites++;
            }
        }
        if (restSites > 0) {
            sb.append(String.format(Locale.ROOT, "  ... %d more site(s), %.1f MiB", restSites, mib(restBytes)))
                    .append('\n');
        }
        String coverage = policy == null ? "" : policy.coverage(named, n, "live allocations");
        if (!coverage.isEmpty()) {
            sb.append("  ").append(coverage).append('\n');
        }
        return sb.toString();
    }

    private static double mib(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }
}
