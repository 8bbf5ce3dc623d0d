// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What only the simulated communicator can show: ranks that disagree, ranks that never come, every type and op. */
class SimCommunicatorTest {

    private static final Duration SHORT = Duration.ofMillis(300);
    private final List<Gpu> gpus = SimCollectiveContractTest.simRanks(2);

    @AfterEach
    void close() {
        for (Gpu g : gpus) {
            g.close();
        }
    }

    private static Throwable cause(CompletableFuture<?> f) {
        try {
            f.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void ranksThatDisagreeOnTheCountBothFailWithInvalidUsage() {
        List<Communicator> comms = Collectives.initAll(gpus, SHORT);
        DevicePtr a = gpus.get(0).alloc(64);
        DevicePtr b = gpus.get(1).alloc(64);
        Collectives.groupStart();
        comms.get(0).allReduce(a, a, 16, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT);
        comms.get(1).allReduce(b, b, 8, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT);
        NcclException e = catchThrowableOfType(NcclException.class, Collectives::groupEnd);
        assertThat(e.result()).isEqualTo(NcclResult.INVALID_USAGE);
        assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
        assertThat(e.getMessage()).contains("ncclAllReduce").contains("count=16").contains("count=8");
        gpus.get(0).free(a);
        gpus.get(1).free(b);
    }

    /** Each rank's communicator is a live resource of its runtime, named with its creation site, until it is closed or aborted. */
    @Test
    void aCommunicatorIsListedInItsRuntimesLiveResourcesUntilClosed() {
        String process = metrale.gpu.sim.SimOptions.PROCESS_NAMED + "resources-" + java.util.UUID.randomUUID();
        List<Gpu> ranks = new java.util.ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ranks.add(Gpu.builder().backend("sim").backendOption(metrale.gpu.sim.SimOptions.PROCESS, process)
                    .backendOption(metrale.gpu.sim.SimOptions.DEVICES, "2").leakDetection(metrale.gpu.LeakDetection.ALL).device(i).open());
        }
        try {
            int line = StackWalker.getInstance().walk(f -> f.findFirst()).orElseThrow().getLineNumber();
            List<Communicator> comms = Collectives.initAll(ranks, SHORT);
            for (int r = 0; r < 2; r++) {
                assertThat(ranks.get(r).liveResources()).containsExactly(new metrale.gpu.LiveResource(
                        metrale.gpu.LiveResource.Kind.COMMUNICATOR, "rank " + r + " of 2 (sim)",
                        "SimCommunicatorTest.java:" + (line + 1)));
            }
            comms.get(0).close();
            comms.get(1).abort();
            comms.get(0).close();
            assertThat(ranks.get(0).liveResources()).isEmpty();
            assertThat(ranks.get(1).liveResources()).isEmpty();

            Communicator leaked = Collectives.initAll(ranks, SHORT).get(0);
            ranks.get(0).close();
            assertThat(ranks.get(0).liveResources()).as("what close found").extracting(Object::toString)
                    .singleElement().asString().startsWith("communicator rank 0 of 2 (sim) created at SimCommunicatorTest.java:");
            leaked.close();
        } finally {
            for (Gpu g : ranks) {
                g.close();
            }
        }
    }

    /** Runs {@code r} on a thread of its own (the common pool may have one thread on a small machine). */
    private static CompletableFuture<Void> onThread(Runnable r) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                r.run();
                f.complete(null);
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    @Test
    void ranksThatDisagreeOnTheTypeFailInTheirOwnThreads() {
        List<Communicator> comms = Collectives.initAll(gpus, Duration.ofSeconds(30));
        DevicePtr a = gpus.get(0).alloc(64);
        DevicePtr b = gpus.get(1).alloc(64);
        CompletableFuture<Void> r0 = onThread(() ->
                comms.get(0).allReduce(a, a, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT));
        CompletableFuture<Void> r1 = onThread(() ->
                comms.get(1).allReduce(b, b, 4, NcclDataType.INT32, NcclRedOp.SUM, Stream.DEFAULT));
        assertThat(cause(r0)).isInstanceOf(NcclException.class).hasMessageContaining("INT32").hasMessageContaining("FLOAT32");
        assertThat(cause(r1)).isInstanceOf(NcclException.class);
        gpus.get(0).free(a);
        gpus.get(1).free(b);
    }

    @Test
    void aRankThatNeverJoinsTimesOut() {
        NcclUniqueId id = Collectives.uniqueId(gpus.get(0));
        NcclException e = catchThrowableOfType(NcclException.class, () -> Collectives.initRank(gpus.get(0), 2, id, 0, SHORT));
        assertThat(e.result()).isEqualTo(NcclResult.IN_PROGRESS);
        assertThat(e.getMessage()).contains("rank(s) [1]");
    }

    /** Ranks 0 and 1 join, rank 2 never does: each rank that joined gets IN_PROGRESS naming rank 2. */
    @Test
    void aRankThatNeverJoinsTimesOutEveryRankThatJoined() {
        List<Gpu> three = SimCollectiveContractTest.simRanks(3);
        try {
            NcclUniqueId id = Collectives.uniqueId(three.get(0));
            CompletableFuture<Void> r0 = onThread(() -> Collectives.initRank(three.get(0), 3, id, 0, Duration.ofSeconds(3)));
            CompletableFuture<Void> r1 = onThread(() -> Collectives.initRank(three.get(1), 3, id, 1, Duration.ofSeconds(3)));
            for (Throwable t : List.of(cause(r0), cause(r1))) {
                assertThat(t).isInstanceOf(NcclException.class).hasMessageContaining("rank(s) [2]")
                        .hasMessageContaining("ncclCommInitRank");
                assertThat(((NcclException) t).result()).as(t.getMessage()).isEqualTo(NcclResult.IN_PROGRESS);
            }
        } finally {
            three.forEach(Gpu::close);
        }
    }

    @Test
    void aRankThatNeverCallsTheCollectiveTimesOutTheOthers() {
        List<Communicator> comms = Collectives.initAll(gpus, SHORT);
        DevicePtr a = gpus.get(0).alloc(64);
        NcclException e = catchThrowableOfType(NcclException.class, () ->
                comms.get(0).broadcast(a, a, 4, NcclDataType.FLOAT32, 0, Stream.DEFAULT));
        assertThat(e.result()).isEqualTo(NcclResult.IN_PROGRESS);
        assertThat(e.getMessage()).contains("rank(s) [1] did not call it");
        gpus.get(0).free(a);
    }

    @Test
    void anAbortFailsTheRankWaitingForIt() {
        List<Communicator> comms = Collectives.initAll(gpus, Duration.ofSeconds(30));
        DevicePtr a = gpus.get(0).alloc(64);
        CompletableFuture<Void> r0 = onThread(() ->
                comms.get(0).allReduce(a, a, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT));
        // Whether rank 0 is already waiting or arrives after it, the abort fails its call.
        comms.get(1).abort();
        assertThat(cause(r0)).isInstanceOf(NcclException.class).hasMessageContaining("aborted");
        gpus.get(0).free(a);
    }

    @Test
    void eachCallIsAJfrEvent(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        List<Communicator> comms = Collectives.initAll(gpus, SHORT);
        DevicePtr a = gpus.get(0).alloc(64);
        DevicePtr b = gpus.get(1).alloc(64);
        java.nio.file.Path file = dir.resolve("collectives.jfr");
        try (jdk.jfr.Recording rec = new jdk.jfr.Recording()) {
            rec.enable("metrale.gpu.Collective");
            rec.start();
            Collectives.groupStart();
            comms.get(0).allReduce(a, a, 16, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT);
            comms.get(1).allReduce(b, b, 16, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT);
            Collectives.groupEnd();
            rec.stop();
            rec.dump(file);
        }
        List<jdk.jfr.consumer.RecordedEvent> events = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("metrale.gpu.Collective")).toList();
        assertThat(events).hasSize(2).allSatisfy(e -> {
            assertThat(e.getString("operation")).isEqualTo("allReduce");
            assertThat(e.getLong("bytes")).isEqualTo(64);
            assertThat(e.getString("kind")).isEqualTo("sim");
            assertThat(e.getInt("ranks")).isEqualTo(2);
        });
        assertThat(events.stream().map(e -> e.getInt("rank"))).containsExactlyInAnyOrder(0, 1);
        gpus.get(0).free(a);
        gpus.get(1).free(b);
    }

