// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import java.time.Duration;
import java.util.Optional;
import metrale.gpu.Gpu;
import metrale.gpu.Stream;
import metrale.gpu.internal.access.RuntimeAccess;
import metrale.gpu.nccl.NcclException;
import metrale.gpu.nccl.NcclResult;

/**
 * One rank of an NCCL communicator on a CUDA runtime. Every call resolves the runtime's stream to
 * its {@code CUstream} through {@link RuntimeAccess} (inside the runtime's gate, with the context
 * current and the buffers checked against the ledger), then calls NCCL.
 */
public final class NcclCommunicator extends AbstractCommunicator {

    private static final long POLL_NANOS = 200_000;

    private final long comm;
    private final boolean nonBlocking;
    /** The out-parameter of the per-call poll; freed by the GC, so no close can race a poll on it. */
    private final java.lang.foreign.MemorySegment asyncOut = java.lang.foreign.Arena.ofAuto()
            .allocate(java.lang.foreign.ValueLayout.JAVA_INT);

    private NcclCommunicator(Gpu gpu, long comm, int rank, int size, boolean nonBlocking) {
        super(gpu, rank, size);
        this.comm = comm;
        this.nonBlocking = nonBlocking;
    }

    @Override
    public String kind() {
        return "nccl";
    }

    /**
     * {@code ncclCommInitAll} over the runtimes' devices, rank {@code i} on {@code gpus[i]}.
     *
     * @param gpus CUDA runtimes, one per rank
     * @return the communicators, by rank
     */
    public static NcclCommunicator[] initAll(Gpu[] gpus) {
        int[] devices = new int[gpus.length];
        for (int i = 0; i < gpus.length; i++) {
            devices[i] = gpus[i].deviceOrdinal();
        }
        long[][] out = new long[1][];
        RuntimeAccess.onDriverStream(gpus[0], Stream.DEFAULT, "ncclCommInitAll", new long[0],
                st -> out[0] = NcclLib.commInitAll(devices));
        NcclCommunicator[] comms = new NcclCommunicator[gpus.length];
        for (int i = 0; i < gpus.length; i++) {
            comms[i] = new NcclCommunicator(gpus[i], out[0][i], i, gpus.length, false);
        }
        return comms;
    }

    /**
     * {@code ncclCommInitRank} on the runtime's device, waiting at most {@code timeout} for every
     * rank to join. With {@code ncclCommInitRankConfig} (NCCL 2.14+) the join is non-blocking and
     * polled, and a communicator that times out is aborted; without it the blocking join runs on a
     * daemon thread that stays blocked in NCCL after a time-out.
     *
     * @param gpu     the rank's CUDA runtime
     * @param nranks  the rank count
     * @param id      the id from rank 0
     * @param rank    this rank
     * @param timeout how long to wait for every rank
     * @return the communicator
     */
    public static NcclCommunicator initRank(Gpu gpu, int nranks, metrale.gpu.nccl.NcclUniqueId id, int rank, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long[] c = new long[1];
        boolean nonBlockingInit = NcclLib.hasInitRankConfig();
        if (nonBlockingInit) {
            try {
                RuntimeAccess.onDriverStream(gpu, Stream.DEFAULT, "ncclCommInitRankConfig", new long[0],
                        st -> c[0] = NcclLib.commInitRankNonBlocking(nranks, id, rank));
            } catch (NcclException e) {
                if (e.result() != NcclResult.INVALID_ARGUMENT) {
                    throw e;
                }
                // An NCCL that refuses this binding's config layout: join blocking instead.
                nonBlockingInit = false;
            }
        }
        if (nonBlockingInit) {
            while (true) {
                int st = NcclLib.commGetAsyncError(c[0]);
                if (st == 0) {
                    return new NcclCommunicator(gpu, c[0], rank, nranks, true);
                }
                if (st != NcclLib.IN_PROGRESS) {
                    NcclException e = NcclLib.error(st, "ncclCommInitRankConfig", "nranks=" + nranks + ", rank=" + rank, c[0]);
                    NcclLib.commAbort(c[0]);
                    throw e;
                }
                if (System.nanoTime() - deadline > 0) {
                    NcclLib.commAbort(c[0]);
                    throw timedOut(nranks, rank, timeout);
                }
                java.util.concurrent.locks.LockSupport.parkNanos(POLL_NANOS);
            }
        }
        java.util.concurrent.CompletableFuture<Long> f = new java.util.concurrent.CompletableFuture<>();
        Thread t = Thread.ofPlatform().daemon().name("ncclCommInitRank rank " + rank).unstarted(() -> {
            try {
                long[] out = new long[1];
                RuntimeAccess.onDriverStream(gpu, Stream.DEFAULT, "ncclCommInitRank", new long[0],
                        st -> out[0] = NcclLib.commInitRank(nranks, id, rank));
                f.complete(out[0]);
            } catch (RuntimeException | Error e) {
                f.completeExceptionally(e);
            }
        });
        t.start();
        try {
            return new NcclCommunicator(gpu, f.get(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS), rank, nranks, false);
        } catch (java.util.concurrent.TimeoutException e) {
            throw timedOut(nranks, rank, timeout);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("ncclCommInitRank failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NcclException(NcclResult.IN_PROGRESS, NcclResult.IN_PROGRESS.code(), "ncclCommInitRank",
                    "interrupted while rank " + rank + " waited for the others");
        }
    }

