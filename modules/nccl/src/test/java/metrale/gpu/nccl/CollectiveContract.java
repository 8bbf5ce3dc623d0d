// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The collectives every communicator must have, whatever its backend: each collective's result
 * against plain Java, groups, send/recv, the checks before NCCL, counters and the lifecycle.
 * With one rank every collective is its degenerate case (a copy). A backend's subclass opens one
 * runtime per rank.
 */
public abstract class CollectiveContract {

    /** The ranks' runtimes, opened by {@link #openRanks()}. */
    protected List<Gpu> gpus;
    /** One communicator per rank, from {@link Collectives#initAll}. */
    protected List<Communicator> comms;
    /** One created stream per rank. */
    protected List<Stream> streams;
    private final List<DevicePtr[]> allocs = new ArrayList<>();

    /** Creates the contract; subclasses are instantiated by JUnit. */
    protected CollectiveContract() {
    }

    /** {@return one open runtime per rank, of one backend} */
    protected abstract List<Gpu> openRanks();

    /** Opens the ranks and a communicator over them. */
    @BeforeEach
    void openAll() {
        gpus = openRanks();
        comms = Collectives.initAll(gpus);
        streams = new ArrayList<>();
        for (Gpu g : gpus) {
            streams.add(g.createStream());
        }
    }

    /** Frees, closes the communicators, then the runtimes. */
    @AfterEach
    void closeAll() {
        for (Communicator c : comms) {
            c.close();
        }
        for (int r = 0; r < gpus.size(); r++) {
            Gpu g = gpus.get(r);
            g.synchronize();
            for (DevicePtr[] a : allocs) {
                if (a[r] != null) {
                    g.free(a[r]);
                }
            }
            g.destroyStream(streams.get(r));
        }
        for (Gpu g : gpus.reversed()) {
            g.close();
        }
    }

    /** {@return the rank count} */
    protected int n() {
        return gpus.size();
    }

    /** {@return a buffer of {@code bytes} on every rank} */
    protected DevicePtr[] alloc(long bytes) {
        DevicePtr[] p = new DevicePtr[n()];
        for (int r = 0; r < n(); r++) {
            p[r] = gpus.get(r).alloc(bytes);
        }
        allocs.add(p);
        return p;
    }

    /** Runs {@code call} for every rank inside one group, as one thread driving several ranks must. */
    protected void group(Consumer<Communicator> call) {
        Collectives.groupStart();
        try {
            for (Communicator c : comms) {
                call.accept(c);
            }
        } finally {
            Collectives.groupEnd();
        }
    }

    private float[] read(int rank, DevicePtr p, int count) {
        Gpu g = gpus.get(rank);
        g.synchronize(streams.get(rank));
        float[] out = new float[count];
        g.copyD2H(p, out);
        return out;
    }

    private static float input(int rank, int i) {
        return rank * 1000f + i;
    }

    private DevicePtr[] inputs(int count) {
        DevicePtr[] p = alloc(4L * count);
        for (int r = 0; r < n(); r++) {
            float[] h = new float[count];
            for (int i = 0; i < count; i++) {
                h[i] = input(r, i);
            }
            gpus.get(r).copyH2D(h, p[r]);
        }
        return p;
    }

    @Test
    void communicatorsKnowTheirRankAndSize() {
        for (int r = 0; r < n(); r++) {
            assertThat(comms.get(r).rank()).isEqualTo(r);
            assertThat(comms.get(r).size()).isEqualTo(n());
            assertThat(comms.get(r).gpu()).isSameAs(gpus.get(r));
            assertThat(comms.get(r).asyncError()).isEmpty();
        }
    }

    @Test
    void allReduceSumsEveryRanksInput() {
        int count = 1000;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        group(c -> c.allReduce(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, NcclRedOp.SUM,
                streams.get(c.rank())));
        for (int r = 0; r < n(); r++) {
            float[] got = read(r, out[r], count);
            for (int i = 0; i < count; i++) {
                float want = 0;
                for (int q = 0; q < n(); q++) {
                    want += input(q, i);
                }
                assertThat(got[i]).as("rank %d element %d", r, i).isEqualTo(want);
            }
        }
        assertThat(comms.getFirst().stats().calls()).isEqualTo(1);
        assertThat(comms.getFirst().stats().bytes()).isEqualTo(4L * count);
    }

