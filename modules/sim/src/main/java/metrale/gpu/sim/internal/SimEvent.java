package metrale.gpu.sim.internal;

/** An event: its flags and its last record, either a pending or done marker, or a captured position. */
final class SimEvent {

    static final int BLOCKING_SYNC = 1;
    static final int DISABLE_TIMING = 2;
    static final int INTERPROCESS = 4;

    final long handle;
    final int flags;
    /** The marker of the last record outside a capture; {@code null} when never recorded. */
    Op op;
    /** The capture of the last record, while that capture is live. */
    Capture capturedIn;
    /** The capture nodes a wait on this event depends on. */
    int[] capturedTails;

    SimEvent(long handle, int flags) {
        this.handle = handle;
        this.flags = flags;
    }

    @Override
    public String toString() {
        return "event 0x" + Long.toHexString(handle);
    }
}