    private static NcclException timedOut(int nranks, int rank, Duration timeout) {
        return new NcclException(NcclResult.IN_PROGRESS, NcclResult.IN_PROGRESS.code(), "ncclCommInitRank",
                "rank " + rank + " of " + nranks + ": not every rank joined within " + timeout
                + " (a rank never called initRank with this id, or cannot reach this host)");
    }

    @Override
    void execute(Call c) {
        // An asynchronous error is latched before the next call reaches NCCL, as a sticky fault is.
        int async = NcclLib.commGetAsyncError(comm, asyncOut);
        if (async != 0 && async != NcclLib.IN_PROGRESS) {
            NcclException e = NcclLib.error(async, c.kind().function, "asynchronous error of rank " + rank
                    + " (ncclCommGetAsyncError); abort the communicator", comm);
            latch(e);
            throw e;
        }
        long[] ranges = new long[] {
            c.send() == null ? 0 : c.send().address(), c.sendBytes(size, rank),
            c.recv() == null ? 0 : c.recv().address(), c.recvBytes(size, rank)};
        boolean[] inProgress = new boolean[1];
        int type = c.type().code();
        int op = c.op() == null ? 0 : c.op().code();
        try {
            RuntimeAccess.onDriverStream(gpu, c.stream(), c.kind().function, ranges, st -> inProgress[0] = switch (c.kind()) {
                case ALL_REDUCE -> NcclLib.allReduce(c.send().address(), c.recv().address(), c.count(), type, op, comm, st);
                case BROADCAST -> NcclLib.broadcast(c.send().address(), c.recv().address(), c.count(), type, c.root(), comm, st);
                case REDUCE -> NcclLib.reduce(c.send().address(), c.recv().address(), c.count(), type, op, c.root(), comm, st);
                case ALL_GATHER -> NcclLib.allGather(c.send().address(), c.recv().address(), c.count(), type, comm, st);
                case REDUCE_SCATTER -> NcclLib.reduceScatter(c.send().address(), c.recv().address(), c.count(), type, op, comm, st);
                case SEND -> NcclLib.send(c.send().address(), c.count(), type, c.root(), comm, st);
                case RECV -> NcclLib.recv(c.recv().address(), c.count(), type, c.root(), comm, st);
            });
        } catch (NcclException e) {
            pollAsync();
            throw e;
        }
        if (GroupState.inGroup()) {
            GroupState.noteNccl(this);
        } else if (inProgress[0] && nonBlocking) {
            awaitEnqueued(c.kind().function);
        }
    }

    /**
     * A non-blocking communicator answers {@code ncclInProgress} until the call is enqueued: waits for that.
     *
     * @param function the call, for errors
     */
    public void awaitEnqueued(String function) {
        while (true) {
            int st = NcclLib.commGetAsyncError(comm, asyncOut);
            if (st == 0) {
                return;
            }
            if (st != NcclLib.IN_PROGRESS) {
                NcclException e = NcclLib.error(st, function, "asynchronous error of rank " + rank, comm);
                latch(e);
                throw e;
            }
            Thread.onSpinWait();
        }
    }

    private void pollAsync() {
        int st = NcclLib.commGetAsyncError(comm, asyncOut);
        if (st != 0 && st != NcclLib.IN_PROGRESS) {
            latch(NcclLib.error(st, "ncclCommGetAsyncError", "rank " + rank, comm));
        }
    }

    /** {@return whether this communicator was made non-blocking} */
    public boolean nonBlockingComm() {
        return nonBlocking;
    }

    @Override
    public Optional<NcclException> asyncError() {
        if (latched() == null) {
            pollAsync();
        }
        return super.asyncError();
    }

    @Override
    public void abort() {
        if (markClosed()) {
            NcclLib.commAbort(comm);
        }
    }

    @Override
    public void close() {
        if (markClosed()) {
            NcclResult r = NcclLib.commDestroy(comm);
            if (r != NcclResult.SUCCESS) {
                System.getLogger("metrale.gpu.nccl").log(System.Logger.Level.WARNING,
                        "ncclCommDestroy of rank " + rank + " returned " + r.ncclName());
            }
        }
    }
}
