// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.Stream;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

/**
 * A failing enqueued operation maps to CUDA's answer and never stays at the head of its queue; a
 * host segment a graph could not read where it replays is refused at capture.
 */
class SimFailedOpTest {

    private static Gpu open() {
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH).open();
    }

    @Test
    void aThreadConfinedSourceIsRefusedAtCaptureAndTheCaptureThenWorks() throws Exception {
        try (Gpu gpu = open(); Arena confined = Arena.ofConfined()) {
            Stream s = gpu.createStream();
            DevicePtr p = gpu.alloc(64);
            MemorySegment src = confined.allocate(64);
            gpu.beginCapture(s);
            assertThatThrownBy(() -> gpu.copyH2DAsyncRetained(src, p, s)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                assertThat(e.getMessage()).contains("confined to one thread", "graph may be launched from any thread");
            });
            assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.INVALIDATED);
            assertThatThrownBy(() -> gpu.endCapture(s)).isInstanceOf(GpuException.class);
            // The same capture from a shared segment replays on another thread.
            try (Arena shared = Arena.ofShared()) {
                MemorySegment ok = shared.allocate(64).fill((byte) 4);
                gpu.beginCapture(s);
                gpu.copyH2DAsyncRetained(ok, p, s);
                GraphHandle g = gpu.endCapture(s);
                AtomicReference<Throwable> failure = new AtomicReference<>();
                Thread t = Thread.ofPlatform().start(() -> {
                    try {
                        gpu.launchGraph(g, s);
                        gpu.synchronize(s);
                    } catch (Throwable x) {
                        failure.set(x);
                    }
                });
                t.join();
                assertThat(failure.get()).isNull();
                byte[] out = new byte[64];
                gpu.copyD2H(p, out);
                assertThat(out).containsOnly((byte) 4);
                gpu.destroyGraph(g);
            }
            assertThat(gpu.fault()).isEmpty();
            gpu.destroyStream(s);
            gpu.free(p);
        }
    }

    @Test
    void anOperationThatCannotReadItsSourceIsIllegalAddressAndLeavesTheQueue() throws Exception {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); Arena confined = Arena.ofConfined()) {
            long p = dev.memAlloc(64);
            MemorySegment pinned = dev.memHostAlloc(64, 0);
            // Page-locked memory seen through a segment confined to this thread: the copy is read
            // where it executes, on the thread that drains the stream.
            MemorySegment view = MemorySegment.ofAddress(pinned.address()).reinterpret(64, confined, null);
            long s = dev.streamCreate(0);
            dev.memcpyHtoDAsync(p, view, 64, s);
            assertThat(dev.simControls().pendingOperations()).isEqualTo(1);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    dev.streamSynchronize(s);
                } catch (Throwable x) {
                    thrown.set(x);
                }
            });
            t.join();
            assertThat(thrown.get()).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                assertThat(e.getMessage()).contains("confined to another thread");
            });
            // The failed copy is gone: later calls report the sticky error, never the raw exception again.
            assertThat(dev.simControls().pendingOperations()).isZero();
            fails(CudaError.ILLEGAL_ADDRESS, () -> dev.streamSynchronize(s));
            fails(CudaError.ILLEGAL_ADDRESS, dev::ctxSynchronize);
        }
    }
}
