// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.GraphHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * The timing cases of CUDA_SEMANTICS.md section 5 (12 to 15, 18, 20, 29) and the pageable-copy
 * rule of section 2, on every backend: K(t) is the contract kernel {@code spin}, which spins t ms
 * of the GPU's global timer and whose simulator twin declares t ms of virtual time. No case reads
 * a wall clock: "returns at once" is observed as work still pending after the call returns.
 */
public abstract class TimingContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected TimingContract() {
    }

    private static MemorySegment filled(MemorySegment seg, int value) {
        for (long i = 0; i < seg.byteSize() / 4; i++) {
            seg.setAtIndex(ValueLayout.JAVA_INT, i, value);
        }
        return seg;
    }

    /** 12. K(300) on s, then a pinned async H2D: it returns with s pending; after a sync the data is there. */
    @Test
    public void case12_pinnedAsyncH2DBehindAKernelDoesNotWait() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(256);
        MemorySegment pinned = filled(gpu.allocHostPinned(256), 5);
        spin(300, s);
        gpu.copyH2DAsyncRetained(pinned, p, s);
        assertThat(gpu.streamQuery(s)).as("the stream right after the copy returned").isFalse();
        gpu.synchronize(s);
        assertThat(gpu.streamQuery(s)).isTrue();
        assertThat(readInts(p, 64)).containsOnly(5);
        gpu.freeHostPinned(pinned);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** 13. K(300), then a pinned async D2H: the host buffer is unchanged on return and updated after the sync. */
    @Test
    public void case13_pinnedAsyncD2HBehindAKernelLandsAfterTheSync() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(256);
        gpu.copyH2D(ints(64, 7), p);
        MemorySegment pinned = filled(gpu.allocHostPinned(256), 0);
        spin(300, s);
        gpu.copyD2HAsync(p, pinned, s);
        assertThat(pinned.getAtIndex(ValueLayout.JAVA_INT, 0)).as("the host buffer on return").isZero();
        assertThat(gpu.streamQuery(s)).isFalse();
        gpu.synchronize(s);
        assertThat(pinned.toArray(ValueLayout.JAVA_INT)).containsOnly(7);
        gpu.freeHostPinned(pinned);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** 14. K(300) on the legacy stream: a D2D copy and a memset return at once, and the stream is pending. */
    @Test
    public void case14_legacyD2DAndMemsetDoNotWait() {
        DevicePtr a = gpu.alloc(256);
        DevicePtr b = gpu.alloc(256);
        gpu.copyH2D(ints(64, 3), a);
        gpu.synchronize();
        spin(300, Stream.DEFAULT);
        gpu.copyD2D(a, b, 256);
        gpu.memset(a, 0, 256);
        assertThat(gpu.streamQuery(Stream.DEFAULT)).as("the legacy stream after D2D and memset returned").isFalse();
        gpu.synchronize();
        assertThat(readInts(b, 64)).containsOnly(3);
        assertThat(readInts(a, 64)).containsOnly(0);
        gpu.free(a);
        gpu.free(b);
    }

    /** 15. Page-locked memory: its device pointer is its host address, and a kernel's write through it reaches the host. */
    @Test
    public void case15_pinnedMemoryIsMappedAtItsOwnAddress() {
        MemorySegment pinned = gpu.allocHostPinned(256);
        DevicePtr d = gpu.hostPtrToDevice(pinned);
        assertThat(d.address()).isEqualTo(pinned.address());
        gpu.launch(kernel("fill_f32"), LaunchConfig.of(1, 64), Stream.DEFAULT, args.clear().ptr(d).f32(2.5f).i32(64));
        gpu.synchronize();
        assertThat(pinned.toArray(ValueLayout.JAVA_FLOAT)).containsOnly(2.5f);
        gpu.freeHostPinned(pinned);
    }

    /** 18. A record on the per-thread stream after K(300) on s completes at once; after K(300) on the legacy stream it does not. */
    @Test
    public void case18_perThreadStreamWaitsForLegacyOnly() {
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        spin(300, s);
        gpu.recordEvent(e, Stream.PER_THREAD);
        assertThat(pollUntil(() -> gpu.eventQuery(e))).as("the per-thread record after work on s").isTrue();
        assertThat(gpu.streamQuery(s)).as("s, still spinning").isFalse();
        gpu.synchronize(s);
        spin(300, Stream.DEFAULT);
        gpu.recordEvent(e, Stream.PER_THREAD);
        assertThat(gpu.eventQuery(e)).as("the per-thread record after work on the legacy stream").isFalse();
        gpu.synchronize();
        gpu.eventSynchronize(e);
        assertThat(gpu.eventQuery(e)).isTrue();
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
    }

    /** 20. Elapsed time across K(200) reads about 200 ms once the events complete; reversed it is negative. */
    @Test
    public void case20_elapsedTimeAcrossASpinIsItsDuration() {
        Stream s = gpu.createStream();
        Event a = gpu.createEvent();
        Event b = gpu.createEvent();
        gpu.recordEvent(a, s);
        spin(200, s);
        gpu.recordEvent(b, s);
        gpu.synchronize(s);
        float ms = gpu.elapsedMillis(a, b);
        // The GPU spins at least 200 ms of its timer; the simulator's clock reads exactly that.
        assertThat(ms).isBetween(199f, 2000f);
        assertThat(gpu.elapsedMillis(b, a)).isNegative();
        gpu.destroyEvent(a);
        gpu.destroyEvent(b);
        gpu.destroyStream(s);
    }

    /**
     * 29. K(300) on s; the exec launched on s, then on an idle s2: an event after it on s2 is
     * pending (a launch follows the exec's earlier launch). Destroying the graph while it runs
     * returns, and the work completes.
     */
    @Test
    public void case29_aGraphLaunchFollowsItsEarlierLaunchOnAnotherStream() {
        Stream s = gpu.createStream();
        Stream s2 = gpu.createStream();
        Stream cap = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 0), p);
        gpu.beginCapture(cap);
        addI32(p, 1, 16, cap);
        GraphHandle g = gpu.endCapture(cap);
        Event e = gpu.createEvent();
        spin(300, s);
        gpu.launchGraph(g, s);
        gpu.launchGraph(g, s2);
        gpu.recordEvent(e, s2);
        assertThat(gpu.eventQuery(e)).as("an event after the second launch, on an idle stream").isFalse();
        gpu.destroyGraph(g);
        gpu.synchronize();
        assertThat(gpu.eventQuery(e)).isTrue();
        assertThat(readInts(p, 16)).containsOnly(2);
        gpu.destroyEvent(e);
        gpu.destroyStream(s);
        gpu.destroyStream(s2);
        gpu.destroyStream(cap);
        gpu.free(p);
    }

    /**
     * Section 2, pageable async H2D behind K(300) on the same stream: the call returns with the
     * stream pending, the source has been staged (a host change after the call does not land), and
     * the copy completes in stream order.
     */
    @Test
    public void pageableAsyncH2DIsStagedAtTheCallAndCompletesInStreamOrder() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(256);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pageable = filled(arena.allocate(256, 16), 9);
            spin(300, s);
            gpu.copyH2DAsync(pageable, p, s);
            assertThat(gpu.streamQuery(s)).as("the stream right after the pageable copy returned").isFalse();
            filled(pageable, -1);
            gpu.synchronize(s);
        }
        assertThat(readInts(p, 64)).as("what landed: the source as it was at the call").containsOnly(9);
        gpu.destroyStream(s);
        gpu.free(p);
    }
}
