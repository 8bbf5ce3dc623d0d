// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import metrale.gpu.nccl.NcclException;
import metrale.gpu.nccl.NcclResult;
import metrale.gpu.nccl.NcclUniqueId;

/**
 * The checked half of the NCCL binding: every call this module makes, and the one place an
 * {@code ncclResult_t} becomes an {@link NcclException}. The raw downcalls are generated into
 * {@link LibNccl} from {@code src/main/bindings/nccl.txt}.
 *
 * <p><b>Loading.</b> The library named by {@systemProperty metrale.nccl.library}, else the first of
 * {@code libnccl.so.2}, {@code libnccl.so} that loads, opened on first use. A library that does not
 * load, or lacks a required symbol, or a module without native access, leaves {@link #failure()}
 * holding the reason; nothing throws at class load. Optional symbols
 * ({@code ncclCommInitRankConfig}, {@code ncclGetLastError}) are capability flags.
 *
 * <p><b>Calls.</b> {@code ncclComm_t}, {@code cudaStream_t} and device buffers travel as
 * {@code long}, {@code size_t} as {@code long}, enums as {@code int}. A call's arguments are
 * formatted into its message only when it fails. The {@code ncclUniqueId} of
 * {@code ncclCommInitRank} is a 128-byte struct passed by value.
 */
public final class NcclLib {

    private static final int SUCCESS = 0;
    /** {@code ncclInProgress}. */
    static final int IN_PROGRESS = 7;

    /**
     * The leading fields of {@code ncclConfig_t} as NCCL 2.14 defined it: {@code size_t size;
     * unsigned magic; unsigned version; int blocking; int cgaClusterSize; int minCTAs; int
     * maxCTAs; const char* netName;}. NCCL reads only {@code size} bytes of a config whose
     * {@code version} is older than its own, so later fields stay at their defaults.
     */
    static final StructLayout CONFIG_2_14 = MemoryLayout.structLayout(
            JAVA_LONG.withName("size"), JAVA_INT.withName("magic"), JAVA_INT.withName("version"),
            JAVA_INT.withName("blocking"), JAVA_INT.withName("cgaClusterSize"), JAVA_INT.withName("minCTAs"),
            JAVA_INT.withName("maxCTAs"), ADDRESS.withName("netName"));
    /** {@code NCCL_CONFIG_MAGIC}. */
    static final int CONFIG_MAGIC = 0xcafebeef;
    /** {@code NCCL_VERSION(2, 14, 3)}: the config layout above. */
    static final int CONFIG_VERSION = 21403;
    /** {@code NCCL_CONFIG_UNDEF_INT}: "NCCL's default". */
    static final int CONFIG_UNDEF_INT = Integer.MIN_VALUE;

    private NcclLib() {
    }

    /** {@return why NCCL cannot be used here, or empty when it can; never throws} */
    public static Optional<String> failure() {
        return LibNccl.LIB.failure();
    }

    /** {@return the library's name as opened, or the first name tried} */
    public static String libraryName() {
        return LibNccl.LIB.name();
    }

    /** {@return whether {@code ncclCommInitRankConfig} (non-blocking init, so a join can time out) is present} */
    public static boolean hasInitRankConfig() {
        return LibNccl.ncclCommInitRankConfig$PRESENT;
    }

    private static void requireLoaded(String function) {
        if (failure().isPresent()) {
            throw new NcclException(NcclResult.SYSTEM_ERROR, NcclResult.SYSTEM_ERROR.code(), function, failure().get());
        }
    }

    // ---- errors -------------------------------------------------------------------------------

    /** {@return NCCL's text at {@code s}, a static NUL-terminated string of unknown length, or empty for NULL} */
    private static String text(MemorySegment s) {
        return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(4096).getString(0);
    }

    /** {@return {@code ncclGetErrorString(status)}} */
    static String errorString(int status) {
        return text(LibNccl.ncclGetErrorString(status));
    }

    /** {@return {@code ncclGetLastError(comm)}, or empty where the symbol is missing} */
    static String lastError(long comm) {
        return LibNccl.ncclGetLastError$PRESENT ? text(LibNccl.ncclGetLastError(comm)) : "";
    }

    /**
     * The one place a status becomes an exception.
     *
     * @param status   what NCCL returned
     * @param function the NCCL function
     * @param args     its arguments
     * @param comm     the communicator for {@code ncclGetLastError}, or 0
     * @return the exception
     */
    static NcclException error(int status, String function, String args, long comm) {
        String last = lastError(comm);
        return new NcclException(NcclResult.of(status), status, function, errorString(status)
                + (last.isEmpty() ? "" : " (" + last + ")") + (args.isEmpty() ? "" : " [" + args + "]"));
    }

