package metrale.gpu.sim.internal;

import java.util.ArrayList;

/**
 * One enqueued operation. It may run once the operation before it on its stream ({@link #prev})
 * and its cross-stream dependencies ({@link #deps}: event waits, implicit legacy-stream
 * synchronization, earlier launches of the same graph) are done. Links are dropped when it is done,
 * so completed history is garbage.
 */
final class Op {

    /** {@return whether the operation has executed and its virtual end has passed on {@code clock}} */
    boolean completeAt(long clock) {
        return done && end <= clock;
    }

    static final Op[] NONE = new Op[0];

    final long seq;
    final SimStream stream;
    final Work work;
    Op prev;
    Op[] deps = NONE;
    boolean done;
    /** The virtual time before which it cannot start: the clock and finished predecessors at enqueue. */
    long notBefore;
    /** The virtual time it completes at, once it has executed; event markers give elapsed time by it. */
    long end;

    // Scratch for one scheduling pass.
    int mark;
    int indeg;
    ArrayList<Op> succ;

    Op(long seq, SimStream stream, Work work) {
        this.seq = seq;
        this.stream = stream;
        this.work = work;
    }
}
