package metrale.gpu.sim.internal;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * One stream-capture sequence: the streams taking part (the origin and those forked into it by
 * waiting on an event recorded in it), the nodes recorded so far with their dependencies, and the
 * events recorded in it. Lives from {@code cuStreamBeginCapture} to {@code cuStreamEndCapture}.
 */
final class Capture {

    static final int GLOBAL = 0;
    static final int THREAD_LOCAL = 1;
    static final int RELAXED = 2;
    private static final String[] MODES = {"GLOBAL", "THREAD_LOCAL", "RELAXED"};

    final long id;
    final int mode;
    final Thread owner;
    final SimStream origin;
    final List<Works.Node> nodes = new ArrayList<>();
    final LinkedHashSet<SimStream> streams = new LinkedHashSet<>();
    final List<SimEvent> events = new ArrayList<>();
    boolean invalidated;
    String invalidatedBy;

    Capture(long id, int mode, Thread owner, SimStream origin) {
        this.id = id;
        this.mode = mode;
        this.owner = owner;
        this.origin = origin;
    }

    /** Records {@code work} as a node on {@code s}, after the stream's current tails. */
    void add(SimStream s, Work work) {
        nodes.add(new Works.Node(work, s.tails));
        s.tails = new int[] {nodes.size() - 1};
    }

    /** {@return whether a stream of this capture is one the legacy stream synchronizes with} */
    boolean anyBlocking() {
        for (SimStream s : streams) {
            if (s.blocking) {
                return true;
            }
        }
        return false;
    }

    /** Marks the capture invalidated by {@code call}; later enqueues fail with 901. */
    void invalidate(String call) {
        if (!invalidated) {
            invalidated = true;
            invalidatedBy = call;
        }
    }

    /**
     * {@return the first stream other than the origin whose tails the origin has not joined, or {@code null}}
     */
    SimStream unjoined() {
        BitSet reach = new BitSet(nodes.size());
        ArrayList<Integer> stack = new ArrayList<>();
        for (int t : origin.tails) {
            stack.add(t);
        }
        while (!stack.isEmpty()) {
            int n = stack.removeLast();
            if (reach.get(n)) {
                continue;
            }
            reach.set(n);
            for (int d : nodes.get(n).deps()) {
                stack.add(d);
            }
        }
        for (SimStream s : streams) {
            if (s == origin) {
                continue;
            }
            for (int t : s.tails) {
                if (!reach.get(t)) {
                    return s;
                }
            }
        }
        return null;
    }

    String modeName() {
        return MODES[mode];
    }

    @Override
    public String toString() {
        return "capture #" + id + " (" + modeName() + ", begun on " + origin + " by thread '" + owner.getName() + "'"
                + (invalidated ? ", invalidated by " + invalidatedBy : "") + ")";
    }
}
