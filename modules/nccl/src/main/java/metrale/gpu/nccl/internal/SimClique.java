// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import metrale.gpu.nccl.NcclException;
import metrale.gpu.nccl.NcclResult;

/**
 * The ranks of one simulated communicator and their rendezvous: the n-th collective of every rank
 * meets in round n, which completes when every rank has arrived with a matching call; sends wait
 * in a queue per (sender, receiver) for their receive. A rank that does not arrive within the
 * timeout fails the round for every rank that did. Thread-safe.
 */
final class SimClique {

    /** The n-th collective of the ranks. */
    static final class Round {
        final Call[] calls;
        final byte[][] inputs;
        int arrived;
        NcclException error;

        Round(int size) {
            calls = new Call[size];
            inputs = new byte[size][];
        }
    }

    /** A posted send. */
    record Message(Call call, byte[] data) {
    }

    final int size;
    final Duration timeout;
    final String label;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final long[] nextRound;
    private final Map<Long, Round> rounds = new HashMap<>();
    private final Map<Long, ArrayDeque<Message>> mailboxes = new HashMap<>();
    private final boolean[] joined;
    private int joinedCount;
    private boolean aborted;
    private String abortedBy;
    /** The ranks missing when the join timed out, or {@code null}: every rank that joined then fails alike. */
    private List<Integer> neverJoined;

    SimClique(int size, Duration timeout, String label) {
        this.size = size;
        this.timeout = timeout;
        this.label = label;
        this.nextRound = new long[size];
        this.joined = new boolean[size];
    }

    private static NcclException usage(String function, String details) {
        return new NcclException(NcclResult.INVALID_USAGE, NcclResult.INVALID_USAGE.code(), function, details);
    }

    private NcclException timedOut(String function, String details) {
        return new NcclException(NcclResult.IN_PROGRESS, NcclResult.IN_PROGRESS.code(), function,
                details + " within " + timeout + " (simulated communicator " + label + ")");
    }

    /** Marks every rank joined at once ({@code ncclCommInitAll}). */
    void joinAll() {
        lock.lock();
        try {
            java.util.Arrays.fill(joined, true);
            joinedCount = size;
        } finally {
            lock.unlock();
        }
    }

    /** Joins {@code rank} and waits for every rank to ({@code ncclCommInitRank}). */
    void join(int rank) {
        lock.lock();
        try {
            if (joined[rank]) {
                throw usage("ncclCommInitRank", "rank " + rank + " of " + label + " joined twice");
            }
            joined[rank] = true;
            joinedCount++;
            changed.signalAll();
            long left = timeout.toNanos();
            while (joinedCount < size && !aborted) {
                if (left <= 0) {
                    List<Integer> missing = new ArrayList<>();
                    for (int r = 0; r < size; r++) {
                        if (!joined[r]) {
                            missing.add(r);
                        }
                    }
                    aborted = true;
                    abortedBy = "rank(s) " + missing + " never joined";
                    neverJoined = missing;
                    changed.signalAll();
                    break;
                }
                left = changed.awaitNanos(left);
            }
            if (neverJoined != null) {
                // Every rank waiting when the join timed out gets the one documented outcome.
                throw timedOut("ncclCommInitRank", "rank " + rank + " of " + size + ": rank(s) " + neverJoined
                        + " did not join");
            }
            if (aborted) {
                throw usage("ncclCommInitRank", "rank " + rank + ": the communicator " + label + " was aborted: " + abortedBy);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw timedOut("ncclCommInitRank", "rank " + rank + " was interrupted while waiting for the others");
        } finally {
            lock.unlock();
        }
    }

    /** Aborts the clique: every waiting and later call of every rank fails. */
    void abort(int rank) {
        lock.lock();
        try {
            if (!aborted) {
                aborted = true;
                abortedBy = "rank " + rank + " aborted it";
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void checkAborted(Call c, int rank) {
        if (aborted) {
            throw usage(c.kind().function, "rank " + rank + ": the communicator " + label + " was aborted: " + abortedBy);
        }
    }

    /** Arrives at the rank's next round with its call and input; {@return the round} */
    Round arrive(int rank, Call c, byte[] input) {
        lock.lock();
        try {
            checkAborted(c, rank);
            long n = nextRound[rank]++;
            Round r = rounds.computeIfAbsent(n, k -> new Round(size));
            r.calls[rank] = c;
            r.inputs[rank] = input;
            r.arrived++;
            if (r.error == null) {
                for (int o = 0; o < size; o++) {
                    Call other = r.calls[o];
                    if (other != null && o != rank && !other.matches(c)) {
                        r.error = usage(c.kind().function, "collective #" + n + " of " + label + ": rank " + rank + " called "
                                + c.describe() + " but rank " + o + " called " + other.describe()
                                + "; every rank must call the same collectives in the same order with the same count, type, op and root");
                        break;
                    }
                }
            }
            if (r.arrived == size) {
                rounds.remove(n);
            }
            changed.signalAll();
            return r;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until every rank has arrived at {@code r}; throws its error, a time-out or an abort. */
    void await(Round r, int rank, Call c) {
        lock.lock();
        try {
            long left = timeout.toNanos();
            while (r.arrived < size && r.error == null && !aborted) {
                if (left <= 0) {
                    List<Integer> missing = new ArrayList<>();
                    for (int o = 0; o < size; o++) {
                        if (r.calls[o] == null) {
                            missing.add(o);
                        }
                    }
                    r.error = timedOut(c.kind().function, c.describe() + ": rank(s) " + missing + " did not call it");
                    changed.signalAll();
                    break;
                }
                left = changed.awaitNanos(left);
            }
            if (r.error != null) {
                throw r.error;
            }
            checkAborted(c, rank);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw timedOut(c.kind().function, "rank " + rank + " was interrupted waiting for the other ranks");
        } finally {
            lock.unlock();
        }
    }

    private static long box(int from, int to) {
        return ((long) from << 32) | (to & 0xFFFF_FFFFL);
    }

    /** Posts a send from {@code rank} to {@code c.root()}. */
    void post(int rank, Call c, byte[] data) {
        lock.lock();
        try {
            checkAborted(c, rank);
            mailboxes.computeIfAbsent(box(rank, c.root()), k -> new ArrayDeque<>()).addLast(new Message(c, data));
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Takes the next send from {@code c.root()} to {@code rank}, waiting for it; checks that it matches. */
    byte[] take(int rank, Call c) {
        lock.lock();
        try {
            long left = timeout.toNanos();
            ArrayDeque<Message> q = mailboxes.computeIfAbsent(box(c.root(), rank), k -> new ArrayDeque<>());
            while (q.isEmpty()) {
                checkAborted(c, rank);
                if (left <= 0) {
                    throw timedOut(c.kind().function, "rank " + rank + " " + c.describe() + ": rank " + c.root()
                            + " sent nothing");
                }
                left = changed.awaitNanos(left);
            }
            Message m = q.removeFirst();
            if (m.call().count() != c.count() || m.call().type() != c.type()) {
                throw usage(c.kind().function, "rank " + rank + " " + c.describe() + " does not match rank " + c.root()
                        + "'s " + m.call().describe());
            }
            return m.data();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw timedOut(c.kind().function, "rank " + rank + " was interrupted waiting for a send");
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return label;
    }

}
