// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.Test;

class SimStreamTest {

    @Test
    void streamCreateFlagsAndDestroyRules() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            fails(CudaError.INVALID_VALUE, () -> dev.streamCreate(2));
            long s = dev.streamCreate(1);
            fails(CudaError.INVALID_HANDLE, () -> dev.streamDestroy(0)).hasMessageContaining("NULL");
            dev.streamDestroy(s);
            fails(CudaError.INVALID_HANDLE, () -> dev.streamDestroy(s));
            fails(CudaError.INVALID_HANDLE, () -> dev.streamSynchronize(s)).hasMessageContaining("not a live stream");
            fails(CudaError.INVALID_HANDLE, () -> dev.streamQuery(12345));
        }
    }

    @Test
    void asyncDeviceToHostIntoPinnedMemoryIsStaleUntilTheSync() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long d = dev.memAlloc(16);
            SimTestSupport.writeInts(dev, d, 1, 2, 3, 4);
            MemorySegment h = dev.memHostAlloc(16, 0);
            h.fill((byte) 0);
            long s = dev.streamCreate(0);
            dev.memcpyDtoHAsync(h, d, 16, s);
            assertThat(h.toArray(ValueLayout.JAVA_INT)).containsExactly(0, 0, 0, 0);
            assertThat(dev.simControls().pendingOperations()).isEqualTo(1);
            dev.streamSynchronize(s);
            assertThat(h.toArray(ValueLayout.JAVA_INT)).containsExactly(1, 2, 3, 4);
        }
    }

    @Test
    void asyncHostToDeviceFromPinnedMemoryReadsTheSourceWhenItRuns() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long d = dev.memAlloc(4);
            MemorySegment h = dev.memHostAlloc(4, 0);
            h.set(ValueLayout.JAVA_INT, 0, 1);
            long s = dev.streamCreate(0);
            dev.memcpyHtoDAsync(d, h, 4, s);
            h.set(ValueLayout.JAVA_INT, 0, 2);
            dev.streamSynchronize(s);
            assertThat(SimTestSupport.readInts(dev, d, 1)[0]).isEqualTo(2);
        }
    }

    @Test
    void asyncCopiesOfPageableMemoryAreCompleteOnReturn() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long d = dev.memAlloc(16);
            long s = dev.streamCreate(0);
            int[] src = {5, 6, 7, 8};
            dev.memcpyHtoDAsync(d, MemorySegment.ofArray(src), 16, s);
            src[0] = 99;
            int[] dst = new int[4];
            dev.memcpyDtoHAsync(MemorySegment.ofArray(dst), d, 16, s);
            assertThat(dst).containsExactly(5, 6, 7, 8);
            assertThat(dev.streamQuery(s)).isTrue();
        }
    }

    @Test
    void deviceToDeviceCopyAndMemsetDoNotSynchronizeTheHost() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long a = dev.memAlloc(16);
            long b = dev.memAlloc(16);
            dev.memsetD8(a, 1, 16);
            dev.memcpyDtoD(b, a, 16);
            assertThat(dev.simControls().pendingOperations()).isEqualTo(2);
            assertThat(dev.streamQuery(0)).isFalse();
            dev.ctxSynchronize();
            assertThat(dev.simControls().pendingOperations()).isZero();
            assertThat(SimTestSupport.readInts(dev, b, 4)).containsOnly(0x01010101);
        }
    }

    @Test
    void aQueryRightAfterAnEnqueueIsNotReadyAndPollingMakesProgress() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(4);
            long s = fx.dev.streamCreate(0);
            for (int i = 0; i < 5; i++) {
                fx.add(s, p, 1, 4);
            }
            assertThat(fx.dev.streamQuery(s)).isFalse();
            int polls = 1;
            while (!fx.dev.streamQuery(s)) {
                polls++;
            }
            assertThat(polls).isBetween(5, 6);
            assertThat(fx.ints(p, 4)).containsOnly(5);
        }
    }

    @Test
    void blockingCopyRunsEarlierLegacyAndBlockingStreamWork() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(4);
            long s = fx.dev.streamCreate(0);
            fx.fill(s, p, 3, 4);
            // The DtoH runs on the legacy stream, which waits for blocking streams.
            assertThat(fx.ints(p, 4)).containsOnly(3);
        }
    }

    @Test
    void nonBlockingStreamsAreNotWaitedForByABlockingCopy() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(4);
            long nb = fx.dev.streamCreate(1);
            fx.fill(nb, p, 3, 4);
            assertThat(fx.ints(p, 4)).containsOnly(0);
            fx.dev.streamSynchronize(nb);
            assertThat(fx.ints(p, 4)).containsOnly(3);
        }
    }

    /** Stream A writes 1 into x, stream B copies x into y; {@return y[0] after the context syncs} */
    private static int race(long seed, boolean waitEvent, int flagsA, int flagsB, boolean bIsLegacy) {
        try (Fixture fx = new Fixture(new DriverConfig(Map.of("sim.seed", Long.toString(seed))))) {
            long x = fx.zeros(1);
            long y = fx.zeros(1);
            long a = fx.dev.streamCreate(flagsA);
            long b = bIsLegacy ? 0 : fx.dev.streamCreate(flagsB);
            fx.fill(a, x, 1, 1);
            if (waitEvent) {
                long e = fx.dev.eventCreate(0);
                fx.dev.eventRecord(e, a);
                fx.dev.streamWaitEvent(b, e, 0);
            }
            fx.copy(b, y, x, 1);
            fx.dev.ctxSynchronize();
            return fx.ints(y, 1)[0];
        }
    }

    @Test
    void withoutStreamWaitEventTheResultDependsOnTheSeed() {
        Set<Integer> seen = new HashSet<>();
        for (long seed = 0; seed < 32; seed++) {
            seen.add(race(seed, false, 0, 0, false));
        }
        assertThat(seen).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void streamWaitEventOrdersStreamsUnderEverySeed() {
        for (long seed = 0; seed < 32; seed++) {
            assertThat(race(seed, true, 0, 0, false)).as("seed %d", seed).isEqualTo(1);
        }
    }

    @Test
    void theSameSeedGivesTheSameInterleaving() {
        for (long seed = 0; seed < 8; seed++) {
            assertThat(race(seed, false, 0, 0, false)).isEqualTo(race(seed, false, 0, 0, false));
        }
    }

    @Test
    void legacyStreamWaitsForBlockingStreamsButNotNonBlockingOnes() {
        for (long seed = 0; seed < 32; seed++) {
            assertThat(race(seed, false, 0, 0, true)).as("seed %d", seed).isEqualTo(1);
        }
        Set<Integer> seen = new HashSet<>();
        for (long seed = 0; seed < 32; seed++) {
            seen.add(race(seed, false, 1, 0, true));
        }
        assertThat(seen).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void blockingStreamsWaitForEarlierLegacyWork() {
        for (long seed = 0; seed < 16; seed++) {
            try (Fixture fx = new Fixture(new DriverConfig(Map.of("sim.seed", Long.toString(seed))))) {
                long x = fx.zeros(1);
                long y = fx.zeros(1);
                long s = fx.dev.streamCreate(0);
                fx.fill(0, x, 1, 1);
                fx.copy(s, y, x, 1);
                fx.dev.streamSynchronize(s);
                assertThat(fx.ints(y, 1)[0]).isEqualTo(1);
            }
        }
    }

    @Test
    void perThreadStreamSynchronizesWithLegacyOnly() {
        for (long seed = 0; seed < 16; seed++) {
            assertThat(raceOnPerThread(seed, true)).isEqualTo(1);
        }
        Set<Integer> seen = new HashSet<>();
        for (long seed = 0; seed < 32; seed++) {
            seen.add(raceOnPerThread(seed, false));
        }
        assertThat(seen).containsExactlyInAnyOrder(0, 1);
    }

    /** Per-thread stream writes x; then either legacy or another blocking stream copies x into y. */
    private static int raceOnPerThread(long seed, boolean readerIsLegacy) {
        try (Fixture fx = new Fixture(new DriverConfig(Map.of("sim.seed", Long.toString(seed))))) {
            long x = fx.zeros(1);
            long y = fx.zeros(1);
            fx.fill(2, x, 1, 1);
            long reader = readerIsLegacy ? 0 : fx.dev.streamCreate(0);
            fx.copy(reader, y, x, 1);
            fx.dev.ctxSynchronize();
            return fx.ints(y, 1)[0];
        }
    }

    @Test
    void perThreadStreamHandleIsPerThread() throws Exception {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            fx.fill(2, p, 1, 1);
            AtomicLong otherIdle = new AtomicLong(-1);
            Thread t = Thread.ofPlatform().start(() -> otherIdle.set(fx.dev.streamQuery(2) ? 1 : 0));
            t.join();
            assertThat(otherIdle.get()).isEqualTo(1);
            assertThat(fx.dev.streamQuery(2)).isFalse();
            fx.dev.streamSynchronize(2);
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
        }
    }

    @Test
    void destroyingAStreamWithPendingWorkLetsTheWorkComplete() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            long s = fx.dev.streamCreate(1);
            fx.add(s, p, 1, 1);
            fx.dev.streamDestroy(s);
            assertThat(fx.dev.simControls().pendingOperations()).isEqualTo(1);
            fx.dev.ctxSynchronize();
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
        }
    }

    @Test
    void streamSynchronizeRunsOnlyWhatTheStreamDependsOn() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            long q = fx.zeros(1);
            long s1 = fx.dev.streamCreate(1);
            long s2 = fx.dev.streamCreate(1);
            fx.add(s1, p, 1, 1);
            fx.add(s2, q, 1, 1);
            fx.dev.streamSynchronize(s1);
            assertThat(fx.dev.streamQuery(s2)).isFalse();
            assertThat(fx.dev.simControls().pendingOperations()).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void memFreeSynchronizesPendingWork() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(1);
            long q = fx.dev.memAlloc(4);
            long s = fx.dev.streamCreate(1);
            fx.add(s, p, 1, 1);
            fx.dev.memFree(q);
            assertThat(fx.dev.simControls().pendingOperations()).isZero();
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
        }
    }
}