    @Test
    void aCapturingStreamIsRefused() {
        List<Communicator> comms = Collectives.initAll(gpus.subList(0, 1), SHORT);
        Gpu g = gpus.get(0);
        DevicePtr a = g.alloc(64);
        Stream s = g.createStream(true);
        g.beginCapture(s);
        NcclException e = catchThrowableOfType(NcclException.class, () ->
                comms.get(0).allReduce(a, a, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, s));
        assertThat(e.result()).isEqualTo(NcclResult.INVALID_USAGE);
        assertThat(e.getMessage()).contains("captured");
        g.destroyGraph(g.endCapture(s));
        g.destroyStream(s);
        g.free(a);
    }

    @Test
    void anIdThatIsNotSimulatedIsRefused() {
        NcclException e = catchThrowableOfType(NcclException.class, () ->
                Collectives.initRank(gpus.get(0), 1, new NcclUniqueId(new byte[NcclUniqueId.BYTES]), 0, SHORT));
        assertThat(e.result()).isEqualTo(NcclResult.INVALID_ARGUMENT);
    }

    @Test
    void everyTypeAndOpReducesAsJavaDoes() {
        List<Communicator> comms = Collectives.initAll(gpus, SHORT);
        DevicePtr a = gpus.get(0).alloc(64);
        DevicePtr b = gpus.get(1).alloc(64);
        for (NcclDataType t : NcclDataType.values()) {
            for (NcclRedOp op : NcclRedOp.values()) {
                byte[] x = new byte[2 * t.bytes()];
                byte[] y = new byte[2 * t.bytes()];
                put(x, t, 0, 6);
                put(x, t, 1, -3);
                put(y, t, 0, 2);
                put(y, t, 1, 5);
                gpus.get(0).copyH2D(x, a);
                gpus.get(1).copyH2D(y, b);
                Collectives.groupStart();
                comms.get(0).allReduce(a, a, 2, t, op, Stream.DEFAULT);
                comms.get(1).allReduce(b, b, 2, t, op, Stream.DEFAULT);
                Collectives.groupEnd();
                byte[] got = new byte[x.length];
                gpus.get(1).copyD2H(b, got);
                assertThat(get(got, t, 0)).as("%s %s [0]", t, op).isEqualTo(expect(t, op, 6, 2));
                assertThat(get(got, t, 1)).as("%s %s [1]", t, op).isEqualTo(expect(t, op, -3, 5));
                byte[] got0 = new byte[x.length];
                gpus.get(0).copyD2H(a, got0);
                assertThat(get(got0, t, 0)).as("rank 0: %s %s [0]", t, op).isEqualTo(expect(t, op, 6, 2));
                assertThat(get(got0, t, 1)).as("rank 0: %s %s [1]", t, op).isEqualTo(expect(t, op, -3, 5));
            }
        }
        gpus.get(0).free(a);
        gpus.get(1).free(b);
    }

