// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every kernel lookup, found or not, with the call site that made it,
 * aggregated into one row per (module, function, outcome, site). Thread-safe.
 */
public final class KernelAudit {

    private record Key(String module, String func, boolean ok, String site) {
    }

    // seq orders rows by first sight; a row created by a racing thread that
    // loses computeIfAbsent is discarded, so gaps in seq are harmless.
    private static final class Row {
        final long seq;
        final LongAdder count = new LongAdder();

        Row(long seq) {
            this.seq = seq;
        }
    }

    private final ConcurrentHashMap<Key, Row> rows = new ConcurrentHashMap<>();
    private final AtomicLong nextSeq = new AtomicLong();

    /** Creates an empty audit. */
    public KernelAudit() {
    }

    /**
     * Counts one lookup.
     *
     * @param module the module name asked for
     * @param func   the function name asked for
     * @param ok     whether the function was found
     * @param site   where the lookup was made, e.g. {@code File.java:123} from {@link CallSites#caller()}
     * @throws NullPointerException if a string is null
     */
    public void record(String module, String func, boolean ok, String site) {
        Key key = new Key(Objects.requireNonNull(module, "module"), Objects.requireNonNull(func, "func"),
                ok, Objects.requireNonNull(site, "site"));
        rows.computeIfAbsent(key, k -> new Row(nextSeq.getAndIncrement())).count.increment();
    }

    /**
     * The lookups so far, one row per (module, function, outcome, site), in the
     * order each row was first seen.
     *
     * @return an unmodifiable snapshot
     */
    public List<KernelLookup> lookups() {
        record Snap(long seq, KernelLookup row) {
        }
        List<Snap> snaps = new ArrayList<>();
        rows.forEach((k, r) -> snaps.add(new Snap(r.seq,
                new KernelLookup(k.module(), k.func(), k.ok(), k.site(), r.count.sum()))));
        snaps.sort(Comparator.comparingLong(Snap::seq));
        return snaps.stream().map(Snap::row).toList();
    }

    /**
     * A table of what was looked up, from where and how often, followed by a
     * {@code FAILED} section listing the lookups that found nothing.
     *
     * @return the report, ending in a newline
     */
    public String report() {
        List<KernelLookup> all = lookups();
        List<KernelLookup> failed = all.stream().filter(l -> !l.ok()).toList();
        long total = all.stream().mapToLong(KernelLookup::count).sum();
        long failedTotal = failed.stream().mapToLong(KernelLookup::count).sum();
        StringBuilder sb = new StringBuilder();
        sb.append("Kernel lookups: ").append(total).append(" in ").append(all.size())
                .append(" row(s)\n");
        table(sb, all, true);
        sb.append("FAILED: ").append(failedTotal).append(" lookup(s) in ").append(failed.size())
                .append(" row(s)\n");
        table(sb, failed, false);
        return sb.toString();
    }

    private static void table(StringBuilder sb, List<KernelLookup> rows, boolean withOutcome) {
        int width = "kernel".length();
        for (KernelLookup l : rows) {
            width = Math.max(width, l.module().length() + 2 + l.func().length());
        }
        for (KernelLookup l : rows) {
            sb.append(String.format(Locale.ROOT, "  %8d  %-" + width + "s  ", l.count(), l.module() + "::" + l.func()));
            if (withOutcome) {
                sb.append(l.ok() ? "ok      " : "FAILED  ");
            }
            sb.append(l.site()).append('\n');
        }
    }

    /** Forgets every lookup. */
    public void clear() {
        rows.clear();
    }
}
