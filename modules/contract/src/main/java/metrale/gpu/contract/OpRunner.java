// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static metrale.gpu.contract.OpSequenceProperties.LEGACY;
import static metrale.gpu.contract.OpSequenceProperties.STREAMS;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.contract.OpSequenceProperties.Add;
import metrale.gpu.contract.OpSequenceProperties.Alloc;
import metrale.gpu.contract.OpSequenceProperties.DevCopy;
import metrale.gpu.contract.OpSequenceProperties.Fill;
import metrale.gpu.contract.OpSequenceProperties.Free;
import metrale.gpu.contract.OpSequenceProperties.Graph;
import metrale.gpu.contract.OpSequenceProperties.HostRead;
import metrale.gpu.contract.OpSequenceProperties.HostWrite;
import metrale.gpu.contract.OpSequenceProperties.Memset;
import metrale.gpu.contract.OpSequenceProperties.Op;
import metrale.gpu.contract.OpSequenceProperties.Sync;

/**
 * Runs an {@link OpSequenceProperties} program on a runtime and keeps the plain Java model of
 * device memory it is checked against: each buffer's bytes, the stream that last touched it, and
 * the reads still to compare at a stream's next sync.
 */
final class OpRunner {

    private static final class Buf {
        final DevicePtr ptr;
        final byte[] model;
        int last;

        Buf(DevicePtr ptr, int bytes, int last) {
            this.ptr = ptr;
            this.model = new byte[bytes];
            this.last = last;
        }

        ByteBuffer le() {
            return ByteBuffer.wrap(model).order(ByteOrder.LITTLE_ENDIAN);
        }

        int[] ints(int offset, int count) {
            int[] out = new int[count];
            ByteBuffer b = le();
            for (int i = 0; i < count; i++) {
                out[i] = b.getInt(4 * (offset + i));
            }
            return out;
        }
    }

    /** An async D2H whose destination is compared with the model's snapshot at the stream's next sync. */
    private record PendingRead(String what, MemorySegment dst, int[] expected, Runnable release) {
    }

    final Gpu gpu;
    final Stream[] streams = new Stream[STREAMS];
    final Stream capture;
    final Event[] events = new Event[8];
    int nextEvent;
    final KernelArgs args = new KernelArgs();
    final KernelHandle fill;
    final KernelHandle add;
    final Map<Integer, Buf> bufs = new HashMap<>();
    final List<List<PendingRead>> pendingReads = new ArrayList<>();
    final List<List<MemorySegment>> retained = new ArrayList<>();

    final boolean exactMemInfo;
    long freeAtStart;

    OpRunner(Gpu gpu, boolean exactMemInfo) {
        this.gpu = gpu;
        this.exactMemInfo = exactMemInfo;
        streams[0] = Stream.DEFAULT;
        streams[1] = gpu.createStream(false);
        streams[2] = gpu.createStream(true);
        streams[3] = gpu.createStream(true);
        capture = gpu.createStream(true);
        for (int i = 0; i < events.length; i++) {
            events[i] = gpu.createEvent(2);
        }
        for (int i = 0; i < STREAMS; i++) {
            pendingReads.add(new ArrayList<>());
            retained.add(new ArrayList<>());
        }
        fill = gpu.kernel(GpuContract.MODULE, "fill_f32");
        add = gpu.kernel(GpuContract.MODULE, "add_i32");
        freeAtStart = gpu.deviceFreeMemory();
    }

    /** Orders later work on stream {@code s} after everything done so far to {@code b}. */
    void orderInto(Buf b, int s) {
        if (b.last != s) {
            Event e = events[nextEvent++ % events.length];
            gpu.recordEvent(e, streams[b.last]);
            gpu.streamWaitEvent(streams[s], e);
        }
        b.last = s;
    }

    void syncStream(int s) {
        gpu.synchronize(streams[s]);
        drain(s);
    }

    void syncDevice() {
        gpu.synchronize();
        for (int s = 0; s < STREAMS; s++) {
            drain(s);
        }
    }

    void drain(int s) {
        for (PendingRead p : pendingReads.get(s)) {
            int[] got = p.dst().toArray(ValueLayout.JAVA_INT);
            assertThat(got).as(p.what()).containsExactly(p.expected());
            p.release().run();
        }
        pendingReads.get(s).clear();
        for (MemorySegment m : retained.get(s)) {
            gpu.freeHostPinned(m);
        }
        retained.get(s).clear();
    }

