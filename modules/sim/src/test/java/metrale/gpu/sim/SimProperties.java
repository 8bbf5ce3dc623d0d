// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.DriverConfig;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Properties of the simulator checked against simple models. */
class SimProperties {

    /** One step of an allocation sequence: allocate {@code bytes}, or free live allocation {@code pick} (mod count). */
    record MemStep(boolean alloc, int bytes, int pick) {
    }

    @Provide
    Arbitrary<List<MemStep>> memSteps() {
        return Combinators.combine(Arbitraries.of(true, true, false), Arbitraries.integers().between(1, 5000),
                Arbitraries.integers().between(0, 1000)).as(MemStep::new).list().ofMaxSize(60);
    }

    @Property(tries = 100)
    void freeMemoryFollowsTheLiveAllocations(@ForAll("memSteps") List<MemStep> steps) {
        long capacity = 64 * 1024;
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh(Map.of("sim.capacity", Long.toString(capacity))))) {
            List<long[]> live = new ArrayList<>();
            long used = 0;
            for (MemStep s : steps) {
                if (s.alloc()) {
                    if (used + s.bytes() > capacity) {
                        try {
                            dev.memAlloc(s.bytes());
                            throw new AssertionError("allocation beyond the capacity succeeded");
                        } catch (GpuException e) {
                            assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
                        }
                    } else {
                        long p = dev.memAlloc(s.bytes());
                        assertThat(p % 256).isZero();
                        for (long[] other : live) {
                            assertThat(p >= other[0] + other[1] || p + s.bytes() <= other[0]).as("no overlap").isTrue();
                        }
                        live.add(new long[] {p, s.bytes()});
                        used += s.bytes();
                    }
                } else if (!live.isEmpty()) {
                    long[] victim = live.remove(s.pick() % live.size());
                    dev.memFree(victim[0]);
                    used -= victim[1];
                    try {
                        dev.memFree(victim[0]);
                        throw new AssertionError("double free succeeded");
                    } catch (GpuException e) {
                        assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                    }
                }
                assertThat(dev.memGetInfo().free()).isEqualTo(capacity - used);
                assertThat(dev.memGetInfo().total()).isEqualTo(capacity);
            }
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    /** One step of a pipeline: add or multiply by {@code value}, on stream {@code stream}. */
    record PipeStep(boolean multiply, int value, int stream) {
    }

    @Provide
    Arbitrary<List<PipeStep>> pipeSteps() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.integers().between(-3, 5),
                Arbitraries.integers().between(0, 3)).as(PipeStep::new).list().ofMinSize(1).ofMaxSize(25);
    }

    @Property(tries = 60)
    void eventOrderedPipelinesGiveTheSequentialResultUnderEverySeed(
            @ForAll("pipeSteps") List<PipeStep> steps, @ForAll long seed,
            @ForAll @IntRange(min = 0, max = 1) int nonBlocking) {
        int expected = 1;
        for (PipeStep s : steps) {
            expected = s.multiply() ? expected * s.value() : expected + s.value();
        }
        try (Fixture fx = new Fixture(new DriverConfig(Map.of("sim.seed", Long.toString(seed))))) {
            long p = fx.zeros(4);
            fx.fill(0, p, 1, 4);
            fx.dev.ctxSynchronize();
            long[] streams = new long[4];
            for (int i = 0; i < streams.length; i++) {
                streams[i] = fx.dev.streamCreate(nonBlocking);
            }
            long done = fx.dev.eventCreate(2);
            boolean first = true;
            for (PipeStep s : steps) {
                long st = streams[s.stream()];
                if (!first) {
                    fx.dev.streamWaitEvent(st, done, 0);
                }
                fx.launch(s.multiply() ? "scale" : "add", st, 4,
                        a -> a.ptr(p).i32(s.value()).i32(4));
                fx.dev.eventRecord(done, st);
                first = false;
            }
            fx.dev.eventSynchronize(done);
            assertThat(fx.dev.simControls().pendingOperations()).isZero();
            assertThat(fx.ints(p, 4)).containsOnly(expected);
        }
    }
}
