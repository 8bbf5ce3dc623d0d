// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.function.Consumer;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/** close(), use after close, and the handles the runtime tracks. */
class LifecycleTest {

    @Test
    void everyCallAfterCloseIsIllegalState() {
        Gpu gpu = scripted().open();
        DevicePtr p = gpu.alloc(64);
        gpu.close();
        List<Consumer<Gpu>> calls = List.of(
                g -> g.alloc(1), g -> g.free(p), g -> g.liveBytes(), g -> g.backendName(), g -> g.device(),
                g -> g.synchronize(), g -> g.createStream(), g -> g.copyH2D(new byte[1], p), g -> g.unwrap(Object.class),
                g -> g.kernel("m", "f"), g -> g.allocReport(1, 0), g -> g.streamIsCapturing(Stream.DEFAULT));
        for (Consumer<Gpu> call : calls) {
            assertThatThrownBy(() -> call.accept(gpu)).isInstanceOf(IllegalStateException.class).hasMessageStartingWith("Gpu is closed: ").hasMessageContaining("close() was called at");
        }
        assertThat(gpu.telemetry()).isNotNull();
        assertThat(gpu.options().backend()).isEqualTo("scripted");
        assertThat(gpu.fault()).isEmpty();
    }

    @Test
    void destroyingUnknownOrDestroyedHandlesIsInvalidHandle() {
        try (Gpu gpu = scripted().open()) {
            Stream s = gpu.createStream();
            gpu.destroyStream(s);
            assertInvalidHandle(() -> gpu.destroyStream(s), "destroyStream");
            assertInvalidHandle(() -> gpu.destroyStream(Stream.DEFAULT), "default stream");
            Event e = gpu.createEvent();
            gpu.destroyEvent(e);
            assertInvalidHandle(() -> gpu.destroyEvent(e), "destroyEvent");
            assertInvalidHandle(() -> gpu.launchGraph(new GraphHandle(12345), Stream.DEFAULT), "launchGraph");
            assertInvalidHandle(() -> gpu.destroyGraph(new GraphHandle(12345)), "destroyGraph");
            assertThat(gpu.fault()).isEmpty();
        }
    }

    @Test
    void capturedGraphsReplayAndAreDestroyedOnce() {
        try (Gpu gpu = scripted().open()) {
            DevicePtr p = gpu.alloc(16);
            gpu.memset(p, 0, 16);
            Stream s = gpu.createStream();
            gpu.beginCapture(s);
            assertThat(gpu.streamIsCapturing(s)).isTrue();
            gpu.memsetAsync(p, 7, 8, s);
            GraphHandle g = gpu.endCapture(s);
            assertThat(gpu.streamIsCapturing(s)).isFalse();
            byte[] back = new byte[16];
            gpu.synchronize(s);
            gpu.copyD2H(p, back);
            assertThat(back).containsOnly(0);
            gpu.launchGraph(g, s);
            gpu.synchronize(s);
            gpu.copyD2H(p, back);
            assertThat(back).startsWith(7, 7, 7, 7, 7, 7, 7, 7).endsWith(0, 0, 0, 0, 0, 0, 0, 0);
            gpu.destroyGraph(g);
            assertInvalidHandle(() -> gpu.destroyGraph(g), "destroyGraph");
            assertInvalidHandle(() -> gpu.launchGraph(g, s), "launchGraph");
        }
    }

    @Test
    void abortCaptureEndsAnActiveCaptureAndIgnoresAnIdleStream() {
        try (Gpu gpu = scripted().open()) {
            Stream s = gpu.createStream();
            DevicePtr p = gpu.alloc(8);
            gpu.abortCaptureIfActive(s);
            gpu.beginCapture(s);
            gpu.memsetAsync(p, 1, 8, s);
            gpu.abortCaptureIfActive(s);
            assertThat(gpu.streamIsCapturing(s)).isFalse();
            gpu.beginCapture(s);
            gpu.endCapture(s);
            assertThat(gpu.fault()).isEmpty();
        }
    }

    @Test
    void hostInputIsCheckedBeforeTheDriver() {
        try (Gpu gpu = scripted().open()) {
            DevicePtr p = gpu.alloc(64);
            assertThatThrownBy(() -> gpu.copyH2D((float[]) null, p)).isInstanceOf(NullPointerException.class).hasMessage("src");
            assertThatThrownBy(() -> gpu.copyD2H(null, new int[1])).isInstanceOf(NullPointerException.class).hasMessage("src");
            assertThatThrownBy(() -> gpu.copyD2H(p, (long[]) null)).isInstanceOf(NullPointerException.class).hasMessage("dst");
            assertThatThrownBy(() -> gpu.copyD2D(p, p, -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bytes=-1");
            assertThatThrownBy(() -> gpu.memset(p, 256, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256");
            assertThatThrownBy(() -> gpu.memsetAsync(p, 0, -4, Stream.DEFAULT)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> gpu.copyD2D2DAsync(p, -1, p, 8, 8, 1, Stream.DEFAULT))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("srcPitch");
            assertThatThrownBy(() -> gpu.copyD2H(p, java.lang.foreign.MemorySegment.ofArray(new byte[4]).asReadOnly()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read-only");
            // Array copies are sized by the array: 17 floats do not fit 64 bytes, which the device reports.
            assertThatThrownBy(() -> gpu.copyH2D(new float[17], p)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
            gpu.copyH2D(new double[] {1.5, 2.5}, p);
            double[] back = new double[2];
            gpu.copyD2H(p, back);
            assertThat(back).containsExactly(1.5, 2.5);
            assertThat(gpu.fault()).isEmpty();
        }
    }

    private static void assertInvalidHandle(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String text) {
        assertThatThrownBy(call).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_HANDLE);
            assertThat(e.getMessage()).contains(text);
        });
    }
}
