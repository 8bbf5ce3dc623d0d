// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import metrale.gpu.Setting;
import metrale.gpu.nccl.NcclException;
import metrale.gpu.nccl.NcclResult;
import metrale.gpu.nccl.NcclUniqueId;

/**
 * NCCL ({@code libnccl.so.2}): every function this module calls, declared once, and the one place
 * an {@code ncclResult_t} becomes an {@link NcclException}.
 *
 * <p><b>Loading.</b> The library named by {@systemProperty metrale.nccl.library}, else the first of
 * {@code libnccl.so.2}, {@code libnccl.so} that loads, opened on first use in {@link Holder}. A
 * library that does not load, or lacks a required symbol, leaves {@link #failure()} holding the
 * reason; nothing throws at class load. Optional symbols ({@code ncclCommInitRankConfig},
 * {@code ncclGetLastError}) are {@code null} handles behind capability flags.
 *
 * <p><b>Calls.</b> {@code invokeExact} with exact types; {@code ncclComm_t}, {@code cudaStream_t}
 * and device pointers travel as {@code long} (a pointer and a 64-bit integer are passed alike on
 * the LP64 ABIs NCCL supports); {@code size_t} as {@code long}; enums as {@code int}. The
 * {@code ncclUniqueId} of {@code ncclCommInitRank} is a 128-byte struct passed by value.
 */
public final class NcclLib {

    /** The system property naming the NCCL library. */
    public static final String LIBRARY_PROPERTY = "metrale.nccl.library";

    private static final int SUCCESS = 0;
    /** {@code ncclInProgress}. */
    static final int IN_PROGRESS = 7;