    @Test
    void allReduceInPlaceWithMaxOnInts() {
        int count = 257;
        DevicePtr[] buf = alloc(4L * count);
        for (int r = 0; r < n(); r++) {
            int[] h = new int[count];
            for (int i = 0; i < count; i++) {
                h[i] = (i * 7 + r * 13) % 101 - 50;
            }
            gpus.get(r).copyH2D(h, buf[r]);
        }
        group(c -> c.allReduce(buf[c.rank()], buf[c.rank()], count, NcclDataType.INT32, NcclRedOp.MAX, streams.get(c.rank())));
        for (int r = 0; r < n(); r++) {
            gpus.get(r).synchronize(streams.get(r));
            int[] got = new int[count];
            gpus.get(r).copyD2H(buf[r], got);
            for (int i = 0; i < count; i++) {
                int want = Integer.MIN_VALUE;
                for (int q = 0; q < n(); q++) {
                    want = Math.max(want, (i * 7 + q * 13) % 101 - 50);
                }
                assertThat(got[i]).isEqualTo(want);
            }
        }
    }

    @Test
    void broadcastCopiesTheRootsInput() {
        int count = 4096;
        int root = n() - 1;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        group(c -> c.broadcast(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, root, streams.get(c.rank())));
        for (int r = 0; r < n(); r++) {
            float[] got = read(r, out[r], count);
            for (int i = 0; i < count; i += 97) {
                assertThat(got[i]).isEqualTo(input(root, i));
            }
        }
    }

    @Test
    void reduceWritesTheMinimumOnTheRootOnly() {
        int count = 64;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        for (int r = 0; r < n(); r++) {
            gpus.get(r).memset(out[r], 0, 4L * count);
        }
        group(c -> c.reduce(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, NcclRedOp.MIN, 0, streams.get(c.rank())));
        float[] got = read(0, out[0], count);
        for (int i = 0; i < count; i++) {
            assertThat(got[i]).isEqualTo(input(0, i));
        }
        for (int r = 1; r < n(); r++) {
            assertThat(read(r, out[r], count)).containsOnly(0f);
        }
    }

    /**
     * A reduce onto a root whose own input is not the result: MAX onto rank 0, which holds the
     * smallest inputs, so a reduce that wrote the root's own input would show.
     */
    @Test
    void reduceWithMaxOntoARootThatHoldsTheSmallestInput() {
        org.junit.jupiter.api.Assumptions.assumeTrue(n() > 1, "two ranks");
        int count = 64;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        group(c -> c.reduce(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, NcclRedOp.MAX, 0, streams.get(c.rank())));
        float[] got = read(0, out[0], count);
        for (int i = 0; i < count; i++) {
            assertThat(got[i]).as("element %d on the root", i).isEqualTo(input(n() - 1, i));
        }
    }

    /** AVG through {@code reduce}: the sum over the ranks divided by their number, on a middle root. */
    @Test
    void reduceWithAvgWritesTheMeanOnTheRoot() {
        int count = 128;
        int root = n() / 2;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        for (int r = 0; r < n(); r++) {
            gpus.get(r).memset(out[r], 0, 4L * count);
        }
        group(c -> c.reduce(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, NcclRedOp.AVG, root, streams.get(c.rank())));
        float[] got = read(root, out[root], count);
        for (int i = 0; i < count; i++) {
            float sum = 0;
            for (int q = 0; q < n(); q++) {
                sum += input(q, i);
            }
            assertThat(got[i]).as("element %d on root %d", i, root).isCloseTo(sum / n(), org.assertj.core.data.Offset.offset(1e-3f));
        }
        for (int r = 0; r < n(); r++) {
            if (r != root) {
                assertThat(read(r, out[r], count)).as("rank %d, not the root", r).containsOnly(0f);
            }
        }
    }

    /** AVG through {@code allReduce} on ints: the mean, truncated, on every rank. */
    @Test
    void allReduceWithAvgOnIntsGivesEveryRankTheMean() {
        int count = 32;
        DevicePtr[] buf = alloc(4L * count);
        for (int r = 0; r < n(); r++) {
            int[] h = new int[count];
            for (int i = 0; i < count; i++) {
                h[i] = 4 * (r * 10 + i);
            }
            gpus.get(r).copyH2D(h, buf[r]);
        }
        group(c -> c.allReduce(buf[c.rank()], buf[c.rank()], count, NcclDataType.INT32, NcclRedOp.AVG, streams.get(c.rank())));
        for (int r = 0; r < n(); r++) {
            gpus.get(r).synchronize(streams.get(r));
            int[] got = new int[count];
            gpus.get(r).copyD2H(buf[r], got);
            for (int i = 0; i < count; i++) {
                long sum = 0;
                for (int q = 0; q < n(); q++) {
                    sum += 4L * (q * 10 + i);
                }
                assertThat(got[i]).as("rank %d element %d", r, i).isEqualTo((int) (sum / n()));
            }
        }
    }

