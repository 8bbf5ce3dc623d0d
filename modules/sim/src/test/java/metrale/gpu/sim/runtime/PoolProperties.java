// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.MemoryPool;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.PoolStats;
import metrale.gpu.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * The caching pool against a model, on the simulator: any sequence of stream-ordered allocations,
 * uses (memsets) on the owning stream and on streams marked with {@code recordStream}, frees,
 * syncs and cache flushes keeps live blocks disjoint and aligned, the counters exact, the chunks
 * tiled by their blocks, every block 256-byte aligned with its bytes its own, and no stream-order
 * race reported.
 */
class PoolProperties {

    /** One step; {@code kind}: 0-2 alloc, 3 use on the owner, 4 recordStream and use, 5 free, 6 sync, 7 emptyCache. */
    record Op(int kind, int size, int stream, int pick) {
    }

    private static final long[] SIZES = {1, 100, 512, 513, 4096, 70_000, 1 << 20, (1 << 20) + 1, 3 << 20, 11 << 20};

    @Provide
    Arbitrary<Op> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 7), Arbitraries.integers().between(0, SIZES.length - 1),
                Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 1000)).as(Op::new);
    }

    /** A live block in the model: where, how big, its owner, and the byte every one of its bytes holds. */
    private record Live(DevicePtr ptr, long bytes, int stream, int tag) {
    }

    @Property(tries = 40)
    void poolMatchesTheModel(@ForAll @Size(max = 50) List<@From("ops") Op> ops, @ForAll("seeds") long seed) {
        try (Gpu gpu = sim().allocator("caching").quarantineBytes(0).backendOption("sim.seed", Long.toString(seed)).open()) {
            MemoryPool pool = gpu.pool();
            Stream[] streams = {Stream.DEFAULT, gpu.createStream(), gpu.createStream(true)};
            List<Live> live = new ArrayList<>();
            int tag = 1;
            for (Op op : ops) {
                switch (op.kind()) {
                    case 0, 1, 2 -> {
                        long bytes = SIZES[op.size()];
                        DevicePtr p = pool.alloc(bytes, streams[op.stream()]);
                        int t = tag++ & 0xff;
                        gpu.memsetAsync(p, t, bytes, streams[op.stream()]);
                        live.add(new Live(p, bytes, op.stream(), t));
                    }
                    case 3 -> {
                        if (!live.isEmpty()) {
                            Live l = live.get(op.pick() % live.size());
                            gpu.memsetAsync(l.ptr(), l.tag(), l.bytes(), streams[l.stream()]);
                        }
                    }
                    case 4 -> {
                        if (!live.isEmpty()) {
                            Live l = live.get(op.pick() % live.size());
                            Stream other = streams[op.stream()];
                            // The other stream first waits for the owner's work, then uses the block too.
                            metrale.gpu.Event e = gpu.createEvent();
                            gpu.recordEvent(e, streams[l.stream()]);
                            gpu.streamWaitEvent(other, e);
                            gpu.destroyEvent(e);
                            gpu.memsetAsync(l.ptr(), l.tag(), l.bytes(), other);
                            pool.recordStream(l.ptr(), other);
                        }
                    }
                    case 5 -> {
                        if (!live.isEmpty()) {
                            Live l = live.remove(op.pick() % live.size());
                            pool.free(l.ptr());
                        }
                    }
                    case 6 -> gpu.synchronize(streams[op.stream()]);
                    default -> pool.emptyCache();
                }
                check(gpu, pool, live);
            }
            gpu.synchronize();
            for (Live l : live) {
                byte[] b = new byte[(int) Math.min(l.bytes(), 1 << 16)];
                gpu.copyD2H(l.ptr(), b);
                byte[] want = new byte[b.length];
                Arrays.fill(want, (byte) l.tag());
                assertThat(b).as("the bytes of %s", l).isEqualTo(want);
            }
            assertThat(pool.races()).as("stream-order races").isEmpty();
            for (Live l : live) {
                pool.free(l.ptr());
            }
            assertThat(pool.stats().liveBlocks()).isZero();
        }
    }

    /** The snapshot's SVG closes what it opens and its JSON is balanced, with a live block's site in both. */
    @net.jqwik.api.Example
    void snapshotRendersWellFormed() throws Exception {
        try (Gpu gpu = sim().allocator("caching").quarantineBytes(0).open()) {
            MemoryPool pool = gpu.pool();
            DevicePtr a = pool.alloc(3000, Stream.DEFAULT); String site = "PoolProperties.java:" + (new Throwable().getStackTrace()[0].getLineNumber());
            DevicePtr b = pool.alloc(5 << 20, Stream.DEFAULT);
            pool.free(b);
            PoolSnapshot snap = pool.snapshot();
            String svg = snap.toSvg();
            assertThat(svg).startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\"").endsWith("</svg>\n");
            assertThat(svg.split("<polyline", -1)).hasSize(3);
            // Every element opened is closed: self-closing, or by its end tag.
            long opened = java.util.regex.Pattern.compile("<(rect|text|line|polyline|title)\\b(?:[^>]*[^/])?>").matcher(svg).results().count();
            long closed = java.util.regex.Pattern.compile("</(rect|text|line|polyline|title)>").matcher(svg).results().count();
            assertThat(closed).isEqualTo(opened);
            assertThat(svg).contains(site);
            String json = snap.toJson();
            int depth = 0;
            boolean inString = false;
            for (int i = 0; i < json.length(); i++) {
                char c = json.charAt(i);
                if (inString) {
                    if (c == '\\') {
                        i++;
                    } else if (c == '"') {
                        inString = false;
                    }
                } else if (c == '"') {
                    inString = true;
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                    assertThat(depth).as("nesting at %d", i).isNotNegative();
                }
            }
            assertThat(depth).isZero();
            assertThat(json).contains("\"site\":\"" + site + "\"");
            pool.free(a);
        }
    }

    @Provide
    Arbitrary<Long> seeds() {
        return Arbitraries.longs().between(0, 1000);
    }

    private static void check(Gpu gpu, MemoryPool pool, List<Live> live) {
        PoolStats st = pool.stats();
        assertThat(st.liveBlocks()).isEqualTo(live.size());
        long requested = live.stream().mapToLong(Live::bytes).sum();
        assertThat(st.requestedBytes()).isEqualTo(requested);
        assertThat(st.allocatedBytes()).isGreaterThanOrEqualTo(requested);
        assertThat(st.reservedBytes()).isGreaterThanOrEqualTo(st.allocatedBytes());
        assertThat(st.cachedBytes()).isEqualTo(st.reservedBytes() - st.allocatedBytes());
        assertThat(st.fragmentation()).isBetween(0.0, 1.0);
        assertThat(gpu.liveAllocations()).extracting(Allocation::ptr)
                .containsExactlyInAnyOrderElementsOf(live.stream().map(Live::ptr).toList());
        List<Live> byAddr = new ArrayList<>(live);
        byAddr.sort(Comparator.comparingLong(l -> l.ptr().address()));
        for (int i = 0; i < byAddr.size(); i++) {
            Live l = byAddr.get(i);
            assertThat(l.ptr().address() % 256).as("alignment of %s", l).isZero();
            if (i > 0) {
                Live prev = byAddr.get(i - 1);
                assertThat(prev.ptr().address() + prev.bytes()).as("%s overlaps %s", prev, l).isLessThanOrEqualTo(l.ptr().address());
            }
        }
        PoolSnapshot snap = pool.snapshot();
        assertThat(snap.chunks()).hasSize(st.chunks());
        long reserved = 0;
        for (PoolSnapshot.Chunk c : snap.chunks()) {
            reserved += c.bytes();
            long at = c.base();
            for (PoolSnapshot.Block b : c.blocks()) {
                assertThat(b.ptr()).as("blocks tile chunk 0x%x", c.base()).isEqualTo(at);
                at += b.bytes();
            }
            assertThat(at).isEqualTo(c.base() + c.bytes());
        }
        assertThat(reserved).isEqualTo(st.reservedBytes());
    }
}
