// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The calling thread's group ({@code ncclGroupStart} / {@code ncclGroupEnd}): its depth, and the
 * simulated communicators' calls deferred until the outermost end.
 */
public final class GroupState {

    /** A deferred call of a simulated communicator. */
    record Deferred(SimCommunicator comm, Call call) {
    }

    private static final ThreadLocal<GroupState> STATE = ThreadLocal.withInitial(GroupState::new);

    private int depth;
    private final List<Deferred> deferred = new ArrayList<>();
    private final java.util.Set<NcclCommunicator> ncclComms = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    private GroupState() {
    }

    /** {@return whether the calling thread is inside a group} */
    static boolean inGroup() {
        return STATE.get().depth > 0;
    }

    /** {@return whether the calling thread still has a group open} */
    public static boolean isOpen() {
        return inGroup();
    }

    /** Opens a (nested) group on the calling thread. */
    public static void start() {
        STATE.get().depth++;
    }

    /**
     * Closes a group; {@return the deferred calls when it was the outermost, else an empty list}
     *
     * @throws IllegalStateException if no group is open
     */
    static List<Deferred> end() {
        GroupState g = STATE.get();
        if (g.depth == 0) {
            throw new IllegalStateException("groupEnd without groupStart on " + Thread.currentThread());
        }
        if (--g.depth > 0) {
            return List.of();
        }
        List<Deferred> out = List.copyOf(g.deferred);
        g.deferred.clear();
        return out;
    }

    /** Notes an NCCL communicator that took part in the open group. */
    static void noteNccl(NcclCommunicator comm) {
        STATE.get().ncclComms.add(comm);
    }

    /** {@return the NCCL communicators of the group just closed, and forgets them} */
    static List<NcclCommunicator> takeNccl() {
        GroupState g = STATE.get();
        List<NcclCommunicator> out = List.copyOf(g.ncclComms);
        g.ncclComms.clear();
        return out;
    }

    /**
     * Closes the calling thread's group: {@code ncclGroupEnd} where NCCL loads (waiting, for
     * non-blocking communicators, until their calls are enqueued), then the simulated calls.
     *
     * @throws IllegalStateException if no group is open
     */
    public static void finish() {
        List<Deferred> sim = end();
        boolean outer = !inGroup();
        if (NcclLib.failure().isEmpty()) {
            boolean inProgress = NcclLib.groupEnd();
            if (outer) {
                for (NcclCommunicator c : takeNccl()) {
                    if (inProgress && c.nonBlockingComm()) {
                        c.awaitEnqueued("ncclGroupEnd");
                    }
                }
            }
        }
        if (!sim.isEmpty()) {
            SimCommunicator.run(sim);
        }
    }

    /** Defers a simulated call to the outermost group end. */
    static void defer(SimCommunicator comm, Call call) {
        STATE.get().deferred.add(new Deferred(comm, call));
    }
}