    @Test
    void allGatherConcatenatesByRank() {
        int count = 100;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count * n());
        group(c -> c.allGather(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, streams.get(c.rank())));
        for (int r = 0; r < n(); r++) {
            float[] got = read(r, out[r], count * n());
            for (int q = 0; q < n(); q++) {
                for (int i = 0; i < count; i++) {
                    assertThat(got[q * count + i]).isEqualTo(input(q, i));
                }
            }
        }
    }

    @Test
    void reduceScatterGivesEachRankItsBlockOfTheSum() {
        int count = 50;
        DevicePtr[] in = inputs(count * n());
        DevicePtr[] out = alloc(4L * count);
        group(c -> c.reduceScatter(in[c.rank()], out[c.rank()], count, NcclDataType.FLOAT32, NcclRedOp.SUM,
                streams.get(c.rank())));
        for (int r = 0; r < n(); r++) {
            float[] got = read(r, out[r], count);
            for (int i = 0; i < count; i++) {
                float want = 0;
                for (int q = 0; q < n(); q++) {
                    want += input(q, r * count + i);
                }
                assertThat(got[i]).isEqualTo(want);
            }
        }
    }

    @Test
    void sendAndRecvAroundARing() {
        int count = 333;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        group(c -> {
            int next = (c.rank() + 1) % n();
            int prev = (c.rank() + n() - 1) % n();
            c.send(in[c.rank()], count, NcclDataType.FLOAT32, next, streams.get(c.rank()));
            c.recv(out[c.rank()], count, NcclDataType.FLOAT32, prev, streams.get(c.rank()));
        });
        for (int r = 0; r < n(); r++) {
            float[] got = read(r, out[r], count);
            int prev = (r + n() - 1) % n();
            for (int i = 0; i < count; i++) {
                assertThat(got[i]).isEqualTo(input(prev, i));
            }
        }
    }

    @Test
    void aCountPastTheBufferIsRefusedBeforeNccl() {
        DevicePtr[] buf = alloc(4096);
        Communicator c = comms.getFirst();
        GpuException e = catchThrowableOfType(GpuException.class, () -> c.allReduce(buf[0], buf[0], 2048,
                NcclDataType.FLOAT32, NcclRedOp.SUM, streams.getFirst()));
        assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
        assertThat(e.getMessage()).contains("ncclAllReduce");
        assertThat(c.stats().failures()).isEqualTo(1);
        assertThat(c.stats().calls()).isZero();
    }

    @Test
    void badRootsPeersAndCountsAreRefused() {
        DevicePtr[] buf = alloc(64);
        Communicator c = comms.getFirst();
        Stream s = streams.getFirst();
        assertThatThrownBy(() -> c.broadcast(buf[0], buf[0], 1, NcclDataType.FLOAT32, n(), s))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("root=" + n());
        assertThatThrownBy(() -> c.send(buf[0], 1, NcclDataType.FLOAT32, -1, s))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("peer=-1");
        assertThatThrownBy(() -> c.allReduce(buf[0], buf[0], -1, NcclDataType.FLOAT32, NcclRedOp.SUM, s))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count=-1");
        assertThatThrownBy(() -> c.allReduce(null, buf[0], 1, NcclDataType.FLOAT32, NcclRedOp.SUM, s))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("send");
        assertThat(c.stats().failures()).as("each refused call threw, so each is a failure").isEqualTo(4);
        assertThat(c.stats().calls()).isZero();
    }

    @Test
    void aClosedOrAbortedCommunicatorRefusesCalls() {
        DevicePtr[] buf = alloc(64);
        Communicator c = comms.getFirst();
        c.close();
        c.close();
        assertThatThrownBy(() -> c.allReduce(buf[0], buf[0], 1, NcclDataType.FLOAT32, NcclRedOp.SUM, streams.getFirst()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(c.stats().failures()).as("a call on a closed communicator threw").isEqualTo(1);
        Communicator last = comms.getLast();
        last.abort();
        assertThatThrownBy(() -> last.broadcast(buf[0], buf[0], 1, NcclDataType.FLOAT32, 0, streams.getLast()))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void initRankFromOneThreadPerRank() throws Exception {
        NcclUniqueId id = Collectives.uniqueId(gpus.getFirst());
        assertThat(NcclUniqueId.fromHex(id.toHex())).isEqualTo(id);
        int count = 128;
        DevicePtr[] in = inputs(count);
        DevicePtr[] out = alloc(4L * count);
        try (ExecutorService pool = Executors.newFixedThreadPool(n())) {
            List<Future<?>> done = new ArrayList<>();
            for (int r = 0; r < n(); r++) {
                int rank = r;
                done.add(pool.submit(() -> {
                    try (Communicator c = Collectives.initRank(gpus.get(rank), n(), id, rank)) {
                        c.allReduce(in[rank], out[rank], count, NcclDataType.FLOAT32, NcclRedOp.SUM, streams.get(rank));
                        gpus.get(rank).synchronize(streams.get(rank));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        }
        for (int r = 0; r < n(); r++) {
            float[] got = read(r, out[r], count);
            float want = 0;
            for (int q = 0; q < n(); q++) {
                want += input(q, 5);
            }
            assertThat(got[5]).isEqualTo(want);
        }
    }
}