    void checkLedger() {
        Map<Long, Long> actual = new TreeMap<>();
        for (Allocation a : gpu.liveAllocations()) {
            actual.put(a.ptr().address(), a.bytes());
        }
        Map<Long, Long> expected = new TreeMap<>(bufs.values().stream()
                .collect(Collectors.toMap(b -> b.ptr.address(), b -> (long) b.model.length)));
        assertThat(actual).as("the ledger (address -> bytes)").isEqualTo(expected);
    }

    void run(Op op) {
        switch (op) {
            case Alloc a -> {
                DevicePtr p = gpu.alloc(4L * a.ints());
                Buf b = new Buf(p, 4 * a.ints(), a.stream());
                bufs.put(a.slot(), b);
                gpu.memsetAsync(p, 0, 4L * a.ints(), streams[a.stream()]);
                checkLedger();
            }
            case Free f -> {
                Buf b = bufs.remove(f.slot());
                syncStream(b.last);
                gpu.free(b.ptr);
                checkLedger();
            }
            case HostWrite w -> hostWrite(w);
            case HostRead rd -> hostRead(rd);
            case DevCopy c -> {
                Buf src = bufs.get(c.src());
                Buf dst = bufs.get(c.dst());
                int s = c.sync() ? LEGACY : c.stream();
                orderInto(src, s);
                orderInto(dst, s);
                DevicePtr from = src.ptr.plus(4L * c.srcOffset());
                DevicePtr to = dst.ptr.plus(4L * c.dstOffset());
                if (c.sync()) {
                    gpu.copyD2D(from, to, 4L * c.count());
                } else {
                    gpu.copyD2DAsync(from, to, 4L * c.count(), streams[s]);
                }
                System.arraycopy(src.model, 4 * c.srcOffset(), dst.model, 4 * c.dstOffset(), 4 * c.count());
            }
            case Memset m -> {
                Buf b = bufs.get(m.slot());
                int s = m.sync() ? LEGACY : m.stream();
                orderInto(b, s);
                DevicePtr p = b.ptr.plus(4L * m.offset());
                if (m.sync()) {
                    gpu.memset(p, m.value(), 4L * m.count());
                } else {
                    gpu.memsetAsync(p, m.value(), 4L * m.count(), streams[s]);
                }
                Arrays.fill(b.model, 4 * m.offset(), 4 * (m.offset() + m.count()), (byte) m.value());
            }
            case Fill f -> {
                Buf b = bufs.get(f.slot());
                orderInto(b, f.stream());
                gpu.launch(fill, LaunchConfig.forElements(f.count(), f.block()), streams[f.stream()],
                        args.clear().ptr(b.ptr.plus(4L * f.offset())).f32(f.value()).i32(f.count()));
                ByteBuffer bb = b.le();
                for (int i = 0; i < f.count(); i++) {
                    bb.putFloat(4 * (f.offset() + i), f.value());
                }
            }
            case Add a -> {
                Buf b = bufs.get(a.slot());
                orderInto(b, a.stream());
                gpu.launch(add, LaunchConfig.forElements(a.count(), a.block()), streams[a.stream()],
                        args.clear().ptr(b.ptr.plus(4L * a.offset())).i32(a.value()).i32(a.count()));
                modelAdd(b, a.offset(), a.count(), a.value());
            }
            case Sync s -> {
                if (s.stream() < 0) {
                    syncDevice();
                } else {
                    syncStream(s.stream());
                }
            }
            case Graph g -> graph(g);
        }
    }

    static void modelAdd(Buf b, int offset, int count, int v) {
        ByteBuffer bb = b.le();
        for (int i = 0; i < count; i++) {
            int at = 4 * (offset + i);
            bb.putInt(at, bb.getInt(at) + v);
        }
    }

