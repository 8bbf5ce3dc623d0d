// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The pinned registry, the segment checks of the async copies, and a round trip through page-locked memory. */
class PinnedSourceTest {

    private Gpu gpu;

    @BeforeEach
    void open() {
        gpu = scripted().open();
    }

    @AfterEach
    void close() {
        gpu.close();
    }

    @Test
    void registryKnowsPinnedRangesAndTheirSlices() {
        MemorySegment host = gpu.allocHostPinned(4096);
        assertThat(gpu.isPinned(host)).isTrue();
        assertThat(gpu.isPinned(host.asSlice(100, 200))).isTrue();
        assertThat(gpu.isPinned(MemorySegment.ofArray(new byte[8]))).isFalse();
        try (Arena a = Arena.ofConfined()) {
            assertThat(gpu.isPinned(a.allocate(64))).isFalse();
        }
        assertThat(gpu.hostPtrToDevice(host.asSlice(8))).isEqualTo(gpu.hostPtrToDevice(host).plus(8));
        gpu.freeHostPinned(host);
        assertThat(gpu.isPinned(host)).isFalse();
        assertThatThrownBy(() -> gpu.freeHostPinned(host)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
    }

    @Test
    void asyncCopiesNeedNativeAliveSegments() {
        DevicePtr d = gpu.alloc(64);
        assertThatThrownBy(() -> gpu.copyH2DAsync(MemorySegment.ofArray(new byte[8]), d, Stream.DEFAULT))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("native");
        assertThatThrownBy(() -> gpu.copyD2HAsync(d, MemorySegment.ofArray(new byte[8]), Stream.DEFAULT))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("native");
        MemorySegment dead;
        try (Arena a = Arena.ofConfined()) {
            dead = a.allocate(8);
        }
        assertThatThrownBy(() -> gpu.copyH2DAsyncRetained(dead, d, Stream.DEFAULT)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> gpu.copyH2D(dead, d)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> gpu.copyH2DAsync(null, d, Stream.DEFAULT))
                .isInstanceOf(NullPointerException.class).hasMessage("src");
    }

    @Test
    void pinnedMemoryRoundTripsThroughAsyncCopies() {
        MemorySegment host = gpu.allocHostPinned(4 * 8);
        for (int i = 0; i < 8; i++) {
            host.setAtIndex(ValueLayout.JAVA_INT, i, i * i);
        }
        DevicePtr d = gpu.alloc(32);
        Stream s = gpu.createStream(true);
        gpu.copyH2DAsyncRetained(host, d, s);
        MemorySegment out = gpu.allocHostPinned(32);
        gpu.copyD2HAsync(d, out, s);
        gpu.synchronize(s);
        for (int i = 0; i < 8; i++) {
            assertThat(out.getAtIndex(ValueLayout.JAVA_INT, i)).isEqualTo(i * i);
        }
    }
}
