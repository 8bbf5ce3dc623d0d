package metrale.gpu.sim.internal;

import java.util.ArrayDeque;

/** A stream's state: its FIFO of pending work and, while it captures, its capture and tail nodes. */
final class SimStream {

    /** The three kinds of stream CUDA distinguishes for implicit synchronization. */
    enum Kind {
        /** The legacy default stream (0 or 1). */
        LEGACY,
        /** A thread's per-thread default stream (2): synchronizes with the legacy stream only. */
        PER_THREAD,
        /** A created stream. */
        USER
    }

    final long handle;
    final Kind kind;
    /** Whether the legacy stream synchronizes with it: per-thread and created blocking streams. */
    final boolean blocking;
    final String label;
    final ArrayDeque<Op> pending = new ArrayDeque<>();
    boolean destroyed;
    /** The virtual end of the last operation that executed on this stream. */
    long lastEnd;
    /** The capture this stream takes part in, or {@code null}. */
    Capture capture;
    /** While capturing: the nodes the stream's next node depends on. */
    int[] tails;

    SimStream(long handle, Kind kind, boolean blocking, String label) {
        this.handle = handle;
        this.kind = kind;
        this.blocking = blocking;
        this.label = label;
    }

    /** {@return the last pending operation, or {@code null} when the stream is idle} */
    Op tail() {
        return pending.peekLast();
    }

    @Override
    public String toString() {
        return label;
    }
}
