// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

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
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Collectors;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.GenerationMode;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Random programs of device operations checked against a plain Java model of device memory.
 *
 * <p>A program is a list of {@link Op}s made from a seed ({@link #program(long, int)}): allocs and
 * frees, host-to-device, device-to-host and device-to-device copies (blocking, stream-ordered,
 * asynchronous, page-locked or not), memsets, {@code fill_f32} and {@code add_i32} launches, syncs,
 * and small graphs captured and replayed, on the legacy stream, a blocking and two non-blocking
 * streams. The program is race-free by construction: before an op on stream S touches a buffer
 * last touched on stream T, the runner records an event on T and makes S wait for it, and it
 * synchronizes a buffer's stream before freeing it. So the result must equal running the ops one
 * after another, which is what the model does.
 *
 * <p>Checked: every device-to-host read equals the model at that point of the program, the
 * ledger equals the model's live set after every alloc and free, the final contents of every
 * buffer equal the model's, and after freeing everything the ledger is empty and close succeeds.
 *
 * <p>Reproducible: a program depends only on its seed and length, so a failing seed (printed
 * with the program) replays with {@link #runProgram(long, int)} on any backend, and
 * {@link #fixedSeedsMatchTheModel} runs the same seeds on every backend and in every build.
 */
public abstract class OpSequenceProperties {

    /** Buffers a program may hold at once. */
    static final int SLOTS = 6;

    /** Streams by index: the legacy default stream, a blocking stream and two non-blocking ones. */
    static final int STREAMS = 4;

    /** The stream index of the legacy default stream. */
    static final int LEGACY = 0;

    /** Creates the properties; a backend's subclass is instantiated by jqwik. */
    protected OpSequenceProperties() {
    }

    // ---- what a backend supplies --------------------------------------------------------------

    /** {@return a new builder for the backend under test} */
    protected abstract GpuBuilder builder();

    /**
     * {@return a new builder for the backend under test, for the program of {@code seed}} By
     * default {@link #builder()}; the simulator also seeds its scheduler with it, so each program
     * runs under its own interleaving of ready streams.
     *
     * @param seed the program's seed
     */
    protected GpuBuilder builder(long seed) {
        return builder();
    }

    /**
     * {@return whether the device's free memory is exactly what it was once everything is
     * freed} True for the simulator; false where other processes or driver pools move it (CUDA).
     */
    protected boolean exactMemInfo() {
        return false;
    }

    /**
     * Makes module {@value GpuContract#MODULE} available on {@code gpu}, as
     * {@link GpuContract#prepareKernels(Gpu)} does.
     *
     * @param gpu a runtime just opened
     */
    protected abstract void prepareKernels(Gpu gpu);

    /**
     * Checks, after {@code closed} was closed, that the backend released everything; by default
     * that the runtime reports itself closed.
     *
     * @param closed a runtime after {@link Gpu#close()}
     */
    protected void assertBackendReleased(Gpu closed) {
        assertThat(closed.isClosed()).isTrue();
    }

    // ---- properties ---------------------------------------------------------------------------

    /**
     * Random seeds and lengths; jqwik shrinks the length, and since a shorter program is a prefix
     * of the longer one with the same seed, a failure shrinks to its shortest failing prefix.
     *
     * @param seed   the program's seed
     * @param length how many ops
     */
    @Property(tries = 150)
    public void randomProgramsMatchTheModel(@ForAll long seed, @ForAll @IntRange(min = 1, max = 80) int length) {
        runProgram(seed, length);
    }

    /**
     * Seeds 1 to 40, 60 ops each: the same programs on every backend and in every build, so the
     * simulator and CUDA can be compared seed by seed.
     *
     * @param seed the program's seed
     */
    @Property(tries = 40, generation = GenerationMode.EXHAUSTIVE)
    public void fixedSeedsMatchTheModel(@ForAll @LongRange(min = 1, max = 40) long seed) {
        runProgram(seed, 60);
    }

    /**
     * Runs the program of {@code seed} and {@code length} on a fresh runtime and checks it against
     * the model; public so a test can replay one seed.
     *
     * @param seed   the program's seed
     * @param length how many ops
     */
    public final void runProgram(long seed, int length) {
        List<Op> program = program(seed, length);
        Gpu gpu = builder(seed).open();
        Runner runner = null;
        int step = -1;
        try {
            prepareKernels(gpu);
            runner = new Runner(gpu, exactMemInfo());
            for (step = 0; step < program.size(); step++) {
                runner.run(program.get(step));
            }
            step = program.size();
            runner.finish();
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("program seed=" + seed + " length=" + length + " failed at step " + step
                    + (step >= 0 && step < program.size() ? " (" + program.get(step) + ")" : " (final checks)")
                    + ":\n" + listing(program) + "\n" + e, e);
        } finally {
            if (runner != null) {
                runner.args.close();
            }
            gpu.close();
        }
        assertBackendReleased(gpu);
    }

    private static String listing(List<Op> program) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < program.size(); i++) {
            sb.append(String.format("  %3d  %s%n", i, program.get(i)));
        }
        return sb.toString();
    }

    // ---- programs -----------------------------------------------------------------------------

    /** One operation of a program. Offsets and counts are in 4-byte elements. */
    public sealed interface Op {
    }

    /** How a host-to-device write is made. */
    public enum WriteKind {
        /** {@code copyH2D(int[])} on the legacy stream. */
        SYNC,
        /** {@code copyH2DAsync} from native memory the caller drops on return. */
        ASYNC_PAGEABLE,
        /** {@code copyH2DAsync} from page-locked memory the caller frees on return. */
        ASYNC_PINNED,
        /** {@code copyH2DAsyncRetained} from page-locked memory kept until the stream's next sync. */
        RETAINED
    }

    /** How a device-to-host read is made. */
    public enum ReadKind {
        /** {@code copyD2H(int[])} on the legacy stream. */
        SYNC,
        /** {@code copyD2HOnStream}. */
        ON_STREAM,
        /** {@code copyD2HAsync} into page-locked memory, checked at the stream's next sync. */
        ASYNC_PINNED,
        /** {@code copyD2HAsync} into ordinary native memory, checked at the stream's next sync. */
        ASYNC_PAGEABLE
    }

    /**
     * Allocates {@code ints} elements and zeroes them on {@code stream}.
     *
     * @param slot   the buffer's slot
     * @param ints   its size in elements
     * @param stream where it is zeroed
     */
    public record Alloc(int slot, int ints, int stream) implements Op {
    }

    /**
     * Synchronizes the buffer's stream and frees it.
     *
     * @param slot the buffer's slot
     */
    public record Free(int slot) implements Op {
    }

    /**
     * Writes {@code base, base+1, ...} from the host.
     *
     * @param slot   the buffer
     * @param offset first element
     * @param count  elements
     * @param base   the first value
     * @param kind   how
     * @param stream the stream (ignored for {@link WriteKind#SYNC})
     */
    public record HostWrite(int slot, int offset, int count, int base, WriteKind kind, int stream) implements Op {
    }

    /**
     * Reads to the host and compares with the model.
     *
     * @param slot   the buffer
     * @param offset first element
     * @param count  elements
     * @param kind   how
     * @param stream the stream (ignored for {@link ReadKind#SYNC})
     */
    public record HostRead(int slot, int offset, int count, ReadKind kind, int stream) implements Op {
    }

    /**
     * Copies between two buffers.
     *
     * @param src       source slot
     * @param srcOffset source element
     * @param dst       destination slot
     * @param dstOffset destination element
     * @param count     elements
     * @param sync      {@code copyD2D} on the legacy stream, else {@code copyD2DAsync}
     * @param stream    the stream for the async form
     */
    public record DevCopy(int src, int srcOffset, int dst, int dstOffset, int count, boolean sync, int stream) implements Op {
    }

    /**
     * Sets bytes of elements {@code [offset, offset+count)}.
     *
     * @param slot   the buffer
     * @param offset first element
     * @param count  elements
     * @param value  the byte
     * @param sync   {@code memset} on the legacy stream, else {@code memsetAsync}
     * @param stream the stream for the async form
     */
    public record Memset(int slot, int offset, int count, int value, boolean sync, int stream) implements Op {
    }

    /**
     * Launches {@code fill_f32}.
     *
     * @param slot   the buffer
     * @param offset first element (an interior pointer)
     * @param count  elements
     * @param value  the float
     * @param block  threads per block
     * @param stream the stream
     */
    public record Fill(int slot, int offset, int count, float value, int block, int stream) implements Op {
    }

    /**
     * Launches {@code add_i32}.
     *
     * @param slot   the buffer
     * @param offset first element (an interior pointer)
     * @param count  elements
     * @param value  the addend
     * @param block  threads per block
     * @param stream the stream
     */
    public record Add(int slot, int offset, int count, int value, int block, int stream) implements Op {
    }

    /**
     * Synchronizes a stream, or the device when {@code stream} is -1.
     *
     * @param stream the stream index, or -1
     */
    public record Sync(int stream) implements Op {
    }

    /**
     * Captures [an optional memset, then {@code add_i32}] on a capture stream, replays it
     * {@code reps} times on {@code stream} and destroys it right after the launches.
     *
     * @param slot        the buffer
     * @param offset      first element
     * @param count       elements
     * @param memsetValue the memset's byte, or -1 for no memset
     * @param addend      the add
     * @param reps        replays
     * @param stream      the stream the replays run on
     */
    public record Graph(int slot, int offset, int count, int memsetValue, int addend, int reps, int stream) implements Op {
    }

    /**
     * {@return the program of {@code seed}} A program of length n is the first n ops of any longer
     * program with the same seed.
     *
     * @param seed   the seed
     * @param length how many ops
     */
    public static List<Op> program(long seed, int length) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] size = new int[SLOTS];
        List<Op> ops = new ArrayList<>(length);
        while (ops.size() < length) {
            List<Integer> live = new ArrayList<>();
            List<Integer> free = new ArrayList<>();
            for (int s = 0; s < SLOTS; s++) {
                (size[s] > 0 ? live : free).add(s);
            }
            int pick = live.isEmpty() ? 0 : r.nextInt(100);
            int stream = r.nextInt(STREAMS);
            if (pick < 12) {
                if (free.isEmpty()) {
                    continue;
                }
                int slot = free.get(r.nextInt(free.size()));
                int ints = r.nextInt(4) == 0 ? 1 + r.nextInt(1200) : 1 + r.nextInt(96);
                size[slot] = ints;
                ops.add(new Alloc(slot, ints, stream));
                continue;
            }
            int slot = live.get(r.nextInt(live.size()));
            int n = size[slot];
            int offset = r.nextInt(n);
            int count = 1 + r.nextInt(n - offset);
            if (pick < 18) {
                size[slot] = 0;
                ops.add(new Free(slot));
            } else if (pick < 32) {
                ops.add(new HostWrite(slot, offset, count, r.nextInt(), WriteKind.values()[r.nextInt(4)], stream));
            } else if (pick < 44) {
                ops.add(new HostRead(slot, offset, count, ReadKind.values()[r.nextInt(4)], stream));
            } else if (pick < 54) {
                if (live.size() < 2) {
                    continue;
                }
                int dst = live.get(r.nextInt(live.size()));
                if (dst == slot) {
                    continue;
                }
                int dstOffset = r.nextInt(size[dst]);
                int c = r.nextInt(20) == 0 ? 0 : 1 + r.nextInt(Math.min(n - offset, size[dst] - dstOffset));
                ops.add(new DevCopy(slot, offset, dst, dstOffset, c, r.nextInt(3) == 0, stream));
            } else if (pick < 62) {
                int c = r.nextInt(20) == 0 ? 0 : count;
                ops.add(new Memset(slot, offset, c, r.nextInt(256), r.nextInt(3) == 0, stream));
            } else if (pick < 72) {
                ops.add(new Fill(slot, offset, count, (r.nextInt(2001) - 1000) / 8f, 32 << r.nextInt(4), stream));
            } else if (pick < 86) {
                ops.add(new Add(slot, offset, count, r.nextInt(), 32 << r.nextInt(4), stream));
            } else if (pick < 94) {
                ops.add(new Sync(r.nextInt(STREAMS + 1) - 1));
            } else {
                ops.add(new Graph(slot, offset, count, r.nextBoolean() ? r.nextInt(256) : -1, r.nextInt(1000) - 500,
                        1 + r.nextInt(3), stream));
            }
        }
        return ops;
    }

    // ---- the runner and the model -------------------------------------------------------------

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

    private static final class Runner {
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

        Runner(Gpu gpu, boolean exactMemInfo) {
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
}
