// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.internal.ScriptedDriver;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * The caching allocator against a model, over the scripted driver with its events held: any
 * sequence of allocations, {@code recordStream} marks, frees on any stream, syncs, completions of
 * the recorded events and cache flushes never hands out a byte of a live block, hands a freed byte
 * to another stream only after the work it waited for is known complete, and holds exactly the
 * bytes the driver gave it and has not been given back.
 */
class CachingAllocatorProperties {

    /** One step; {@code kind}: 0-2 alloc, 3 recordStream, 4-5 free, 6 sync a stream, 7 complete the events, 8 emptyCache, 9 device sync. */
    record Op(int kind, int size, int stream, int pick) {
    }

    private static final long[] SIZES = {1, 100, 512, 513, 4096, 70_000, 1 << 20, (1 << 20) + 1, 3 << 20, 10 << 20, 11 << 20};

    @Provide
    Arbitrary<Op> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 9), Arbitraries.integers().between(0, SIZES.length - 1),
                Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 1000)).as(Op::new);
    }

    /** A live block: where, how big (rounded), its stream, and the streams marked as its users. */
    private record Live(long ptr, long size, int stream, Set<Integer> uses) {
    }

    /**
     * Freed bytes {@code [lo, hi)} and the streams whose work must be known complete before another
     * stream reuses them. Pieces of one free share one set, so a completion seen for one is seen for all.
     */
    private record Mark(long lo, long hi, Set<Integer> waitFor) {
    }

    /** An event record: the event, the stream (by index) and the marks' wait sets it covers. */
    private record Fence(long event, int stream, List<Set<Integer>> covered) {
    }

    @Property(tries = 60)
    void allocatorMatchesTheModel(@ForAll @Size(max = 60) List<@From("ops") Op> ops) {
        ScriptedDriver driver = new ScriptedDriver(256L << 20).holdEvents();
        CachingAllocator pool = new CachingAllocator(driver, () -> false);
        long[] streams = {0, driver.streamCreate(0), driver.streamCreate(1)};
        List<Live> live = new ArrayList<>();
        List<Mark> marks = new ArrayList<>();
        // The event records not yet seen complete, each with the marks it covers: their frees came before it.
        List<Fence> fences = new ArrayList<>();
        int seenRecords = 0;
        for (Op op : ops) {
            switch (op.kind()) {
                case 0, 1, 2 -> {
                    long bytes = SIZES[op.size()];
                    long got;
                    try {
                        got = pool.alloc(bytes, streams[op.stream()], "site", 0);
                    } catch (metrale.gpu.GpuException e) {
                        assertThat(e.error()).isEqualTo(metrale.gpu.CudaError.OUT_OF_MEMORY);
                        break;
                    }
                    long p = got;
                    // The block may be larger than the rounded request: a rest too small to split stays in it.
                    long size = pool.snapshot().chunks().stream().flatMap(c -> c.blocks().stream())
                            .filter(b -> b.ptr() == p).findFirst().orElseThrow().bytes();
                    assertThat(size).isGreaterThanOrEqualTo(CachingAllocator.roundSize(bytes));
                    for (Live l : live) {
                        assertThat(p >= l.ptr() + l.size() || l.ptr() >= p + size)
                                .as("[0x%x, +%d) overlaps the live %s", p, size, l).isTrue();
                    }
                    List<Mark> cut = new ArrayList<>();
                    for (Mark m : marks) {
                        if (m.hi() <= p || m.lo() >= p + size) {
                            cut.add(m);
                            continue;
                        }
                        Set<Integer> others = new HashSet<>(m.waitFor());
                        others.remove(op.stream());
                        assertThat(others).as("[0x%x, +%d) handed to stream %d while freed bytes [0x%x, 0x%x) wait for %s",
                                p, size, op.stream(), m.lo(), m.hi(), others).isEmpty();
                        if (m.lo() < p) {
                            cut.add(new Mark(m.lo(), p, m.waitFor()));
                        }
                        if (m.hi() > p + size) {
                            cut.add(new Mark(p + size, m.hi(), m.waitFor()));
                        }
                    }
                    marks = cut;
                    live.add(new Live(p, size, op.stream(), new HashSet<>()));
                }
                case 3 -> {
                    if (!live.isEmpty()) {
                        Live l = live.get(op.pick() % live.size());
                        pool.recordStream(l.ptr(), streams[op.stream()]);
                        l.uses().add(op.stream());
                    }
                }
                case 4, 5 -> {
                    if (!live.isEmpty()) {
                        Live l = live.remove(op.pick() % live.size());
                        // Freed on its own stream, or on another one (its free follows that stream's order).
                        int on = op.kind() == 4 ? l.stream() : op.stream();
                        pool.free(l.ptr(), streams[on]);
                        Set<Integer> waitFor = new HashSet<>(l.uses());
                        waitFor.add(on);
                        marks.add(new Mark(l.ptr(), l.ptr() + l.size(), waitFor));
                    }
                }
                case 6 -> {
                    driver.streamSynchronize(streams[op.stream()]);
                    pool.streamSynchronized(streams[op.stream()]);
                    for (Mark m : marks) {
                        m.waitFor().remove(op.stream());
                    }
                }
                case 7 -> {
                    driver.releaseEvents();
                    driver.holdEvents();
                }
                case 8 -> pool.emptyCache();
                default -> {
                    driver.ctxSynchronize();
                    pool.deviceSynchronized();
                    marks.forEach(m -> m.waitFor().clear());
                }
            }
            List<ScriptedDriver.Recorded> rs = driver.recordedEvents();
            for (ScriptedDriver.Recorded r : rs.subList(seenRecords, rs.size())) {
                int s = indexOf(streams, r.stream());
                List<Set<Integer>> covered = new ArrayList<>();
                for (Mark m : marks) {
                    if (m.waitFor().contains(s)) {
                        covered.add(m.waitFor());
                    }
                }
                fences.add(new Fence(r.event(), s, covered));
            }
            seenRecords = rs.size();
            // Events complete only in the steps above (a sync, a release, emptyCache's or the
            // out-of-memory retry's waits), so the model learns of each completion before the next step.
            for (var it = fences.iterator(); it.hasNext(); ) {
                Fence f = it.next();
                if (driver.isComplete(f.event())) {
                    f.covered().forEach(w -> w.remove(f.stream()));
                    it.remove();
                }
            }
            check(driver, pool, live);
        }
        pool.close((what, step) -> step.run());
        assertThat(driver.allocations()).as("close gives every chunk back").isEmpty();
    }

    private static int indexOf(long[] streams, long s) {
        for (int i = 0; i < streams.length; i++) {
            if (streams[i] == s) {
                return i;
            }
        }
        throw new AssertionError("an event recorded on an unknown stream " + s);
    }

    private static void check(ScriptedDriver driver, CachingAllocator pool, List<Live> live) {
        PoolStats st = pool.stats();
        assertThat(st.liveBlocks()).isEqualTo(live.size());
        assertThat(st.allocatedBytes()).isEqualTo(live.stream().mapToLong(Live::size).sum());
        assertThat(st.reservedBytes()).as("the bytes held are what the driver allocated minus what it freed")
                .isEqualTo(driver.usedBytes());
        assertThat(st.chunks()).isEqualTo(driver.allocations().size());
        assertThat(st.cachedBytes()).isEqualTo(st.reservedBytes() - st.allocatedBytes());
        assertThat(st.fragmentation()).isBetween(0.0, 1.0);
        for (Live l : live) {
            assertThat(pool.owns(l.ptr())).isTrue();
        }
        long reserved = 0;
        for (PoolSnapshot.Chunk c : pool.snapshot().chunks()) {
            assertThat(driver.allocations()).containsEntry(c.base(), c.bytes());
            reserved += c.bytes();
            long at = c.base();
            for (PoolSnapshot.Block b : c.blocks()) {
                assertThat(b.ptr()).as("blocks tile chunk 0x%x", c.base()).isEqualTo(at);
                assertThat(b.ptr() % 256).isZero();
                at += b.bytes();
            }
            assertThat(at).isEqualTo(c.base() + c.bytes());
        }
        assertThat(reserved).isEqualTo(st.reservedBytes());
    }
}
