// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import metrale.gpu.Gpu;
import metrale.gpu.internal.access.RuntimeAccess;
import metrale.gpu.nccl.NcclException;
import metrale.gpu.nccl.NcclResult;
import metrale.gpu.nccl.NcclUniqueId;

/**
 * One rank of a simulated communicator: the NCCL API with NCCL's ordering rules, over the public
 * API of any runtime (the simulator's in CI). A call waits for the stream's earlier work, reads
 * this rank's input to the host, meets the other ranks in the {@link SimClique}, and writes this
 * rank's output back before it returns: the collective is complete when the call (or the
 * outermost group end) returns on every rank, one of the orders NCCL allows. Calls for several
 * ranks from one thread must be grouped, as with NCCL; otherwise the first waits for the others
 * until the timeout.
 */
public final class SimCommunicator extends AbstractCommunicator {

    /** The first bytes of every simulated unique id. */
    private static final byte[] MAGIC = "metrale-sim-nccl".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final ConcurrentHashMap<NcclUniqueId, SimClique> BY_ID = new ConcurrentHashMap<>();

    private final SimClique clique;

    private SimCommunicator(Gpu gpu, SimClique clique, int rank) {
        super(gpu, rank, clique.size);
        this.clique = clique;
    }

    @Override
    public String kind() {
        return "sim";
    }

    /** {@return a new simulated unique id, valid in this JVM} */
    public static NcclUniqueId uniqueId() {
        byte[] b = new byte[NcclUniqueId.BYTES];
        System.arraycopy(MAGIC, 0, b, 0, MAGIC.length);
        byte[] tail = new byte[b.length - MAGIC.length];
        new java.security.SecureRandom().nextBytes(tail);
        System.arraycopy(tail, 0, b, MAGIC.length, tail.length);
        return new NcclUniqueId(b);
    }

    /**
     * {@return whether {@code id} came from {@link #uniqueId()}}
     *
     * @param id an id
     */
    public static boolean isSimulated(NcclUniqueId id) {
        return java.util.Arrays.equals(id.bytes(), 0, MAGIC.length, MAGIC, 0, MAGIC.length);
    }

    /**
     * The simulated {@code ncclCommInitAll}.
     *
     * @param gpus    one runtime per rank
     * @param timeout how long a rank waits for the others in a collective
     * @return the communicators, by rank
     */
    public static SimCommunicator[] initAll(Gpu[] gpus, Duration timeout) {
        SimClique c = new SimClique(gpus.length, timeout, "initAll(" + gpus.length + " ranks)");
        c.joinAll();
        SimCommunicator[] out = new SimCommunicator[gpus.length];
        for (int i = 0; i < gpus.length; i++) {
            out[i] = new SimCommunicator(gpus[i], c, i);
        }
        return out;
    }

    /**
     * The simulated {@code ncclCommInitRank}: waits until every rank has joined or the timeout.
     *
     * @param gpu     the rank's runtime
     * @param nranks  the rank count
     * @param id      an id from {@link #uniqueId()}
     * @param rank    this rank
     * @param timeout how long to wait for the others, here and in each collective
     * @return the communicator
     */
    public static SimCommunicator initRank(Gpu gpu, int nranks, NcclUniqueId id, int rank, Duration timeout) {
        if (!isSimulated(id)) {
            throw new NcclException(NcclResult.INVALID_ARGUMENT, NcclResult.INVALID_ARGUMENT.code(), "ncclCommInitRank",
                    "the id was not made by the simulated communicator (Collectives.uniqueId on a simulator runtime)");
        }
        SimClique c = BY_ID.computeIfAbsent(id, k -> new SimClique(nranks, timeout, id.toString()));
        if (c.size != nranks) {
            throw new NcclException(NcclResult.INVALID_USAGE, NcclResult.INVALID_USAGE.code(), "ncclCommInitRank",
                    "rank " + rank + " says nranks=" + nranks + " but the communicator " + id + " has " + c.size);
        }
        try {
            c.join(rank);
        } finally {
            // Once every rank has joined (or the join failed) the id names nothing any more.
            BY_ID.remove(id, c);
        }
        return new SimCommunicator(gpu, c, rank);
    }

    @Override
    void execute(Call c) {
        // Checked at once, so a bad buffer fails this rank before the others wait for it.
        long[] ranges = new long[] {
            c.send() == null ? 0 : c.send().address(), c.sendBytes(size, rank),
            c.recv() == null ? 0 : c.recv().address(), c.recvBytes(size, rank)};
        RuntimeAccess.onDriverStream(gpu, c.stream(), c.kind().function, ranges, st -> { });
        if (gpu.streamIsCapturing(c.stream())) {
            throw new NcclException(NcclResult.INVALID_USAGE, NcclResult.INVALID_USAGE.code(), c.kind().function,
                    "rank " + rank + ": the simulated communicator completes each call at once and cannot be captured "
                    + "into a graph (NCCL on CUDA can)");
        }
        if (GroupState.inGroup()) {
            GroupState.defer(this, c);
            return;
        }
        run(List.of(new GroupState.Deferred(this, c)));
    }

    /** A call between its arrival and its completion. */
    private record Pending(SimCommunicator comm, Call call, SimClique.Round round) {
    }

    /**
     * Runs a group's calls: first every arrival (inputs read, sends posted), then every completion,
     * so ranks driven by one thread meet each other.
     *
     * @param calls the calls, in the order they were made
     */
    public static void run(List<GroupState.Deferred> calls) {
        List<Pending> pending = new ArrayList<>(calls.size());
        for (GroupState.Deferred d : calls) {
            pending.add(d.comm().arrive(d.call()));
        }
        for (Pending p : pending) {
            if (p.call().kind() != Call.Kind.SEND) {
                p.comm().complete(p);
            }
        }
    }

    private Pending arrive(Call c) {
        gpu.synchronize(c.stream());
        long in = c.sendBytes(size, rank);
        byte[] input = new byte[Math.toIntExact(in)];
        if (in > 0) {
            gpu.copyD2H(c.send(), input);
        }
        return switch (c.kind()) {
            case SEND -> {
                clique.post(rank, c, input);
                yield new Pending(this, c, null);
            }
            case RECV -> new Pending(this, c, null);
            default -> new Pending(this, c, clique.arrive(rank, c, input));
        };
    }

    private void complete(Pending p) {
        Call c = p.call();
        byte[] out;
        if (c.kind() == Call.Kind.RECV) {
            out = clique.take(rank, c);
        } else {
            clique.await(p.round(), rank, c);
            byte[][] in = p.round().inputs;
            out = switch (c.kind()) {
                case ALL_REDUCE -> SimMath.reduce(in, 0, c.count(), c.type(), c.op());
                case BROADCAST -> in[c.root()];
                case REDUCE -> rank == c.root() ? SimMath.reduce(in, 0, c.count(), c.type(), c.op()) : new byte[0];
                case ALL_GATHER -> concat(in);
                case REDUCE_SCATTER -> SimMath.reduce(in, rank * c.count(), c.count(), c.type(), c.op());
                default -> throw new AssertionError(c.kind());
            };
        }
        if (out.length > 0 && c.recvBytes(size, rank) > 0) {
            gpu.copyH2D(out, c.recv());
        }
    }

    private static byte[] concat(byte[][] parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    @Override
    public void abort() {
        if (markClosed()) {
            clique.abort(rank);
        }
    }

    @Override
    public void close() {
        markClosed();
    }
}
