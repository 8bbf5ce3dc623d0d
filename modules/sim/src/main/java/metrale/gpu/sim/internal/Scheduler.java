// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import metrale.gpu.CudaError;

/**
 * Pending work of every stream, run as late as CUDA allows: only when a synchronizing call needs
 * it, and then only the operations that call depends on. Among operations that are ready at the
 * same time (heads of different streams) the engine's seeded random sequence picks the order, so a
 * missing dependency shows as a result that changes with the seed.
 *
 * <p>Not thread-safe: the device lock guards it.
 */
final class Scheduler {

    private final Engine engine;
    private final SimStream legacy;
    /** Streams with pending work, in the order they got it (deterministic iteration). */
    private final LinkedHashSet<SimStream> active = new LinkedHashSet<>();
    private long seq;
    private int epoch;
    /** The latest virtual end of any executed operation. */
    private long horizon;
    /** The latest virtual end of an executed operation on a blocking non-legacy stream. */
    private long blockingHorizon;

    Scheduler(Engine engine, SimStream legacy) {
        this.engine = engine;
        this.legacy = legacy;
    }

    /**
     * Enqueues work on a stream, with CUDA's implicit dependencies: legacy-stream work waits for
     * every blocking stream's pending work, and work on a blocking stream waits for the legacy
     * stream's pending work. Non-blocking streams are exempt.
     *
     * @param extra another operation it must wait for, or {@code null}
     * @return the operation
     */
    Op enqueue(SimStream s, Work work, Op extra) {
        Op op = new Op(++seq, s, work);
        op.prev = s.tail();
        // Predecessors that already executed constrain the start through their virtual ends.
        long notBefore = Math.max(engine.now, s.lastEnd);
        ArrayList<Op> deps = null;
        if (extra != null && !extra.done) {
            deps = new ArrayList<>(2);
            deps.add(extra);
        } else if (extra != null) {
            notBefore = Math.max(notBefore, extra.end);
        }
        if (s.kind == SimStream.Kind.LEGACY) {
            notBefore = Math.max(notBefore, blockingHorizon);
        } else if (s.blocking) {
            notBefore = Math.max(notBefore, legacy.lastEnd);
        }
        op.notBefore = notBefore;
        if (s.kind == SimStream.Kind.LEGACY) {
            for (SimStream o : active) {
                if (o != s && o.blocking) {
                    if (deps == null) {
                        deps = new ArrayList<>();
                    }
                    deps.add(o.tail());
                }
            }
        } else if (s.blocking) {
            Op lt = legacy.tail();
            if (lt != null) {
                if (deps == null) {
                    deps = new ArrayList<>(1);
                }
                deps.add(lt);
            }
        }
        if (deps != null) {
            op.deps = deps.toArray(Op.NONE);
        }
        s.pending.addLast(op);
        active.add(s);
        return op;
    }

    /** {@return the legacy default stream} */
    SimStream legacy() {
        return legacy;
    }

    /** {@return the latest virtual end of any executed operation: when the device goes idle} */
    long horizon() {
        return horizon;
    }

    /** {@return the sequence number of the latest enqueued operation} */
    long lastSeq() {
        return seq;
    }

    /** {@return whether an operation enqueued at or before {@code upTo} is still pending on any stream} */
    boolean pendingUpTo(long upTo) {
        for (SimStream s : active) {
            Op head = s.pending.peekFirst();
            if (head != null && head.seq <= upTo) {
                return true;
            }
        }
        return false;
    }

    /** {@return whether no work is pending anywhere} */
    boolean idle() {
        return active.isEmpty();
    }

    /** {@return the number of pending operations on every stream} */
    int pendingCount() {
        int n = 0;
        for (SimStream s : active) {
            n += s.pending.size();
        }
        return n;
    }

    /**
     * {@return the pending work that touches {@code [ptr, ptr + bytes)} and is not ordered before
     * the next operation on {@code t}, as "work on stream", or {@code null}} Ordered before it are
     * {@code t}'s tail and, by {@code t}'s kind, the implicit legacy-stream dependencies that
     * operation will get, and everything they depend on.
     */
    String unorderedWith(SimStream t, long ptr, long bytes) {
        if (idle()) {
            return null;
        }
        long hi = ptr + bytes;
        Set<Op> before = Collections.newSetFromMap(new IdentityHashMap<>());
        ArrayDeque<Op> todo = new ArrayDeque<>();
        if (t.tail() != null) {
            todo.push(t.tail());
        }
        for (SimStream o : active) {
            boolean implicit = t.kind == SimStream.Kind.LEGACY ? o != t && o.blocking
                    : t.blocking && o.kind == SimStream.Kind.LEGACY;
            if (implicit && o.tail() != null) {
                todo.push(o.tail());
            }
        }
        while (!todo.isEmpty()) {
            Op o = todo.pop();
            if (o.done || !before.add(o)) {
                continue;
            }
            if (o.prev != null) {
                todo.push(o.prev);
            }
            for (Op dep : o.deps) {
                todo.push(dep);
            }
        }
        for (SimStream o : active) {
            for (Op pendingOp : o.pending) {
                if (!pendingOp.done && !before.contains(pendingOp) && pendingOp.work.touches(ptr, hi)) {
                    return pendingOp.work.describe() + " on " + o;
                }
            }
        }
        return null;
    }

