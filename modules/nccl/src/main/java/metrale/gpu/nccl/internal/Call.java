// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import metrale.gpu.DevicePtr;
import metrale.gpu.Stream;
import metrale.gpu.nccl.NcclDataType;
import metrale.gpu.nccl.NcclRedOp;

/**
 * One call of a communicator, checked: what it is, its buffers and counts, its root or peer.
 *
 * @param kind   what it is
 * @param send   the input, or {@code null} (recv)
 * @param recv   the output, or {@code null} (send)
 * @param count  the count the NCCL function takes (per rank for all-gather and reduce-scatter)
 * @param type   the element type
 * @param op     the reduction, or {@code null}
 * @param root   the root (broadcast, reduce) or peer (send, recv); -1 where none
 * @param stream the stream
 */
record Call(Kind kind, DevicePtr send, DevicePtr recv, long count, NcclDataType type, NcclRedOp op, int root,
            Stream stream) {

    /** The operations. */
    enum Kind {
        ALL_REDUCE("allReduce", "ncclAllReduce"),
        BROADCAST("broadcast", "ncclBroadcast"),
        REDUCE("reduce", "ncclReduce"),
        ALL_GATHER("allGather", "ncclAllGather"),
        REDUCE_SCATTER("reduceScatter", "ncclReduceScatter"),
        SEND("send", "ncclSend"),
        RECV("recv", "ncclRecv");

        final String method;
        final String function;

        Kind(String method, String function) {
            this.method = method;
            this.function = function;
        }
    }

    /** {@return the bytes this rank reads from {@code send}} */
    long sendBytes(int size, int rank) {
        long n = count * type.bytes();
        return switch (kind) {
            case ALL_REDUCE, REDUCE, ALL_GATHER, SEND -> n;
            case BROADCAST -> rank == root ? n : 0;
            case REDUCE_SCATTER -> Math.multiplyExact(n, size);
            case RECV -> 0;
        };
    }

    /** {@return the bytes this rank writes to {@code recv}} */
    long recvBytes(int size, int rank) {
        long n = count * type.bytes();
        return switch (kind) {
            case ALL_REDUCE, BROADCAST, REDUCE_SCATTER, RECV -> n;
            case REDUCE -> rank == root ? n : 0;
            case ALL_GATHER -> Math.multiplyExact(n, size);
            case SEND -> 0;
        };
    }

    /** {@return the call as the NCCL function and its arguments, for errors} */
    String describe() {
        return kind.function + "(count=" + count + ", " + type + (op == null ? "" : ", " + op)
                + (root < 0 ? "" : (kind == Kind.SEND || kind == Kind.RECV ? ", peer=" : ", root=") + root) + ")";
    }

    /** {@return whether {@code other}, another rank's call at the same position, matches this one} */
    boolean matches(Call other) {
        return kind == other.kind && count == other.count && type == other.type && op == other.op && root == other.root;
    }
}
