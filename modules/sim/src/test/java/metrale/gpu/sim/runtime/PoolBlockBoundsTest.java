// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.BiFunction;
import java.util.function.Function;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The caching pool's blocks keep the simulator's exact bounds, as a user meets them with the
 * default allocator: a kernel one element past a block faults though the pool's chunk holds the
 * bytes, a block freed back to the pool faults once its release has run, and work enqueued before
 * a stream-ordered free still reaches the block it was given. On each stream kind, through
 * {@code Gpu.alloc} (the pool on the default stream) and {@code Gpu.alloc(bytes, stream)}.
 */
class PoolBlockBoundsTest {

    private static final String MODULE = "rt_pool_bounds";

    /** How a test gets its stream. */
    enum StreamKind {
        DEFAULT(Gpu::defaultStream), CREATED(Gpu::createStream), NON_BLOCKING(g -> g.createStream(true));

        final Function<Gpu, Stream> make;

        StreamKind(Function<Gpu, Stream> make) {
            this.make = make;
        }
    }

    @BeforeAll
    static void kernels() {
        // Stores 1f at float element l.i64(1) of buffer 0, from thread 0.
        SimKernels.register(MODULE, "poke", l -> {
            FloatView v = l.floats(0);
            long i = l.i64(1);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    v.set(i, 1f);
                }
            });
        });
        // Stores x at every element of buffer 0 below n.
        SimKernels.register(MODULE, "fill", l -> {
            FloatView v = l.floats(0);
            float x = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                if (t.globalX() < n) {
                    v.set(t.globalX(), x);
                }
            });
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "poke");
        SimKernels.unregister(MODULE, "fill");
    }

    private static Gpu open() {
        Gpu gpu = sim().open();
        gpu.free(gpu.alloc(1));
        assertThat(gpu.pool().stats().allocs()).as("the default allocator is the pool").isEqualTo(1);
        gpu.loadModule(MODULE, SimKernels.image(MODULE));
        return gpu;
    }

    private static GpuException syncFails(Gpu gpu, Stream s) {
        GpuException[] caught = new GpuException[1];
        assertThatThrownBy(() -> gpu.synchronize(s)).isInstanceOfSatisfying(GpuException.class, e -> caught[0] = e);
        return caught[0];
    }

    /** The two ways a user takes pool memory: the default allocator, and the pool on the work's stream. */
    private static final java.util.List<BiFunction<Gpu, Stream, DevicePtr>> ALLOCS = java.util.List.of(
            (g, s) -> g.alloc(400), (g, s) -> g.alloc(400, s));

    @ParameterizedTest
    @EnumSource(StreamKind.class)
    void aKernelOneElementPastAPoolBlockFaultsThoughThePoolsChunkHoldsTheBytes(StreamKind sk) {
        for (BiFunction<Gpu, Stream, DevicePtr> alloc : ALLOCS) {
            try (Gpu gpu = open(); KernelArgs args = new KernelArgs()) {
                Stream s = sk.make.apply(gpu);
                DevicePtr p = alloc.apply(gpu, s);
                DevicePtr next = alloc.apply(gpu, s);
                gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), s, args.clear().ptr(p).i64(99));
                gpu.synchronize(s);
                gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), s, args.clear().ptr(p).i64(100));
                GpuException e = syncFails(gpu, s);
                assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                assertThat(e.getMessage()).contains("0x" + Long.toHexString(p.address()) + " (400 B",
                        "PoolBlockBoundsTest.java:");
                assertThat(next.address()).as("the pool's next block").isNotEqualTo(p.address());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(StreamKind.class)
    void aKernelOnABlockFreedBackToThePoolFaultsOnceTheReleaseHasRun(StreamKind sk) {
        for (BiFunction<Gpu, Stream, DevicePtr> alloc : ALLOCS) {
            try (Gpu gpu = open(); KernelArgs args = new KernelArgs()) {
                Stream s = sk.make.apply(gpu);
                DevicePtr keep = alloc.apply(gpu, s);
                DevicePtr p = alloc.apply(gpu, s);
                gpu.free(p);
                gpu.synchronize();
                gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), s, args.clear().ptr(p).i64(0));
                GpuException e = syncFails(gpu, s);
                assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                assertThat(e.getMessage()).contains("0x" + Long.toHexString(p.address()));
                assertThat(keep).isNotNull();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(StreamKind.class)
    void workEnqueuedBeforeAStreamOrderedFreeStillReachesItsBlockWhenASmallerOneTakesTheAddress(StreamKind sk) {
        // Without the quarantine (the simulator's default holds the freed block back), so the pool
        // hands the address out again at once.
        try (Gpu gpu = sim().quarantineBytes(0).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            Stream s = sk.make.apply(gpu);
            int n = 4096;
            DevicePtr big = gpu.alloc(4L * n, s);
            gpu.launch(gpu.kernel(MODULE, "fill"), LaunchConfig.forElements(n, 128), s, args.clear().ptr(big).f32(2f).i32(n));
            gpu.free(big, s);
            DevicePtr small = gpu.alloc(64, s);
            assertThat(small.address()).as("the pool hands the freed address out again on the same stream")
                    .isEqualTo(big.address());
            // The old block's bounds last until all work enqueued before its free has run, on every stream.
            gpu.synchronize();
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), s, args.clear().ptr(small).i64(16));
            GpuException e = syncFails(gpu, s);
            assertThat(e.error()).as("the new, smaller block has its own bounds").isEqualTo(CudaError.ILLEGAL_ADDRESS);
        }
    }

    @Test
    void aPoolBlockWithARedZoneFaultsOnlyPastItsPadTheRedZoneReportsTheRest() {
        try (Gpu gpu = sim().redZoneBytes(256).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(400);
            // Inside the pad: no fault; the red zone reports it at the free.
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p).i64(100));
            gpu.synchronize();
            gpu.free(p);
            assertThat(gpu.freedRedzoneViolations()).singleElement()
                    .satisfies(v -> assertThat(v.allocation().ptr()).isEqualTo(p));
            // Past the pad: outside the block, a fault.
            DevicePtr q = gpu.alloc(400);
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(q).i64(100 + 64));
            GpuException e = syncFails(gpu, Stream.DEFAULT);
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        }
    }
}
