// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
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
        OpRunner runner = null;
        int step = -1;
        try {
            prepareKernels(gpu);
            runner = new OpRunner(gpu, exactMemInfo());
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
}