    /** {@code ncclUniqueId}, passed by value. */
    static final StructLayout UNIQUE_ID = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(NcclUniqueId.BYTES, JAVA_BYTE).withName("internal"));

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

    /** Loads NCCL on first use; a failure is kept as the reason, never thrown from class init. */
    private static final class Holder {
        static final String NAME;
        static final String FAILURE;
        static final MethodHandle GET_VERSION;
        static final MethodHandle GET_UNIQUE_ID;
        static final MethodHandle COMM_INIT_RANK;
        static final MethodHandle COMM_INIT_RANK_CONFIG;
        static final MethodHandle COMM_INIT_ALL;
        static final MethodHandle COMM_DESTROY;
        static final MethodHandle COMM_ABORT;
        static final MethodHandle COMM_GET_ASYNC_ERROR;
        static final MethodHandle COMM_COUNT;
        static final MethodHandle COMM_USER_RANK;
        static final MethodHandle GET_ERROR_STRING;
        static final MethodHandle GET_LAST_ERROR;
        static final MethodHandle ALL_REDUCE;
        static final MethodHandle BROADCAST;
        static final MethodHandle REDUCE;
        static final MethodHandle ALL_GATHER;
        static final MethodHandle REDUCE_SCATTER;
        static final MethodHandle SEND;
        static final MethodHandle RECV;
        static final MethodHandle GROUP_START;
        static final MethodHandle GROUP_END;

        static {
            String prop = Setting.NCCL_LIBRARY.text(null).orElse(null);
            List<String> candidates = prop != null && !prop.isBlank()
                    ? List.of(prop.trim()) : List.of("libnccl.so.2", "libnccl.so");
            SymbolLookup lib = null;
            String name = null;
            List<String> why = new ArrayList<>();
            for (String c : candidates) {
                try {
                    // Loaded for the life of the process: communicators may live until exit.
                    lib = SymbolLookup.libraryLookup(c, Arena.global());
                    name = c;
                    break;
                } catch (IllegalArgumentException e) {
                    why.add(c + ": " + e.getMessage());
                }
            }
            MethodHandle[] h = new MethodHandle[21];
            String failure = null;
            if (lib == null) {
                failure = "NCCL did not load (tried " + String.join("; ", why) + "); install NCCL or set -D"
                        + LIBRARY_PROPERTY + "=/path/to/libnccl.so.2";
            } else {
                Module m = NcclLib.class.getModule();
                if (!m.isNativeAccessEnabled()) {
                    failure = "native access is not enabled for " + (m.isNamed() ? "module " + m.getName() : "the class path")
                            + ": start java with --enable-native-access=" + (m.isNamed() ? m.getName() : "ALL-UNNAMED");
                } else {
                    try {
                        Linker linker = Linker.nativeLinker();
                        SymbolLookup l = lib;
                        String n = name;
                        java.util.function.BiFunction<String, FunctionDescriptor, MethodHandle> req = (sym, fd) ->
                                linker.downcallHandle(l.find(sym).orElseThrow(() -> new UnsatisfiedLinkError(
                                        n + " has no symbol " + sym + ": NCCL is too old (2.14 or later is needed)")), fd);
                        java.util.function.BiFunction<String, FunctionDescriptor, MethodHandle> opt = (sym, fd) ->
                                l.find(sym).map(a -> linker.downcallHandle(a, fd)).orElse(null);
                        h[0] = req.apply("ncclGetVersion", fd(ADDRESS));
                        h[1] = req.apply("ncclGetUniqueId", fd(ADDRESS));
                        h[2] = req.apply("ncclCommInitRank", fd(ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT));
                        h[3] = opt.apply("ncclCommInitRankConfig", fd(ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT, ADDRESS));
                        h[4] = req.apply("ncclCommInitAll", fd(ADDRESS, JAVA_INT, ADDRESS));
                        h[5] = req.apply("ncclCommDestroy", fd(JAVA_LONG));
                        h[6] = req.apply("ncclCommAbort", fd(JAVA_LONG));
                        h[7] = req.apply("ncclCommGetAsyncError", fd(JAVA_LONG, ADDRESS));
                        h[8] = req.apply("ncclCommCount", fd(JAVA_LONG, ADDRESS));
                        h[9] = req.apply("ncclCommUserRank", fd(JAVA_LONG, ADDRESS));
                        h[10] = linker.downcallHandle(l.find("ncclGetErrorString").orElseThrow(() ->
                                new UnsatisfiedLinkError(n + " has no symbol ncclGetErrorString")),
                                FunctionDescriptor.of(ADDRESS, JAVA_INT));
                        h[11] = l.find("ncclGetLastError").map(a -> linker.downcallHandle(a,
                                FunctionDescriptor.of(ADDRESS, JAVA_LONG))).orElse(null);
                        h[12] = req.apply("ncclAllReduce", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[13] = req.apply("ncclBroadcast", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[14] = req.apply("ncclReduce", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[15] = req.apply("ncclAllGather", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[16] = req.apply("ncclReduceScatter", fd(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[17] = req.apply("ncclSend", fd(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[18] = req.apply("ncclRecv", fd(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
                        h[19] = req.apply("ncclGroupStart", fd());
                        h[20] = req.apply("ncclGroupEnd", fd());
                    } catch (UnsatisfiedLinkError | IllegalArgumentException e) {
                        failure = e.getMessage();
                        java.util.Arrays.fill(h, null);
                    }
                }
            }
            NAME = name;
            FAILURE = failure;
            GET_VERSION = h[0];
            GET_UNIQUE_ID = h[1];
            COMM_INIT_RANK = h[2];
            COMM_INIT_RANK_CONFIG = h[3];
            COMM_INIT_ALL = h[4];
            COMM_DESTROY = h[5];
            COMM_ABORT = h[6];
            COMM_GET_ASYNC_ERROR = h[7];
            COMM_COUNT = h[8];
            COMM_USER_RANK = h[9];
            GET_ERROR_STRING = h[10];
            GET_LAST_ERROR = h[11];
            ALL_REDUCE = h[12];
            BROADCAST = h[13];
            REDUCE = h[14];
            ALL_GATHER = h[15];
            REDUCE_SCATTER = h[16];
            SEND = h[17];
            RECV = h[18];
            GROUP_START = h[19];
            GROUP_END = h[20];
        }
    }

    private static FunctionDescriptor fd(MemoryLayout... args) {
        return FunctionDescriptor.of(JAVA_INT, args);
    }

    /** {@return why NCCL cannot be used here, or empty when it can; never throws} */
    public static Optional<String> failure() {
        try {
            return Optional.ofNullable(Holder.FAILURE);
        } catch (LinkageError e) {
            return Optional.of("NCCL failed to load: " + e);
        }
    }

    /** {@return the library's name as opened} */
    public static String libraryName() {
        return Holder.NAME;
    }

    /** {@return whether {@code ncclCommInitRankConfig} (non-blocking init, so a join can time out) is present} */
    public static boolean hasInitRankConfig() {
        return Holder.COMM_INIT_RANK_CONFIG != null;
    }

    private static void requireLoaded(String function) {
        if (Holder.FAILURE != null) {
            throw new NcclException(NcclResult.SYSTEM_ERROR, NcclResult.SYSTEM_ERROR.code(), function, Holder.FAILURE);
        }
    }

    private static AssertionError unreachable(Throwable t) {
        return new AssertionError("should not reach here", t);
    }

    /** {@return {@code ncclGetErrorString(status)}} */
    static String errorString(int status) {
        try {
            MemorySegment s = (MemorySegment) Holder.GET_ERROR_STRING.invokeExact(status);
            return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(4096).getString(0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /** {@return {@code ncclGetLastError(comm)}, or empty where the symbol is missing} */
    static String lastError(long comm) {
        if (Holder.GET_LAST_ERROR == null) {
            return "";
        }
        try {
            MemorySegment s = (MemorySegment) Holder.GET_LAST_ERROR.invokeExact(comm);
            return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(4096).getString(0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
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
        String text = errorString(status);
        String last = comm != 0 ? lastError(comm) : lastError(0);
        return new NcclException(NcclResult.of(status), status, function, text + (last.isEmpty() ? "" : " (" + last + ")")
                + (args.isEmpty() ? "" : " [" + args + "]"));
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclGetVersion(int *version); }
     *
     * @return e.g. 22105 for 2.21.5
     */
    public static int getVersion() {
        requireLoaded("ncclGetVersion");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            int st = (int) Holder.GET_VERSION.invokeExact(out);
            if (st != SUCCESS) {
                throw error(st, "ncclGetVersion", "", 0);
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId); }
     *
     * @return a new id
     */
    public static NcclUniqueId getUniqueId() {
        requireLoaded("ncclGetUniqueId");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(UNIQUE_ID);
            int st = (int) Holder.GET_UNIQUE_ID.invokeExact(out);
            if (st != SUCCESS) {
                throw error(st, "ncclGetUniqueId", "", 0);
            }
            return new NcclUniqueId(out.toArray(JAVA_BYTE));
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank); }
     * Blocks until every rank has joined. The calling thread's current device is the rank's.
     *
     * @param nranks the rank count
     * @param id     the id
     * @param rank   this rank
     * @return the communicator
     */
    public static long commInitRank(int nranks, NcclUniqueId id, int rank) {
        requireLoaded("ncclCommInitRank");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            MemorySegment idv = a.allocate(UNIQUE_ID).copyFrom(MemorySegment.ofArray(id.bytes()));
            int st = (int) Holder.COMM_INIT_RANK.invokeExact(out, nranks, idv, rank);
            if (st != SUCCESS) {
                throw error(st, "ncclCommInitRank", "nranks=" + nranks + ", rank=" + rank, 0);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config); }
     * With {@code blocking = 0}: returns at once with the communicator, {@code ncclInProgress}
     * until every rank has joined (poll {@link #commGetAsyncError}).
     *
     * @param nranks the rank count
     * @param id     the id
     * @param rank   this rank
     * @return the communicator, still joining
     */
    public static long commInitRankNonBlocking(int nranks, NcclUniqueId id, int rank) {
        requireLoaded("ncclCommInitRankConfig");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            MemorySegment idv = a.allocate(UNIQUE_ID).copyFrom(MemorySegment.ofArray(id.bytes()));
            MemorySegment cfg = a.allocate(CONFIG_2_14);
            cfg.set(JAVA_LONG, 0, CONFIG_2_14.byteSize());
            cfg.set(JAVA_INT, 8, CONFIG_MAGIC);
            cfg.set(JAVA_INT, 12, CONFIG_VERSION);
            cfg.set(JAVA_INT, 16, 0);
            cfg.set(JAVA_INT, 20, CONFIG_UNDEF_INT);
            cfg.set(JAVA_INT, 24, CONFIG_UNDEF_INT);
            cfg.set(JAVA_INT, 28, CONFIG_UNDEF_INT);
            cfg.set(ADDRESS, 32, MemorySegment.NULL);
            int st = (int) Holder.COMM_INIT_RANK_CONFIG.invokeExact(out, nranks, idv, rank, cfg);
            if (st != SUCCESS && st != IN_PROGRESS) {
                throw error(st, "ncclCommInitRankConfig", "nranks=" + nranks + ", rank=" + rank + ", blocking=0", 0);
            }
            return out.get(JAVA_LONG, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist); }
     *
     * @param devices the CUDA device ordinals, one rank each
     * @return the communicators, by rank
     */
    public static long[] commInitAll(int[] devices) {
        requireLoaded("ncclCommInitAll");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG, devices.length);
            MemorySegment list = a.allocateFrom(JAVA_INT, devices);
            int st = (int) Holder.COMM_INIT_ALL.invokeExact(out, devices.length, list);
            if (st != SUCCESS) {
                throw error(st, "ncclCommInitAll", "ndev=" + devices.length + ", devlist=" + java.util.Arrays.toString(devices), 0);
            }
            return out.toArray(JAVA_LONG);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommDestroy(ncclComm_t comm); }
     *
     * @param comm the communicator
     * @return the result; never throws, for close paths
     */
    public static NcclResult commDestroy(long comm) {
        try {
            return NcclResult.of((int) Holder.COMM_DESTROY.invokeExact(comm));
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommAbort(ncclComm_t comm); }
     * Stops the communicator's outstanding operations and frees it.
     *
     * @param comm the communicator
     * @return the result; never throws
     */
    public static NcclResult commAbort(long comm) {
        try {
            return NcclResult.of((int) Holder.COMM_ABORT.invokeExact(comm));
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError); }
     *
     * @param comm the communicator
     * @return the asynchronous error ({@code ncclSuccess}, {@code ncclInProgress} while joining, or a failure)
     */
    public static int commGetAsyncError(long comm) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            int st = (int) Holder.COMM_GET_ASYNC_ERROR.invokeExact(comm, out);
            if (st != SUCCESS) {
                throw error(st, "ncclCommGetAsyncError", "comm=" + hex(comm), comm);
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
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
        try {
            int st = (int) Holder.COMM_GET_ASYNC_ERROR.invokeExact(comm, out);
            if (st != SUCCESS) {
                throw error(st, "ncclCommGetAsyncError", "comm=" + hex(comm), comm);
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommCount(const ncclComm_t comm, int* count); }
     *
     * @param comm the communicator
     * @return its rank count
     */
    public static int commCount(long comm) {
        return intOut(Holder.COMM_COUNT, comm, "ncclCommCount");
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank); }
     *
     * @param comm the communicator
     * @return its rank
     */
    public static int commUserRank(long comm) {
        return intOut(Holder.COMM_USER_RANK, comm, "ncclCommUserRank");
    }

    private static int intOut(MethodHandle h, long comm, String function) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            int st = (int) h.invokeExact(comm, out);
            if (st != SUCCESS) {
                throw error(st, function, "comm=" + hex(comm), comm);
            }
            return out.get(JAVA_INT, 0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /** {@return whether NCCL answered {@code ncclInProgress}, which a non-blocking communicator may} */
    private static boolean check(int st, String function, String args, long comm) {
        if (st == IN_PROGRESS) {
            return true;
        }
        if (st != SUCCESS) {
            throw error(st, function, args, comm);
        }
        return false;
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param send   the input
     * @param recv   the output (may equal {@code send})
     * @param count  elements
     * @param type   {@code ncclDataType_t}
     * @param op     {@code ncclRedOp_t}
     * @param comm   the communicator
     * @param stream the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean allReduce(long send, long recv, long count, int type, int op, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.ALL_REDUCE.invokeExact(send, recv, count, type, op, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclAllReduce", "sendbuff=" + hex(send) + ", recvbuff=" + hex(recv) + ", count=" + count
                + ", datatype=" + type + ", op=" + op + ", stream=" + hex(stream), comm);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param send   the input (read on the root only)
     * @param recv   the output
     * @param count  elements
     * @param type   {@code ncclDataType_t}
     * @param root   the root rank
     * @param comm   the communicator
     * @param stream the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean broadcast(long send, long recv, long count, int type, int root, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.BROADCAST.invokeExact(send, recv, count, type, root, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclBroadcast", "sendbuff=" + hex(send) + ", recvbuff=" + hex(recv) + ", count=" + count
                + ", datatype=" + type + ", root=" + root + ", stream=" + hex(stream), comm);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param send   the input
     * @param recv   the output (written on the root only)
     * @param count  elements
     * @param type   {@code ncclDataType_t}
     * @param op     {@code ncclRedOp_t}
     * @param root   the root rank
     * @param comm   the communicator
     * @param stream the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean reduce(long send, long recv, long count, int type, int op, int root, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.REDUCE.invokeExact(send, recv, count, type, op, root, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclReduce", "sendbuff=" + hex(send) + ", recvbuff=" + hex(recv) + ", count=" + count
                + ", datatype=" + type + ", op=" + op + ", root=" + root + ", stream=" + hex(stream), comm);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param send      the input, {@code sendCount} elements
     * @param recv      the output, {@code nranks * sendCount} elements
     * @param sendCount elements per rank
     * @param type      {@code ncclDataType_t}
     * @param comm      the communicator
     * @param stream    the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean allGather(long send, long recv, long sendCount, int type, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.ALL_GATHER.invokeExact(send, recv, sendCount, type, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclAllGather", "sendbuff=" + hex(send) + ", recvbuff=" + hex(recv) + ", sendcount=" + sendCount
                + ", datatype=" + type + ", stream=" + hex(stream), comm);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param send      the input, {@code nranks * recvCount} elements
     * @param recv      the output, {@code recvCount} elements
     * @param recvCount elements per rank
     * @param type      {@code ncclDataType_t}
     * @param op        {@code ncclRedOp_t}
     * @param comm      the communicator
     * @param stream    the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean reduceScatter(long send, long recv, long recvCount, int type, int op, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.REDUCE_SCATTER.invokeExact(send, recv, recvCount, type, op, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclReduceScatter", "sendbuff=" + hex(send) + ", recvbuff=" + hex(recv) + ", recvcount=" + recvCount
                + ", datatype=" + type + ", op=" + op + ", stream=" + hex(stream), comm);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param send   the input
     * @param count  elements
     * @param type   {@code ncclDataType_t}
     * @param peer   the receiving rank
     * @param comm   the communicator
     * @param stream the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean send(long send, long count, int type, int peer, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.SEND.invokeExact(send, count, type, peer, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclSend", "sendbuff=" + hex(send) + ", count=" + count + ", datatype=" + type + ", peer=" + peer
                + ", stream=" + hex(stream), comm);
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream); }
     *
     * @param recv   the output
     * @param count  elements
     * @param type   {@code ncclDataType_t}
     * @param peer   the sending rank
     * @param comm   the communicator
     * @param stream the stream
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean recv(long recv, long count, int type, int peer, long comm, long stream) {
        int st;
        try {
            st = (int) Holder.RECV.invokeExact(recv, count, type, peer, comm, stream);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclRecv", "recvbuff=" + hex(recv) + ", count=" + count + ", datatype=" + type + ", peer=" + peer
                + ", stream=" + hex(stream), comm);
    }

    /** {@snippet lang=c : ncclResult_t ncclGroupStart(); } */
    public static void groupStart() {
        requireLoaded("ncclGroupStart");
        int st;
        try {
            st = (int) Holder.GROUP_START.invokeExact();
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        if (check(st, "ncclGroupStart", "", 0)) {
            throw error(st, "ncclGroupStart", "", 0);
        }
    }

    /**
     * {@snippet lang=c : ncclResult_t ncclGroupEnd(); }
     *
     * @return whether NCCL answered {@code ncclInProgress} (a non-blocking communicator still working)
     */
    public static boolean groupEnd() {
        requireLoaded("ncclGroupEnd");
        int st;
        try {
            st = (int) Holder.GROUP_END.invokeExact();
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
        return check(st, "ncclGroupEnd", "", 0);
    }
}
