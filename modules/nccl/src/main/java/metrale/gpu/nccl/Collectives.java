// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import metrale.gpu.Gpu;
import metrale.gpu.Setting;
import metrale.gpu.nccl.internal.GroupState;
import metrale.gpu.nccl.internal.NcclCommunicator;
import metrale.gpu.nccl.internal.NcclLib;
import metrale.gpu.nccl.internal.SimCommunicator;
import metrale.gpu.spi.Availability;

/**
 * Makes communicators and groups their calls. The runtime's backend picks the implementation: a
 * CUDA runtime gets NCCL ({@code libnccl.so.2}), a simulator runtime the simulated communicator,
 * which keeps NCCL's rules so distributed code is tested without GPUs.
 *
 * <pre>{@code
 * // one process, several GPUs
 * List<Communicator> comms = Collectives.initAll(List.of(gpu0, gpu1));
 * Collectives.groupStart();
 * for (Communicator c : comms) c.allReduce(grad[c.rank()], grad[c.rank()], n, NcclDataType.FLOAT32, NcclRedOp.SUM, stream[c.rank()]);
 * Collectives.groupEnd();
 *
 * // several processes: rank 0 makes the id, the application carries it to the others
 * NcclUniqueId id = Collectives.uniqueId(gpu);          // on rank 0; send id.toHex() to every rank
 * Communicator c = Collectives.initRank(gpu, nranks, id, rank);
 * }</pre>
 *
 * <p><b>Timeouts.</b> A rank waits {@link #timeout()} for the others to join ({@code initRank}) and,
 * on the simulator, to call each collective; then it fails with {@link NcclResult#IN_PROGRESS}
 * naming the missing ranks. The default is the setting {@link Setting#NCCL_TIMEOUT_MILLIS}: the system
 * property {@code metrale.nccl.timeoutMillis}, else the environment variable
 * {@code METRALE_NCCL_TIMEOUT_MILLIS}, else 300000 (5 minutes).
 */
public final class Collectives {

    /** The system property giving the default timeout in milliseconds. */
    public static final String TIMEOUT_PROPERTY = "metrale.nccl.timeoutMillis";

    private Collectives() {
    }

    /**
     * {@return the default time a rank waits for the others: setting {@code nccl.timeoutMillis}}
     *
     * @throws IllegalArgumentException naming the property and the environment variable when the
     *                                  value is not a whole number of at least 1
     */
    public static Duration timeout() {
        Setting s = Setting.NCCL_TIMEOUT_MILLIS;
        long ms = s.whole(null);
        if (ms < 1) {
            throw new IllegalArgumentException(s.what() + " = " + ms + " must be at least 1 (milliseconds)");
        }
        return Duration.ofMillis(ms);
    }

    /** {@return whether NCCL loads here, and if not, why; never throws} */
    public static Availability ncclAvailability() {
        return NcclLib.failure().map(Availability::no).orElseGet(Availability::yes);
    }

    /**
     * {@return NCCL's version, e.g. 22105 for 2.21.5 ({@code ncclGetVersion})}
     *
     * @throws NcclException {@code SYSTEM_ERROR} with the reason when NCCL does not load
     */
    public static int ncclVersion() {
        return NcclLib.getVersion();
    }

    private static boolean simulated(Gpu gpu) {
        String b = gpu.backendName();
        if (b.equals("sim")) {
            return true;
        }
        if (b.equals("cuda")) {
            return false;
        }
        throw new IllegalArgumentException("no communicator for the " + b + " backend (cuda or sim)");
    }

    /**
     * {@return a new id for a communicator over several processes ({@code ncclGetUniqueId})}
     * Call it on one rank and give it to every rank. A simulator runtime makes a simulated id,
     * valid in this JVM.
     *
     * @param gpu the calling rank's runtime, which says which implementation the id is for
     */
    public static NcclUniqueId uniqueId(Gpu gpu) {
        return simulated(gpu) ? SimCommunicator.uniqueId() : NcclLib.getUniqueId();
    }

    /**
     * A communicator over several runtimes of this process, rank {@code i} on {@code gpus.get(i)}
     * ({@code ncclCommInitAll}; on CUDA one runtime per device).
     *
     * @param gpus the runtimes, all of one backend
     * @return the communicators, by rank
     * @throws IllegalArgumentException if the list is empty or mixes backends
     */
    public static List<Communicator> initAll(List<Gpu> gpus) {
        return initAll(gpus, timeout());
    }

    /**
     * As {@link #initAll(List)}, with the simulator's per-collective timeout.
     *
     * @param gpus    the runtimes
     * @param timeout how long a simulated rank waits for the others in a collective
     * @return the communicators, by rank
     */
    public static List<Communicator> initAll(List<Gpu> gpus, Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (gpus.isEmpty()) {
            throw new IllegalArgumentException("initAll: no runtimes");
        }
        Gpu[] g = gpus.toArray(Gpu[]::new);
        boolean sim = simulated(g[0]);
        for (Gpu x : g) {
            if (simulated(x) != sim) {
                throw new IllegalArgumentException("initAll: the runtimes mix backends " + gpus.stream().map(Gpu::backendName).toList());
            }
        }
        return List.of(sim ? SimCommunicator.initAll(g, timeout) : NcclCommunicator.initAll(g));
    }

    /**
     * Joins a communicator over several processes ({@code ncclCommInitRank}), waiting at most
     * {@link #timeout()} for every rank.
     *
     * @param gpu    this rank's runtime
     * @param nranks the rank count
     * @param id     the id rank 0 made with {@link #uniqueId}
     * @param rank   this rank, 0 to nranks - 1
     * @return the communicator
     * @throws NcclException {@code IN_PROGRESS} if not every rank joined in time
     */
    public static Communicator initRank(Gpu gpu, int nranks, NcclUniqueId id, int rank) {
        return initRank(gpu, nranks, id, rank, timeout());
    }

    /**
     * As {@link #initRank(Gpu, int, NcclUniqueId, int)} with a timeout of its own.
     *
     * @param gpu     this rank's runtime
     * @param nranks  the rank count, at least 1
     * @param id      the id
     * @param rank    this rank
     * @param timeout how long to wait for every rank (and, simulated, in each collective)
     * @return the communicator
     */
    public static Communicator initRank(Gpu gpu, int nranks, NcclUniqueId id, int rank, Duration timeout) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(timeout, "timeout");
        if (nranks < 1) {
            throw new IllegalArgumentException("initRank: nranks=" + nranks + " must be at least 1");
        }
        if (rank < 0 || rank >= nranks) {
            throw new IllegalArgumentException("initRank: rank=" + rank + " is not in [0, " + nranks + ")");
        }
        return simulated(gpu) ? SimCommunicator.initRank(gpu, nranks, id, rank, timeout)
                : NcclCommunicator.initRank(gpu, nranks, id, rank, timeout);
    }

    /**
     * {@code ncclGroupStart}: the calling thread's collectives until the matching
     * {@link #groupEnd()} are issued together, which one thread driving several ranks needs.
     * Groups nest.
     */
    public static void groupStart() {
        if (NcclLib.failure().isEmpty()) {
            NcclLib.groupStart();
        }
        GroupState.start();
    }

    /**
     * {@code ncclGroupEnd}: issues the group's calls. Simulated calls complete before it returns.
     *
     * @throws IllegalStateException if the thread has no open group
     */
    public static void groupEnd() {
        GroupState.finish();
    }
}
