// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts stream syncs, launches and copies with their bytes. Each count is a
 * {@link LongAdder}: cheap from many threads, allocation-free.
 *
 * <p>Every device-to-host copy is a hidden sync point. With
 * {@linkplain #setD2hSiteTrace(boolean) site tracing} on (the runtime turns it
 * on for {@code d2hTrace(true)}, {@code metrale.d2h.trace} or {@code METRALE_D2H_TRACE}), each
 * {@link #d2hCopy(long)} also walks the stack to count its caller's
 * {@link CallSites#caller() site}, which costs a stack walk per copy.
 */
public final class Counters {

    private final LongAdder streamSyncs = new LongAdder();
    private final LongAdder launches = new LongAdder();
    private final LongAdder h2dCopies = new LongAdder();
    private final LongAdder d2hCopies = new LongAdder();
    private final LongAdder d2dCopies = new LongAdder();
    private final LongAdder bytesH2D = new LongAdder();
    private final LongAdder bytesD2H = new LongAdder();
    private final LongAdder bytesD2D = new LongAdder();

    private volatile boolean d2hSiteTrace;
    private final ConcurrentHashMap<String, LongAdder> d2hSites = new ConcurrentHashMap<>();

    /** Creates counters at zero, with D2H site tracing off. */
    public Counters() {
    }

    /** Counts one stream, event or context synchronization. */
    public void streamSync() {
        streamSyncs.increment();
    }

    /** Counts one kernel launch. */
    public void launch() {
        launches.increment();
    }

    /**
     * Counts one host-to-device copy.
     *
     * @param bytes the bytes copied
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public void h2dCopy(long bytes) {
        checkBytes(bytes);
        h2dCopies.increment();
        bytesH2D.add(bytes);
    }

    /**
     * Counts one device-to-host copy and, with site tracing on, its caller's site.
     *
     * @param bytes the bytes copied
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public void d2hCopy(long bytes) {
        checkBytes(bytes);
        d2hCopies.increment();
        bytesD2H.add(bytes);
        if (d2hSiteTrace) {
            d2hSites.computeIfAbsent(CallSites.caller(), s -> new LongAdder()).increment();
        }
    }

    /**
     * Counts one device-to-device copy.
     *
     * @param bytes the bytes copied
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public void d2dCopy(long bytes) {
        checkBytes(bytes);
        d2dCopies.increment();
        bytesD2D.add(bytes);
    }

    private static void checkBytes(long bytes) {
        if (bytes < 0) {
            throw negativeBytes(bytes);
        }
    }

    private static IllegalArgumentException negativeBytes(long bytes) {
        return new IllegalArgumentException("bytes < 0: " + bytes);
    }

    /**
     * Stream, event and context synchronizations so far.
     *
     * @return the count
     */
    public long streamSyncs() {
        return streamSyncs.sum();
    }

    /**
     * Kernel launches so far.
     *
     * @return the count
     */
    public long launches() {
        return launches.sum();
    }

    /**
     * Host-to-device copies so far.
     *
     * @return the count
     */
    public long h2dCopies() {
        return h2dCopies.sum();
    }

    /**
     * Device-to-host copies so far.
     *
     * @return the count
     */
    public long d2hCopies() {
        return d2hCopies.sum();
    }

    /**
     * Device-to-device copies so far.
     *
     * @return the count
     */
    public long d2dCopies() {
        return d2dCopies.sum();
    }

    /**
     * Bytes copied host to device so far.
     *
     * @return the byte count
     */
    public long bytesH2D() {
        return bytesH2D.sum();
    }

    /**
     * Bytes copied device to host so far.
     *
     * @return the byte count
     */
    public long bytesD2H() {
        return bytesD2H.sum();
    }

    /**
     * Bytes copied device to device so far.
     *
     * @return the byte count
     */
    public long bytesD2D() {
        return bytesD2D.sum();
    }

    /**
     * Turns counting of D2H call sites on or off. Sites already counted are kept.
     *
     * @param on whether to count sites
     */
    public void setD2hSiteTrace(boolean on) {
        d2hSiteTrace = on;
    }

    /**
     * Whether D2H call sites are counted.
     *
     * @return {@code true} if site tracing is on
     */
    public boolean d2hSiteTrace() {
        return d2hSiteTrace;
    }

    /**
     * D2H copies by call site, largest count first; equal counts by site name.
     *
     * @return a new {@link LinkedHashMap} from site to count
     */
    public Map<String, Long> d2hSites() {
        List<Map.Entry<String, Long>> entries = new ArrayList<>();
        d2hSites.forEach((site, n) -> entries.add(Map.entry(site, n.sum())));
        entries.sort(Map.Entry.<String, Long>comparingByValue().reversed()
                .thenComparing(Map.Entry.comparingByKey()));
        Map<String, Long> out = new LinkedHashMap<>();
        for (Map.Entry<String, Long> e : entries) {
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /**
     * A table of the {@code topN} call sites with the most D2H copies.
     *
     * @param topN the most sites to list
     * @return the report, ending in a newline
     * @throws IllegalArgumentException if {@code topN} is negative
     */
    public String d2hSiteReport(int topN) {
        if (topN < 0) {
            throw new IllegalArgumentException("topN < 0: " + topN);
        }
        Map<String, Long> sites = d2hSites();
        long traced = sites.values().stream().mapToLong(Long::longValue).sum();
        StringBuilder sb = new StringBuilder();
        sb.append("D2H copies by call site: ").append(traced).append(" copies at ")
                .append(sites.size()).append(" site(s)");
        if (!d2hSiteTrace && sites.isEmpty()) {
            sb.append(" (site tracing is off: Gpu.builder().d2hTrace(true), metrale.d2h.trace=true or METRALE_D2H_TRACE=1)");
        }
        sb.append('\n');
        int shown = 0;
        for (Map.Entry<String, Long> e : sites.entrySet()) {
            if (shown++ == topN) {
                sb.append("  ... ").append(sites.size() - topN).append(" more site(s)\n");
                break;
            }
            sb.append(String.format(Locale.ROOT, "  %10d  %s\n", e.getValue(), e.getKey()));
        }
        return sb.toString();
    }

    /** Sets every count to zero and forgets the D2H sites; site tracing stays as it is. */
    public void reset() {
        streamSyncs.reset();
        launches.reset();
        h2dCopies.reset();
        d2hCopies.reset();
        d2dCopies.reset();
        bytesH2D.reset();
        bytesD2H.reset();
        bytesD2D.reset();
        d2hSites.clear();
    }
}