    /** Runs every pending operation. */
    void runAll() {
        List<Op> targets = new ArrayList<>(active.size());
        for (SimStream s : active) {
            targets.add(s.tail());
        }
        run(targets, Integer.MAX_VALUE);
    }

    /** Runs {@code target} and everything it depends on; nothing else. */
    void runUntil(Op target) {
        if (target != null && !target.done) {
            run(List.of(target), Integer.MAX_VALUE);
        }
    }

    /** Runs at most one operation that {@code target} depends on (or {@code target} itself). */
    void step(Op target) {
        if (target != null && !target.done) {
            run(List.of(target), 1);
        }
    }

    /** Drops every pending operation: after a sticky fault or at close, none of it will ever run. */
    void discardAll() {
        for (SimStream s : active) {
            s.pending.clear();
        }
        active.clear();
    }

    private void run(List<Op> targets, int maxSteps) {
        int ep = ++epoch;
        ArrayList<Op> needed = new ArrayList<>();
        ArrayDeque<Op> stack = new ArrayDeque<>();
        for (Op t : targets) {
            if (!t.done) {
                stack.push(t);
            }
        }
        while (!stack.isEmpty()) {
            Op op = stack.pop();
            if (op.mark == ep) {
                continue;
            }
            op.mark = ep;
            op.indeg = 0;
            op.succ = null;
            needed.add(op);
            if (op.prev != null && !op.prev.done) {
                stack.push(op.prev);
            }
            for (Op d : op.deps) {
                if (!d.done) {
                    stack.push(d);
                }
            }
        }
        for (Op op : needed) {
            if (op.prev != null && !op.prev.done) {
                link(op.prev, op);
            }
            for (Op d : op.deps) {
                if (!d.done) {
                    link(d, op);
                }
            }
        }
        ArrayList<Op> ready = new ArrayList<>();
        for (Op op : needed) {
            if (op.indeg == 0) {
                ready.add(op);
            }
        }
        int steps = 0;
        while (!ready.isEmpty() && steps < maxSteps) {
            int i = engine.choose(ready.size());
            Op op = ready.get(i);
            ready.set(i, ready.getLast());
            ready.removeLast();
            ArrayList<Op> succ = op.succ;
            execute(op);
            steps++;
            if (succ != null) {
                for (Op s : succ) {
                    if (--s.indeg == 0) {
                        ready.add(s);
                    }
                }
            }
        }
        for (Op op : needed) {
            op.succ = null;
        }
    }

    private static void link(Op before, Op after) {
        if (before.succ == null) {
            before.succ = new ArrayList<>(2);
        }
        before.succ.add(after);
        after.indeg++;
    }

    private void execute(Op op) {
        SimStream s = op.stream;
        Op head = s.pending.peekFirst();
        if (head != op) {
            throw new IllegalStateException("scheduler invariant broken: " + op.work.describe()
                    + " is not the head of " + s);
        }
        long start = op.notBefore;
        if (op.prev != null) {
            start = Math.max(start, op.prev.end);
        }
        for (Op d : op.deps) {
            start = Math.max(start, d.end);
        }
        engine.workNanos = 0;
        try {
            op.work.run(engine);
        } catch (SimFault f) {
            throw f;
        } catch (RuntimeException x) {
            // Whatever else goes wrong while device work runs is a device exception to CUDA.
            throw new SimFault(CudaError.LAUNCH_FAILED, op.work.describe() + " failed: " + x, x);
        } finally {
            // Done or failed, it leaves the queue: a failed operation never blocks later calls.
            s.pending.removeFirst();
            op.done = true;
            op.end = start + engine.workNanos;
            s.lastEnd = Math.max(s.lastEnd, op.end);
            horizon = Math.max(horizon, op.end);
            if (s.kind != SimStream.Kind.LEGACY && s.blocking) {
                blockingHorizon = Math.max(blockingHorizon, op.end);
            }
            op.prev = null;
            op.deps = Op.NONE;
            if (s.pending.isEmpty()) {
                active.remove(s);
            }
        }
    }
}
