// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import java.util.Optional;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.Stream;

/**
 * One rank of a communicator ({@code ncclComm_t}): collectives over the ranks' device buffers,
 * ordered on a stream of this rank's {@link Gpu}. Made by {@link Collectives}.
 *
 * <p><b>Ordering.</b> As NCCL: every rank must call the same collectives in the same order with
 * the same count, type, operation and root; a collective completes when every rank has enqueued
 * it. On CUDA a call returns once the operation is enqueued on the stream; calls for several
 * ranks from one thread must sit between {@link Collectives#groupStart()} and
 * {@link Collectives#groupEnd()}. The simulated communicator completes the operation before the
 * call (or the group end) returns, which is one of the orders NCCL allows.
 *
 * <p><b>Checks.</b> Counts must not be negative, roots and peers must be ranks, and every buffer
 * range must be live memory of this rank's runtime (the ledger), before NCCL sees it.
 *
 * <p><b>Errors.</b> An {@link NcclException}. An asynchronous error of the communicator
 * ({@code ncclCommGetAsyncError}) is latched like a sticky fault: every later call throws it,
 * until {@link #abort()}.
 *
 * <p><b>Threads.</b> One thread at a time per communicator, as NCCL requires; different
 * communicators may be used from different threads at once.
 *
 * <p><b>Lifecycle.</b> {@link #close()} ({@code ncclCommDestroy}) is idempotent and never throws;
 * {@link #abort()} ({@code ncclCommAbort}) stops outstanding work first. Any call after either is
 * an {@link IllegalStateException}. Close communicators before their runtimes.
 */
public interface Communicator extends AutoCloseable {

    /** {@return this rank, 0 to {@link #size()} - 1} */
    int rank();

    /** {@return the number of ranks} */
    int size();

    /** {@return the runtime this rank runs on} */
    Gpu gpu();

    /** {@return {@code nccl} for the NCCL binding, {@code sim} for the simulated communicator} */
    String kind();

    /**
     * {@code ncclAllReduce}: every rank's {@code recv} gets the reduction of all ranks' {@code send}.
     *
     * @param send   {@code count} elements
     * @param recv   {@code count} elements; may equal {@code send} (in place)
     * @param count  elements, at least 0
     * @param type   the element type
     * @param op     the reduction
     * @param stream a stream of {@link #gpu()}
     */
    void allReduce(DevicePtr send, DevicePtr recv, long count, NcclDataType type, NcclRedOp op, Stream stream);

    /**
     * {@code ncclBroadcast}: every rank's {@code recv} gets the root's {@code send}.
     *
     * @param send   {@code count} elements, read on the root only
     * @param recv   {@code count} elements
     * @param count  elements
     * @param type   the element type
     * @param root   the root rank
     * @param stream a stream of {@link #gpu()}
     */
    void broadcast(DevicePtr send, DevicePtr recv, long count, NcclDataType type, int root, Stream stream);

    /**
     * {@code ncclReduce}: the root's {@code recv} gets the reduction of all ranks' {@code send}.
     *
     * @param send   {@code count} elements
     * @param recv   {@code count} elements, written on the root only
     * @param count  elements
     * @param type   the element type
     * @param op     the reduction
     * @param root   the root rank
     * @param stream a stream of {@link #gpu()}
     */
    void reduce(DevicePtr send, DevicePtr recv, long count, NcclDataType type, NcclRedOp op, int root, Stream stream);

    /**
     * {@code ncclAllGather}: every rank's {@code recv} gets all ranks' {@code send}, by rank.
     *
     * @param send      {@code sendCount} elements
     * @param recv      {@code size() * sendCount} elements
     * @param sendCount elements per rank
     * @param type      the element type
     * @param stream    a stream of {@link #gpu()}
     */
    void allGather(DevicePtr send, DevicePtr recv, long sendCount, NcclDataType type, Stream stream);

    /**
     * {@code ncclReduceScatter}: rank {@code r}'s {@code recv} gets block {@code r} of the reduction
     * of all ranks' {@code send}.
     *
     * @param send      {@code size() * recvCount} elements
     * @param recv      {@code recvCount} elements
     * @param recvCount elements per rank
     * @param type      the element type
     * @param op        the reduction
     * @param stream    a stream of {@link #gpu()}
     */
    void reduceScatter(DevicePtr send, DevicePtr recv, long recvCount, NcclDataType type, NcclRedOp op, Stream stream);

    /**
     * {@code ncclSend}: sends to {@code peer}, which must post a matching {@link #recv}.
     *
     * @param send   {@code count} elements
     * @param count  elements
     * @param type   the element type
     * @param peer   the receiving rank
     * @param stream a stream of {@link #gpu()}
     */
    void send(DevicePtr send, long count, NcclDataType type, int peer, Stream stream);

    /**
     * {@code ncclRecv}: receives what {@code peer} sends with a matching {@link #send}.
     *
     * @param recv   {@code count} elements
     * @param count  elements
     * @param type   the element type
     * @param peer   the sending rank
     * @param stream a stream of {@link #gpu()}
     */
    void recv(DevicePtr recv, long count, NcclDataType type, int peer, Stream stream);

    /**
     * {@return the communicator's asynchronous error, if it has one ({@code ncclCommGetAsyncError})}
     * Once seen it is latched: every later call throws it.
     */
    Optional<NcclException> asyncError();

    /** {@return the calls, bytes and failures so far} */
    CollectiveStats stats();

    /** {@code ncclCommAbort}: stops outstanding operations and frees the communicator. Idempotent; never throws. */
    void abort();

    /** {@code ncclCommDestroy}. Idempotent; never throws. */
    @Override
    void close();
}