    /** {@return whether a status is a failure: neither success nor {@code ncclInProgress}, which a non-blocking communicator may answer} */
    private static boolean failed(int status) {
        return status != SUCCESS && status != IN_PROGRESS;
    }

    private static String format(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    // ---- setup and teardown ---------------------------------------------------------------------

    /** {@return e.g. 22105 for 2.21.5} */
    public static int getVersion() {
        requireLoaded("ncclGetVersion");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(LibNccl.ncclGetVersion(out), "ncclGetVersion", "");
            return out.get(JAVA_INT, 0);
        }
    }

    /** {@return a new id} */
    public static NcclUniqueId getUniqueId() {
        requireLoaded("ncclGetUniqueId");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(LibNccl.ncclUniqueId$LAYOUT);
            check(LibNccl.ncclGetUniqueId(out), "ncclGetUniqueId", "");
            return new NcclUniqueId(out.toArray(JAVA_BYTE));
        }
    }

    private static void check(int status, String function, String args) {
        if (status != SUCCESS) {
            throw error(status, function, args, 0);
        }
    }

    /**
     * {@code ncclCommInitRank}: blocks until every rank has joined. The calling thread's current
     * device is the rank's.
     *
     * @return the communicator
     */
    public static long commInitRank(int nranks, NcclUniqueId id, int rank) {
        requireLoaded("ncclCommInitRank");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(LibNccl.ncclCommInitRank(out, nranks, uniqueId(a, id), rank), "ncclCommInitRank",
                    "nranks=" + nranks + ", rank=" + rank);
            return out.get(JAVA_LONG, 0);
        }
    }

    private static MemorySegment uniqueId(Arena a, NcclUniqueId id) {
        return a.allocate(LibNccl.ncclUniqueId$LAYOUT).copyFrom(MemorySegment.ofArray(id.bytes()));
    }

    /**
     * {@code ncclCommInitRankConfig} with {@code blocking = 0}: returns at once with the
     * communicator, {@code ncclInProgress} until every rank has joined (poll
     * {@link #commGetAsyncError}).
     *
     * @return the communicator, still joining
     */
    public static long commInitRankNonBlocking(int nranks, NcclUniqueId id, int rank) {
        requireLoaded("ncclCommInitRankConfig");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            MemorySegment cfg = a.allocate(CONFIG_2_14);
            cfg.set(JAVA_LONG, 0, CONFIG_2_14.byteSize());
            cfg.set(JAVA_INT, 8, CONFIG_MAGIC);
            cfg.set(JAVA_INT, 12, CONFIG_VERSION);
            cfg.set(JAVA_INT, 16, 0);
            cfg.set(JAVA_INT, 20, CONFIG_UNDEF_INT);
            cfg.set(JAVA_INT, 24, CONFIG_UNDEF_INT);
            cfg.set(JAVA_INT, 28, CONFIG_UNDEF_INT);
            cfg.set(ADDRESS, 32, MemorySegment.NULL);
            int st = LibNccl.ncclCommInitRankConfig(out, nranks, uniqueId(a, id), rank, cfg);
            if (failed(st)) {
                throw error(st, "ncclCommInitRankConfig", "nranks=" + nranks + ", rank=" + rank + ", blocking=0", 0);
            }
            return out.get(JAVA_LONG, 0);
        }
    }

    /**
     * {@code ncclCommInitAll}: one communicator a device of this process.
     *
     * @param devices the CUDA device ordinals, one rank each
     * @return the communicators, by rank
     */
    public static long[] commInitAll(int[] devices) {
        requireLoaded("ncclCommInitAll");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG, devices.length);
            check(LibNccl.ncclCommInitAll(out, devices.length, a.allocateFrom(JAVA_INT, devices)), "ncclCommInitAll",
                    "ndev=" + devices.length + ", devlist=" + Arrays.toString(devices));
            return out.toArray(JAVA_LONG);
        }
    }

    /** {@return {@code ncclCommDestroy}'s result; never throws, for close paths} */
    public static NcclResult commDestroy(long comm) {
        return NcclResult.of(LibNccl.ncclCommDestroy(comm));
    }

    /** {@return {@code ncclCommAbort}'s result: it stops the communicator's outstanding operations and frees it; never throws} */
    public static NcclResult commAbort(long comm) {
        return NcclResult.of(LibNccl.ncclCommAbort(comm));
    }

    /** {@return the asynchronous error ({@code ncclSuccess}, {@code ncclInProgress} while joining, or a failure)} */
    public static int commGetAsyncError(long comm) {
        try (Arena a = Arena.ofConfined()) {
            return commGetAsyncError(comm, a.allocate(JAVA_INT));
        }
    }

    /**
     * {@code ncclCommGetAsyncError} into a caller's 4-byte segment, for the per-call poll.
     *
     * @param comm the communicator
     * @param out  4 bytes of native memory the caller owns
     * @return the asynchronous error
     */
    public static int commGetAsyncError(long comm, MemorySegment out) {
        int st = LibNccl.ncclCommGetAsyncError(comm, out);
        if (st != SUCCESS) {
            throw error(st, "ncclCommGetAsyncError", "comm=" + hex(comm), comm);
        }
        return out.get(JAVA_INT, 0);
    }

    /** {@return the communicator's rank count} */
    public static int commCount(long comm) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            commCheck(LibNccl.ncclCommCount(comm, out), "ncclCommCount", comm);
            return out.get(JAVA_INT, 0);
        }
    }

    /** {@return the communicator's rank} */
    public static int commUserRank(long comm) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            commCheck(LibNccl.ncclCommUserRank(comm, out), "ncclCommUserRank", comm);
            return out.get(JAVA_INT, 0);
        }
    }

    private static void commCheck(int status, String function, long comm) {
        if (status != SUCCESS) {
            throw error(status, function, "comm=" + hex(comm), comm);
        }
    }

    // ---- collectives: each returns whether NCCL answered ncclInProgress (a non-blocking communicator still working)

    /** {@code ncclAllReduce}; {@code recv} may equal {@code send}. */
    public static boolean allReduce(long send, long recv, long count, int type, int op, long comm, long stream) {
        int st = LibNccl.ncclAllReduce(send, recv, count, type, op, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclAllReduce", format("sendbuff=%#x, recvbuff=%#x, count=%d, datatype=%d, op=%d, stream=%#x",
                    send, recv, count, type, op, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclBroadcast}; {@code send} is read on the root only. */
    public static boolean broadcast(long send, long recv, long count, int type, int root, long comm, long stream) {
        int st = LibNccl.ncclBroadcast(send, recv, count, type, root, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclBroadcast", format("sendbuff=%#x, recvbuff=%#x, count=%d, datatype=%d, root=%d, stream=%#x",
                    send, recv, count, type, root, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclReduce}; {@code recv} is written on the root only. */
    public static boolean reduce(long send, long recv, long count, int type, int op, int root, long comm, long stream) {
        int st = LibNccl.ncclReduce(send, recv, count, type, op, root, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclReduce", format("sendbuff=%#x, recvbuff=%#x, count=%d, datatype=%d, op=%d, root=%d, stream=%#x",
                    send, recv, count, type, op, root, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclAllGather}: {@code sendCount} elements from each rank into {@code nranks * sendCount}. */
    public static boolean allGather(long send, long recv, long sendCount, int type, long comm, long stream) {
        int st = LibNccl.ncclAllGather(send, recv, sendCount, type, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclAllGather", format("sendbuff=%#x, recvbuff=%#x, sendcount=%d, datatype=%d, stream=%#x",
                    send, recv, sendCount, type, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclReduceScatter}: {@code nranks * recvCount} elements in, {@code recvCount} out. */
    public static boolean reduceScatter(long send, long recv, long recvCount, int type, int op, long comm, long stream) {
        int st = LibNccl.ncclReduceScatter(send, recv, recvCount, type, op, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclReduceScatter", format("sendbuff=%#x, recvbuff=%#x, recvcount=%d, datatype=%d, op=%d, stream=%#x",
                    send, recv, recvCount, type, op, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclSend} to rank {@code peer}. */
    public static boolean send(long send, long count, int type, int peer, long comm, long stream) {
        int st = LibNccl.ncclSend(send, count, type, peer, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclSend", format("sendbuff=%#x, count=%d, datatype=%d, peer=%d, stream=%#x",
                    send, count, type, peer, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclRecv} from rank {@code peer}. */
    public static boolean recv(long recv, long count, int type, int peer, long comm, long stream) {
        int st = LibNccl.ncclRecv(recv, count, type, peer, comm, stream);
        if (failed(st)) {
            throw error(st, "ncclRecv", format("recvbuff=%#x, count=%d, datatype=%d, peer=%d, stream=%#x",
                    recv, count, type, peer, stream), comm);
        }
        return st == IN_PROGRESS;
    }

    /** {@code ncclGroupStart}; {@code ncclInProgress} is a failure here. */
    public static void groupStart() {
        requireLoaded("ncclGroupStart");
        check(LibNccl.ncclGroupStart(), "ncclGroupStart", "");
    }

    /** {@return whether {@code ncclGroupEnd} answered {@code ncclInProgress} (a non-blocking communicator still working)} */
    public static boolean groupEnd() {
        requireLoaded("ncclGroupEnd");
        int st = LibNccl.ncclGroupEnd();
        if (failed(st)) {
            throw error(st, "ncclGroupEnd", "", 0);
        }
        return st == IN_PROGRESS;
    }
}