    void hostWrite(HostWrite w) {
        Buf b = bufs.get(w.slot());
        int[] values = new int[w.count()];
        for (int i = 0; i < values.length; i++) {
            values[i] = w.base() + i;
        }
        DevicePtr p = b.ptr.plus(4L * w.offset());
        switch (w.kind()) {
            case SYNC -> {
                orderInto(b, LEGACY);
                gpu.copyH2D(values, p);
            }
            case ASYNC_PAGEABLE -> {
                orderInto(b, w.stream());
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment src = arena.allocateFrom(ValueLayout.JAVA_INT, values);
                    gpu.copyH2DAsync(src, p, streams[w.stream()]);
                    src.fill((byte) 0x5A);
                }
            }
            case ASYNC_PINNED -> {
                orderInto(b, w.stream());
                MemorySegment src = gpu.allocHostPinned(4L * values.length);
                MemorySegment.copy(values, 0, src, ValueLayout.JAVA_INT, 0, values.length);
                gpu.copyH2DAsync(src, p, streams[w.stream()]);
                src.fill((byte) 0x5A);
                gpu.freeHostPinned(src);
            }
            case RETAINED -> {
                orderInto(b, w.stream());
                MemorySegment src = gpu.allocHostPinned(4L * values.length);
                MemorySegment.copy(values, 0, src, ValueLayout.JAVA_INT, 0, values.length);
                gpu.copyH2DAsyncRetained(src, p, streams[w.stream()]);
                retained.get(w.stream()).add(src);
            }
        }
        ByteBuffer bb = b.le();
        for (int i = 0; i < values.length; i++) {
            bb.putInt(4 * (w.offset() + i), values[i]);
        }
    }

    void hostRead(HostRead rd) {
        Buf b = bufs.get(rd.slot());
        int[] expected = b.ints(rd.offset(), rd.count());
        DevicePtr p = b.ptr.plus(4L * rd.offset());
        String what = "read of slot " + rd.slot() + " [" + rd.offset() + ", +" + rd.count() + ") by " + rd.kind();
        switch (rd.kind()) {
            case SYNC -> {
                orderInto(b, LEGACY);
                int[] got = new int[rd.count()];
                gpu.copyD2H(p, got);
                assertThat(got).as(what).containsExactly(expected);
            }
            case ON_STREAM -> {
                orderInto(b, rd.stream());
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment dst = arena.allocate(4L * rd.count());
                    gpu.copyD2HOnStream(p, dst, streams[rd.stream()]);
                    assertThat(dst.toArray(ValueLayout.JAVA_INT)).as(what).containsExactly(expected);
                }
            }
            case ASYNC_PINNED -> {
                orderInto(b, rd.stream());
                MemorySegment dst = gpu.allocHostPinned(4L * rd.count());
                gpu.copyD2HAsync(p, dst, streams[rd.stream()]);
                pendingReads.get(rd.stream()).add(new PendingRead(what, dst, expected, () -> gpu.freeHostPinned(dst)));
            }
            case ASYNC_PAGEABLE -> {
                orderInto(b, rd.stream());
                Arena arena = Arena.ofShared();
                MemorySegment dst = arena.allocate(4L * rd.count());
                gpu.copyD2HAsync(p, dst, streams[rd.stream()]);
                pendingReads.get(rd.stream()).add(new PendingRead(what, dst, expected, arena::close));
            }
        }
    }

    void graph(Graph g) {
        Buf b = bufs.get(g.slot());
        DevicePtr p = b.ptr.plus(4L * g.offset());
        gpu.beginCapture(capture);
        if (g.memsetValue() >= 0) {
            gpu.memsetAsync(p, g.memsetValue(), 4L * g.count(), capture);
        }
        gpu.launch(add, LaunchConfig.forElements(g.count(), 64), capture, args.clear().ptr(p).i32(g.addend()).i32(g.count()));
        GraphHandle graph = gpu.endCapture(capture);
        args.clear().ptr(DevicePtr.NULL).i32(0).i32(0);
        orderInto(b, g.stream());
        for (int i = 0; i < g.reps(); i++) {
            gpu.launchGraph(graph, streams[g.stream()]);
        }
        gpu.destroyGraph(graph);
        for (int i = 0; i < g.reps(); i++) {
            if (g.memsetValue() >= 0) {
                Arrays.fill(b.model, 4 * g.offset(), 4 * (g.offset() + g.count()), (byte) g.memsetValue());
            }
            modelAdd(b, g.offset(), g.count(), g.addend());
        }
    }

    void finish() {
        syncDevice();
        for (var e : new TreeMap<>(bufs).entrySet()) {
            Buf b = e.getValue();
            byte[] got = new byte[b.model.length];
            gpu.copyD2H(b.ptr, got);
            assertThat(got).as("final contents of slot %d", e.getKey()).containsExactly(b.model);
        }
        checkLedger();
        for (Buf b : bufs.values()) {
            gpu.free(b.ptr);
        }
        bufs.clear();
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.liveBytes()).isZero();
        if (exactMemInfo) {
            // The caching pool (the default allocator) keeps freed blocks' chunks until asked.
            gpu.pool().emptyCache();
            assertThat(gpu.pool().stats().reservedBytes()).as("the pool's reserved bytes once emptied").isZero();
            assertThat(gpu.deviceFreeMemory()).as("device free memory once everything is freed").isEqualTo(freeAtStart);
        }
        for (int s = 1; s < STREAMS; s++) {
            gpu.destroyStream(streams[s]);
        }
        gpu.destroyStream(capture);
        for (Event e : events) {
            gpu.destroyEvent(e);
        }
    }
}
