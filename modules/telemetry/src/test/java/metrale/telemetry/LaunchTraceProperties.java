// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class LaunchTraceProperties {

    enum Field { KIND, FUNC, GRID_X, GRID_Y, GRID_Z, BLOCK_X, BLOCK_Y, BLOCK_Z, SMEM, ARG }

    @Provide
    Arbitrary<TraceEntry> entry() {
        Arbitrary<Integer> dim = Arbitraries.integers().between(0, 1 << 16);
        Arbitrary<long[]> args = Arbitraries.longs().array(long[].class).ofMaxSize(5);
        Arbitrary<Long> func = Arbitraries.oneOf(Arbitraries.of(0L, 0x1000L, 0x2000L), Arbitraries.longs());
        return Combinators.combine(
                        Arbitraries.of(OpKind.class), func, dim.list().ofSize(6), dim, args)
                .as((kind, f, d, smem, a) -> new TraceEntry(kind, f, d.get(0), d.get(1), d.get(2),
                        d.get(3), d.get(4), d.get(5), smem, a));
    }

    @Provide
    Arbitrary<List<TraceEntry>> trace() {
        return entry().list().ofMaxSize(30);
    }

    private static String run(LaunchTrace t, List<TraceEntry> prev, List<TraceEntry> cur, int maxReport) {
        t.begin();
        prev.forEach(t::record);
        assertThat(t.endAndDiff(maxReport)).isEmpty();
        t.begin();
        cur.forEach(t::record);
        return t.endAndDiff(maxReport).orElseThrow();
    }

    @Property
    void identicalTracesDoNotDiffer(@ForAll("trace") List<TraceEntry> trace,
                                    @ForAll @IntRange(max = 50) int maxReport) {
        String report = run(new LaunchTrace(), trace, List.copyOf(trace), maxReport);
        assertThat(report).isEqualTo("0 differing op(s) of " + trace.size() + "\n");
    }

    @Property
    void oneChangedFieldIsReportedAlone(@ForAll("trace") @Size(min = 1) List<TraceEntry> trace,
                                        @ForAll @IntRange(max = 1000) int where,
                                        @ForAll Field field,
                                        @ForAll long delta,
                                        @ForAll @IntRange(max = 4) int argIndex) {
        Assume.that(delta != 0 && (int) delta != 0);
        int i = where % trace.size();
        TraceEntry p = trace.get(i);
        Assume.that(field != Field.ARG || argIndex < p.argc());
        int d = (int) delta;
        long[] args = p.args();
        TraceEntry c;
        String what;
        String name = "fn@0x" + Long.toHexString(p.func());
        switch (field) {
            case KIND -> {
                OpKind kind = OpKind.values()[(p.kind().ordinal() + 1 + (d & 1)) % 3];
                c = new TraceEntry(kind, p.func(), p.gridX(), p.gridY(), p.gridZ(),
                        p.blockX(), p.blockY(), p.blockZ(), p.sharedMemBytes(), args);
                what = "op " + name + " -> " + name;
            }
            case FUNC -> {
                long f = p.func() + delta;
                c = new TraceEntry(p.kind(), f, p.gridX(), p.gridY(), p.gridZ(),
                        p.blockX(), p.blockY(), p.blockZ(), p.sharedMemBytes(), args);
                name = "fn@0x" + Long.toHexString(f);
                what = "op fn@0x" + Long.toHexString(p.func()) + " -> " + name;
            }
            case GRID_X, GRID_Y, GRID_Z -> {
                int[] g = {p.gridX(), p.gridY(), p.gridZ()};
                int[] ng = g.clone();
                ng[field.ordinal() - Field.GRID_X.ordinal()] += d;
                c = new TraceEntry(p.kind(), p.func(), ng[0], ng[1], ng[2],
                        p.blockX(), p.blockY(), p.blockZ(), p.sharedMemBytes(), args);
                what = "grid " + dims(g) + " -> " + dims(ng);
            }
            case BLOCK_X, BLOCK_Y, BLOCK_Z -> {
                int[] b = {p.blockX(), p.blockY(), p.blockZ()};
                int[] nb = b.clone();
                nb[field.ordinal() - Field.BLOCK_X.ordinal()] += d;
                c = new TraceEntry(p.kind(), p.func(), p.gridX(), p.gridY(), p.gridZ(),
                        nb[0], nb[1], nb[2], p.sharedMemBytes(), args);
                what = "block " + dims(b) + " -> " + dims(nb);
            }
            case SMEM -> {
                int s = p.sharedMemBytes() + d;
                c = new TraceEntry(p.kind(), p.func(), p.gridX(), p.gridY(), p.gridZ(),
                        p.blockX(), p.blockY(), p.blockZ(), s, args);
                what = "smem " + Integer.toUnsignedString(p.sharedMemBytes()) + " -> " + Integer.toUnsignedString(s);
            }
            case ARG -> {
                long old = args[argIndex];
                args[argIndex] = old + delta;
                c = new TraceEntry(p.kind(), p.func(), p.gridX(), p.gridY(), p.gridZ(),
                        p.blockX(), p.blockY(), p.blockZ(), p.sharedMemBytes(), args);
                what = "arg" + argIndex + " 0x" + Long.toHexString(old) + " -> 0x"
                        + Long.toHexString(old + delta) + " (Δ " + delta + ")";
            }
            default -> throw new AssertionError(field);
        }
        List<TraceEntry> cur = new ArrayList<>(trace);
        cur.set(i, c);
        String report = run(new LaunchTrace(), trace, cur, 1);
        assertThat(report).isEqualTo("1 differing op(s) of " + trace.size() + "\n"
                + "#" + i + " " + name + " [" + c.kind().label() + "] " + what + "\n");
    }

    private static String dims(int[] d) {
        return "[" + Integer.toUnsignedString(d[0]) + ", " + Integer.toUnsignedString(d[1])
                + ", " + Integer.toUnsignedString(d[2]) + "]";
    }

    @Property
    void insertedOrRemovedOpsReportTheCountAndDiffTheCommonPrefix(
            @ForAll("trace") List<TraceEntry> trace,
            @ForAll("trace") @Size(min = 1, max = 5) List<TraceEntry> extra,
            @ForAll @IntRange(max = 1000) int where,
            @ForAll boolean remove) {
        int at = where % (trace.size() + 1);
        List<TraceEntry> longer = new ArrayList<>(trace);
        longer.addAll(at, extra);
        List<TraceEntry> prev = remove ? longer : trace;
        List<TraceEntry> cur = remove ? trace : longer;
        int common = trace.size();
        List<Integer> differing = new ArrayList<>();
        for (int i = 0; i < common; i++) {
            if (!prev.get(i).equals(cur.get(i))) {
                differing.add(i);
            }
        }
        String report = run(new LaunchTrace(), prev, cur, Integer.MAX_VALUE);
        List<String> lines = Arrays.asList(report.split("\n"));
        assertThat(lines.get(0)).isEqualTo(differing.size() + " differing op(s) of " + common);
        assertThat(lines.get(1)).isEqualTo("OP COUNT differs: prev " + prev.size() + " vs cur " + cur.size());
        assertThat(lines.subList(2, lines.size()))
                .extracting(l -> Integer.parseInt(l.substring(1, l.indexOf(' '))))
                .containsExactlyElementsOf(differing);
        if (at == trace.size()) {
            assertThat(report).isEqualTo("0 differing op(s) of " + common + "\nOP COUNT differs: prev "
                    + prev.size() + " vs cur " + cur.size() + "\n");
        }
    }

    @Property
    void maxReportNeverChangesTheCount(@ForAll("trace") List<TraceEntry> prev,
                                       @ForAll("trace") List<TraceEntry> cur,
                                       @ForAll @IntRange(max = 40) int maxReport) {
        String full = run(new LaunchTrace(), prev, cur, Integer.MAX_VALUE);
        String cut = run(new LaunchTrace(), prev, cur, maxReport);
        String first = full.substring(0, full.indexOf('\n'));
        assertThat(cut).startsWith(first + "\n");
        int n = Integer.parseInt(first.substring(0, first.indexOf(' ')));
        List<String> fullOps = full.lines().filter(l -> l.startsWith("#")).toList();
        List<String> cutOps = cut.lines().filter(l -> l.startsWith("#")).toList();
        assertThat(fullOps).hasSize(n);
        assertThat(cutOps).isEqualTo(fullOps.subList(0, Math.min(n, maxReport)));
    }
}
