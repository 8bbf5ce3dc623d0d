// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wall-clock spans around launches, aggregated by kernel name. Off by default
 * ({@link #setEnabled(boolean)}; the runtime turns it on for {@code timing(true)},
 * {@code metrale.timing} or {@code METRALE_TIMING}). A span measures the host side of a launch (the enqueue), not
 * the kernel's run on the device, unless the runtime syncs before ending it.
 * Thread-safe.
 * {@snippet :
 * long t0 = timing.begin();
 * launchKernel(func);
 * timing.end(func, t0);
 * }
 */
public final class KernelTiming {

    private static final class Acc {
        long count;
        long total;
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;

        synchronized void add(long nanos) {
            count++;
            total += nanos;
            min = Math.min(min, nanos);
            max = Math.max(max, nanos);
        }

        synchronized TimingStats snapshot() {
            return count == 0 ? new TimingStats(0, 0, 0, 0) : new TimingStats(count, total, min, max);
        }
    }

    private final LaunchTrace names;
    private volatile boolean enabled;
    private final ConcurrentHashMap<String, Acc> stats = new ConcurrentHashMap<>();

    /**
     * Creates disabled timing that names kernels through {@code names}.
     *
     * @param names the trace whose {@link LaunchTrace#nameOf(long)} names each kernel
     */
    KernelTiming(LaunchTrace names) {
        this.names = names;
    }

    /**
     * Whether spans are measured.
     *
     * @return {@code true} if {@link #begin()} reads the clock
     */
    public boolean enabled() {
        return enabled;
    }

    /**
     * Turns timing on or off. Spans begun while on still end normally.
     *
     * @param on whether to measure
     */
    public void setEnabled(boolean on) {
        enabled = on;
    }

    /**
     * Starts a span.
     *
     * @return {@link System#nanoTime()} if enabled (never 0), else 0
     */
    public long begin() {
        if (!enabled) {
            return 0;
        }
        long t = System.nanoTime();
        return t == 0 ? 1 : t;
    }

    /**
     * Ends a span begun by {@link #begin()} and adds it to the kernel's stats,
     * under {@link LaunchTrace#nameOf(long)} of the owning {@link Telemetry}.
     *
     * @param funcHandle the launched kernel's function handle
     * @param beginNanos what {@link #begin()} returned; 0 makes this a no-op
     */
    public void end(long funcHandle, long beginNanos) {
        if (beginNanos == 0) {
            return;
        }
        add(funcHandle, System.nanoTime() - beginNanos);
    }

    /** Adds one span of {@code nanos} to the kernel's stats. */
    void add(long funcHandle, long nanos) {
        stats.computeIfAbsent(names.nameOf(funcHandle), k -> new Acc()).add(nanos);
    }

    /**
     * The stats of each kernel, by name, most total time first.
     *
     * @return a new {@link LinkedHashMap} from kernel name to stats
     */
    public Map<String, TimingStats> stats() {
        List<Map.Entry<String, TimingStats>> entries = new ArrayList<>();
        stats.forEach((name, acc) -> entries.add(Map.entry(name, acc.snapshot())));
        entries.sort((a, b) -> {
            int c = Long.compare(b.getValue().totalNanos(), a.getValue().totalNanos());
            return c != 0 ? c : a.getKey().compareTo(b.getKey());
        });
        Map<String, TimingStats> out = new LinkedHashMap<>();
        for (Map.Entry<String, TimingStats> e : entries) {
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /**
     * A table of every kernel's count, total, mean, min and max time, most total time first.
     *
     * @return the report, ending in a newline
     */
    public String report() {
        Map<String, TimingStats> all = stats();
        StringBuilder sb = new StringBuilder();
        sb.append("Kernel timing: ").append(all.size()).append(" kernel(s)");
        if (!enabled && all.isEmpty()) {
            sb.append(" (timing is off: Gpu.builder().timing(true), metrale.timing=true or METRALE_TIMING=1)");
        }
        sb.append('\n');
        if (all.isEmpty()) {
            return sb.toString();
        }
        int width = "kernel".length();
        for (String name : all.keySet()) {
            width = Math.max(width, name.length());
        }
        String row = "  %-" + width + "s  %10s  %12s  %10s  %10s  %10s\n";
        sb.append(String.format(Locale.ROOT, row, "kernel", "count", "total ms", "mean us", "min us", "max us"));
        for (Map.Entry<String, TimingStats> e : all.entrySet()) {
            TimingStats s = e.getValue();
            sb.append(String.format(Locale.ROOT, row, e.getKey(), s.count(),
                    String.format(Locale.ROOT, "%.3f", s.totalNanos() / 1e6),
                    String.format(Locale.ROOT, "%.3f", s.meanNanos() / 1e3),
                    String.format(Locale.ROOT, "%.3f", s.minNanos() / 1e3),
                    String.format(Locale.ROOT, "%.3f", s.maxNanos() / 1e3)));
        }
        return sb.toString();
    }

    /** Forgets every span; enabled stays as it is. */
    public void reset() {
        stats.clear();
    }
}