    private static boolean unsigned(NcclDataType t) {
        return t == NcclDataType.UINT8 || t == NcclDataType.UINT32 || t == NcclDataType.UINT64;
    }

    private static boolean integer(NcclDataType t) {
        return t != NcclDataType.FLOAT16 && t != NcclDataType.BFLOAT16 && t != NcclDataType.FLOAT32
                && t != NcclDataType.FLOAT64;
    }

    /** The reduction as plain Java computes it: integers in 64-bit arithmetic, truncated to the type at the end. */
    private static double expect(NcclDataType t, NcclRedOp op, long p, long q) {
        if (!integer(t)) {
            return switch (op) {
                case SUM -> p + q;
                case PROD -> p * q;
                case MAX -> Math.max(p, q);
                case MIN -> Math.min(p, q);
                case AVG -> (p + q) / 2.0;
            };
        }
        long a = widen(t, p);
        long b = widen(t, q);
        long v = switch (op) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> (unsigned(t) ? Long.compareUnsigned(a, b) : Long.compare(a, b)) >= 0 ? a : b;
            case MIN -> (unsigned(t) ? Long.compareUnsigned(a, b) : Long.compare(a, b)) <= 0 ? a : b;
            case AVG -> unsigned(t) ? Long.divideUnsigned(a + b, 2) : (a + b) / 2;
        };
        return asType(t, v);
    }

    /** {@return {@code v} as the type holds it, as a 64-bit value (unsigned 8 and 32 bit zero-extended)} */
    private static long widen(NcclDataType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xFF;
            case INT32 -> (int) v;
            case UINT32 -> v & 0xFFFF_FFFFL;
            default -> v;
        };
    }

    private static double asType(NcclDataType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case UINT8 -> v & 0xFF;
            case INT32 -> (int) v;
            case UINT32 -> v & 0xFFFF_FFFFL;
            case UINT64 -> v < 0 ? v + 0x1p64 : v;
            default -> v;
        };
    }

    private static void put(byte[] b, NcclDataType t, int i, long v) {
        java.nio.ByteBuffer bb = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int at = i * t.bytes();
        switch (t) {
            case INT8, UINT8 -> bb.put(at, (byte) v);
            case INT32, UINT32 -> bb.putInt(at, (int) v);
            case INT64, UINT64 -> bb.putLong(at, v);
            case FLOAT16 -> bb.putShort(at, Float.floatToFloat16(v));
            case BFLOAT16 -> bb.putShort(at, (short) (Float.floatToRawIntBits(v) >>> 16));
            case FLOAT32 -> bb.putFloat(at, v);
            case FLOAT64 -> bb.putDouble(at, v);
        }
    }

    private static double get(byte[] b, NcclDataType t, int i) {
        java.nio.ByteBuffer bb = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int at = i * t.bytes();
        return switch (t) {
            case INT8 -> bb.get(at);
            case UINT8 -> bb.get(at) & 0xFF;
            case INT32 -> bb.getInt(at);
            case UINT32 -> bb.getInt(at) & 0xFFFF_FFFFL;
            case INT64 -> bb.getLong(at);
            case UINT64 -> { long v = bb.getLong(at); yield v < 0 ? v + 0x1p64 : v; }
            case FLOAT16 -> Float.float16ToFloat(bb.getShort(at));
            case BFLOAT16 -> Float.intBitsToFloat((bb.getShort(at) & 0xFFFF) << 16);
            case FLOAT32 -> bb.getFloat(at);
            case FLOAT64 -> bb.getDouble(at);
        };
    }
}
