// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LiveResource;
import metrale.gpu.Stream;
import metrale.gpu.internal.access.RuntimeAccess;
import metrale.gpu.nccl.CollectiveEvent;
import metrale.gpu.nccl.CollectiveStats;
import metrale.gpu.nccl.Communicator;
import metrale.gpu.nccl.NcclDataType;
import metrale.gpu.nccl.NcclException;
import metrale.gpu.nccl.NcclRedOp;
import metrale.telemetry.CallSites;

/**
 * What both communicators share: argument checks before anything reaches NCCL, the latched
 * asynchronous error, counters, JFR events and the closed state.
 */
abstract sealed class AbstractCommunicator implements Communicator permits NcclCommunicator, SimCommunicator {

    static {
        // A communicator's creation site is the application's call, not the factory's.
        CallSites.skip("metrale.gpu.nccl.internal.", "metrale.gpu.nccl.Collectives");
    }

    final Gpu gpu;
    final int rank;
    final int size;
    private final AtomicBoolean closed = new AtomicBoolean();
    // Removes the communicator from its runtime's Gpu.liveResources().
    private final Runnable untrack;
    private final AtomicReference<NcclException> latched = new AtomicReference<>();
    private final LongAdder calls = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder failures = new LongAdder();

    AbstractCommunicator(Gpu gpu, int rank, int size) {
        this.gpu = Objects.requireNonNull(gpu, "gpu");
        this.rank = rank;
        this.size = size;
        this.untrack = RuntimeAccess.track(gpu, LiveResource.Kind.COMMUNICATOR,
                "rank " + rank + " of " + size + " (" + kind() + ")");
    }

    @Override
    public final int rank() {
        return rank;
    }

    @Override
    public final int size() {
        return size;
    }

    @Override
    public final Gpu gpu() {
        return gpu;
    }

    /**
     * Checks and runs a call, counting it and emitting its event; every call that throws, from an
     * argument check ({@code make}) to the subclass, counts as a failure.
     */
    private void submit(java.util.function.Supplier<Call> make) {
        try {
            run(make.get());
        } catch (RuntimeException e) {
            failures.increment();
            throw e;
        }
    }

    /** Runs a checked call through the subclass, counting it and emitting its event. */
    private void run(Call c) {
        if (closed.get()) {
            throw new IllegalStateException(c.kind().method + ": rank " + rank + "'s communicator is closed or aborted");
        }
        NcclException l = latched.get();
        if (l != null) {
            throw new NcclException(l.result(), l.result().code(), c.kind().function,
                    "the communicator latched an asynchronous error earlier; abort it: " + l.getMessage());
        }
        CollectiveEvent ev = new CollectiveEvent();
        ev.begin();
        execute(c);
        long n = c.sendBytes(size, rank);
        calls.increment();
        bytes.add(n);
        ev.end();
        if (ev.shouldCommit()) {
            ev.operation = c.kind().method;
            ev.bytes = n;
            ev.type = c.type().name();
            ev.rank = rank;
            ev.ranks = size;
            ev.kind = kind();
            ev.stream = c.stream().handle();
            ev.commit();
        }
    }

    /** Executes a call whose arguments are checked. */
    abstract void execute(Call c);

    /** Latches {@code e} as the communicator's asynchronous error; the first stays. */
    final void latch(NcclException e) {
        latched.compareAndSet(null, e);
    }

    /** {@return the latched error, or {@code null}} */
    final NcclException latched() {
        return latched.get();
    }

    /** Marks the communicator closed; {@return whether this call did} */
    final boolean markClosed() {
        if (closed.compareAndSet(false, true)) {
            untrack.run();
            return true;
        }
        return false;
    }

    @Override
    public Optional<NcclException> asyncError() {
        return Optional.ofNullable(latched.get());
    }

    @Override
    public final CollectiveStats stats() {
        return new CollectiveStats(calls.sum(), bytes.sum(), failures.sum());
    }

    private static long count(long count, String method, String name) {
        if (count < 0) {
            throw new IllegalArgumentException(method + ": " + name + "=" + count + " is negative");
        }
        return count;
    }

    private int rankArg(int r, String method, String name) {
        if (r < 0 || r >= size) {
            throw new IllegalArgumentException(method + ": " + name + "=" + r + " is not a rank of this communicator (0 to "
                    + (size - 1) + ")");
        }
        return r;
    }

    private static <T> T req(T v, String name) {
        return Objects.requireNonNull(v, name);
    }

    @Override
    public final void allReduce(DevicePtr send, DevicePtr recv, long count, NcclDataType type, NcclRedOp op, Stream stream) {
        submit(() -> new Call(Call.Kind.ALL_REDUCE, req(send, "send"), req(recv, "recv"), count(count, "allReduce", "count"),
                req(type, "type"), req(op, "op"), -1, req(stream, "stream")));
    }

    @Override
    public final void broadcast(DevicePtr send, DevicePtr recv, long count, NcclDataType type, int root, Stream stream) {
        submit(() -> new Call(Call.Kind.BROADCAST, req(send, "send"), req(recv, "recv"), count(count, "broadcast", "count"),
                req(type, "type"), null, rankArg(root, "broadcast", "root"), req(stream, "stream")));
    }

    @Override
    public final void reduce(DevicePtr send, DevicePtr recv, long count, NcclDataType type, NcclRedOp op, int root,
                             Stream stream) {
        submit(() -> new Call(Call.Kind.REDUCE, req(send, "send"), req(recv, "recv"), count(count, "reduce", "count"),
                req(type, "type"), req(op, "op"), rankArg(root, "reduce", "root"), req(stream, "stream")));
    }

    @Override
    public final void allGather(DevicePtr send, DevicePtr recv, long sendCount, NcclDataType type, Stream stream) {
        submit(() -> new Call(Call.Kind.ALL_GATHER, req(send, "send"), req(recv, "recv"), count(sendCount, "allGather", "sendCount"),
                req(type, "type"), null, -1, req(stream, "stream")));
    }

    @Override
    public final void reduceScatter(DevicePtr send, DevicePtr recv, long recvCount, NcclDataType type, NcclRedOp op,
                                    Stream stream) {
        submit(() -> new Call(Call.Kind.REDUCE_SCATTER, req(send, "send"), req(recv, "recv"),
                count(recvCount, "reduceScatter", "recvCount"), req(type, "type"), req(op, "op"), -1, req(stream, "stream")));
    }

    @Override
    public final void send(DevicePtr send, long count, NcclDataType type, int peer, Stream stream) {
        submit(() -> new Call(Call.Kind.SEND, req(send, "send"), null, count(count, "send", "count"), req(type, "type"), null,
                rankArg(peer, "send", "peer"), req(stream, "stream")));
    }

    @Override
    public final void recv(DevicePtr recv, long count, NcclDataType type, int peer, Stream stream) {
        submit(() -> new Call(Call.Kind.RECV, null, req(recv, "recv"), count(count, "recv", "count"), req(type, "type"), null,
                rankArg(peer, "recv", "peer"), req(stream, "stream")));
    }

    @Override
    public String toString() {
        return kind() + " communicator rank " + rank + " of " + size + " on device " + gpu.deviceOrdinal();
    }
}
