// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records the kernel launches, asynchronous memsets and device-to-device
 * copies a region enqueues, so two executions of it can be diffed op by op
 * ({@link #endAndDiff(int)}). Off until {@link #begin()}.
 *
 * <p>An op is stored only between {@link #begin()} and the next
 * {@link #endAndDiff(int)}. Thread-safe: any number of threads may record at
 * once and nothing is lost. With recording off, {@link #record(TraceEntry)}
 * reads one volatile field, takes no lock and allocates nothing; callers that
 * build the entry should still guard with {@link #on()} so the entry is not
 * built either:
 * {@snippet :
 * if (trace.on()) {
 *     trace.record(TraceEntry.kernel(func, gx, gy, gz, bx, by, bz, smem, args));
 * }
 * }
 *
 * <p>Also holds the names of kernel handles ({@link #nameKernel}) that the
 * report and {@link KernelTiming} print.
 */
public final class LaunchTrace {

    private volatile boolean on;

    // Guarded by lock; on is only written while holding it, so an op recorded
    // after endAndDiff took the trace is dropped rather than leaking into the next one.
    private final Object lock = new Object();
    private ArrayList<TraceEntry> trace = new ArrayList<>();
    private List<TraceEntry> prev;

    private final ConcurrentHashMap<Long, String> names = new ConcurrentHashMap<>();

    /** Creates a trace that is off, with no previous trace and no kernel names. */
    public LaunchTrace() {
    }

    /** Clears the current trace and turns recording on. */
    public void begin() {
        synchronized (lock) {
            trace.clear();
            on = true;
        }
    }

    /**
     * Whether recording is on.
     *
     * @return {@code true} between {@link #begin()} and the next {@link #endAndDiff(int)}
     */
    public boolean on() {
        return on;
    }

    /**
     * Stores {@code e} if recording is on; otherwise drops it.
     *
     * @param e the op
     * @throws NullPointerException if recording is on and {@code e} is null
     */
    public void record(TraceEntry e) {
        if (!on) {
            return;
        }
        Objects.requireNonNull(e, "e");
        synchronized (lock) {
            if (on) {
                trace.add(e);
            }
        }
    }

    /**
     * The number of ops recorded since {@link #begin()}.
     *
     * @return the current trace's length
     */
    public int size() {
        synchronized (lock) {
            return trace.size();
        }
    }

    /**
     * A copy of the ops recorded since {@link #begin()}, in order.
     *
     * @return an unmodifiable list
     */
    public List<TraceEntry> current() {
        synchronized (lock) {
            return List.copyOf(trace);
        }
    }

    /**
     * Turns recording off and diffs this trace against the previous one, which
     * this one then replaces.
     *
     * <p>The report's first line is {@code "N differing op(s) of M"}, M being the
     * shorter trace's length; then {@code "OP COUNT differs: prev A vs cur B"} if
     * the lengths differ; then one line per differing op among the first M,
     * detailing at most {@code maxReport} of them (N counts them all):
     * {@code "#i NAME [kind] what; what"}, where each what is one of
     * {@code op OLD -> NEW}, {@code grid [x, y, z] -> [..]}, {@code block [..] -> [..]},
     * {@code smem A -> B}, {@code argK 0xOLD -> 0xNEW (Δ D)} (an integer, pointer or
     * bytes argument, or one whose kind is not known), {@code argK 2.0f -> 3.0f} (a float),
     * {@code argK 2.0 -> 3.0} (a double) and {@code argc A -> B}.
     * Every line ends in {@code '\n'}.
     *
     * @param maxReport the most differing ops to detail
     * @return the report, or empty on the first call
     * @throws IllegalArgumentException if {@code maxReport} is negative
     */
    public Optional<String> endAndDiff(int maxReport) {
        if (maxReport < 0) {
            throw new IllegalArgumentException("maxReport < 0: " + maxReport);
        }
        List<TraceEntry> cur;
        List<TraceEntry> before;
        synchronized (lock) {
            on = false;
            cur = trace;
            trace = new ArrayList<>();
            before = prev;
            prev = cur;
        }
        if (before == null) {
            return Optional.empty();
        }
        return Optional.of(diff(before, cur, maxReport));
    }

    /**
     * Diffs two traces in the format of {@link #endAndDiff(int)}, naming kernels by this trace's
     * names; touches neither the current nor the previous trace.
     *
     * @param prev      the earlier trace
     * @param cur       the later trace
     * @param maxReport the most differing ops to detail
     * @return the report
     * @throws IllegalArgumentException if {@code maxReport} is negative
     */
    public String diff(List<TraceEntry> prev, List<TraceEntry> cur, int maxReport) {
        if (maxReport < 0) {
            throw new IllegalArgumentException("maxReport < 0: " + maxReport);
        }
        Objects.requireNonNull(prev, "prev");
        Objects.requireNonNull(cur, "cur");
        StringBuilder out = new StringBuilder();
        if (prev.size() != cur.size()) {
            out.append("OP COUNT differs: prev ").append(prev.size())
                    .append(" vs cur ").append(cur.size()).append('\n');
        }
        int common = Math.min(prev.size(), cur.size());
        int n = 0;
        List<String> what = new ArrayList<>();
        for (int i = 0; i < common; i++) {
            TraceEntry p = prev.get(i);
            TraceEntry c = cur.get(i);
            if (p.equals(c)) {
                continue;
            }
            n++;
            if (n > maxReport) {
                continue;
            }
            what.clear();
            if (p.kind() != c.kind() || p.func() != c.func()) {
                what.add("op " + nameOf(p.func()) + " -> " + nameOf(c.func()));
            }
            if (p.gridX() != c.gridX() || p.gridY() != c.gridY() || p.gridZ() != c.gridZ()) {
                what.add("grid " + dims(p.gridX(), p.gridY(), p.gridZ())
                        + " -> " + dims(c.gridX(), c.gridY(), c.gridZ()));
            }
            if (p.blockX() != c.blockX() || p.blockY() != c.blockY() || p.blockZ() != c.blockZ()) {
                what.add("block " + dims(p.blockX(), p.blockY(), p.blockZ())
                        + " -> " + dims(c.blockX(), c.blockY(), c.blockZ()));
            }
            if (p.sharedMemBytes() != c.sharedMemBytes()) {
                what.add("smem " + Integer.toUnsignedString(p.sharedMemBytes())
                        + " -> " + Integer.toUnsignedString(c.sharedMemBytes()));
            }
            int argc = Math.min(p.argc(), c.argc());
            for (int a = 0; a < argc; a++) {
                long pv = p.arg(a);
                long cv = c.arg(a);
                if (pv != cv) {
                    what.add("arg" + a + " " + argChange(p.argKind(a) == c.argKind(a) ? c.argKind(a) : '?', pv, cv));
                }
            }
            if (p.argc() != c.argc()) {
                what.add("argc " + p.argc() + " -> " + c.argc());
            }
            out.append('#').append(i).append(' ').append(nameOf(c.func()))
                    .append(" [").append(c.kind().label()).append("] ")
                    .append(String.join("; ", what)).append('\n');
        }
        return n + " differing op(s) of " + common + "\n" + out;
    }

    /** A float or double as its value, anything else in the seed's hex form with the signed delta. */
    private static String argChange(char kind, long pv, long cv) {
        return switch (kind) {
            case TraceEntry.KIND_F32 -> Float.intBitsToFloat((int) pv) + "f -> " + Float.intBitsToFloat((int) cv) + "f";
            case TraceEntry.KIND_F64 -> Double.longBitsToDouble(pv) + " -> " + Double.longBitsToDouble(cv);
            // Wrapping subtraction of the words read as signed, as the seed's `cv as i64 - pv as i64`.
            default -> hex(pv) + " -> " + hex(cv) + " (Δ " + (cv - pv) + ")";
        };
    }

    private static String dims(int x, int y, int z) {
        return "[" + Integer.toUnsignedString(x) + ", " + Integer.toUnsignedString(y)
                + ", " + Integer.toUnsignedString(z) + "]";
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /**
     * Remembers a kernel handle's name as {@code module::func}; the runtime
     * calls it on every successful kernel lookup. A later call for the same
     * handle replaces the name.
     *
     * @param handle the function handle
     * @param module the module name
     * @param func   the function name
     * @throws NullPointerException if {@code module} or {@code func} is null
     */
    public void nameKernel(long handle, String module, String func) {
        Objects.requireNonNull(module, "module");
        Objects.requireNonNull(func, "func");
        names.put(handle, module + "::" + func);
    }

    /**
     * The {@code module::func} a handle was named as.
     *
     * @param handle the function handle
     * @return the name, or empty if the handle was never named
     */
    public Optional<String> kernelName(long handle) {
        return Optional.ofNullable(names.get(handle));
    }

    /**
     * The handle's name, or {@code fn@0x} and its lowercase hex digits if it was never named.
     *
     * @param handle the function handle
     * @return a printable name
     */
    public String nameOf(long handle) {
        String name = names.get(handle);
        return name != null ? name : "fn@" + hex(handle);
    }
}
