// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The pinned-source rule of copyH2DAsync, against the simulator, which reads a page-locked source only when the copy runs. */
class PinnedSourceTest {

    private Gpu gpu;

    @BeforeEach
    void open() {
        gpu = sim().open();
    }

    @AfterEach
    void close() {
        gpu.close();
    }

    @Test
    void pinnedSourceIsCopiedBeforeReturnAndWarnedOnce() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            MemorySegment host = gpu.allocHostPinned(64);
            DevicePtr d = gpu.alloc(64);
            Stream s = gpu.createStream();
            host.fill((byte) 1);
            gpu.copyH2DAsync(host, d, s);
            // The caller may reuse the source at once: the copy must already have read it.
            assertThat(gpu.streamQuery(s)).isTrue();
            host.fill((byte) 2);
            gpu.copyH2DAsync(host.asSlice(0, 32), d.plus(32), s);
            host.fill((byte) 3);
            gpu.synchronize(s);
            byte[] back = new byte[64];
            gpu.copyD2H(d, back);
            for (int i = 0; i < 64; i++) {
                assertThat(back[i]).as("byte %d", i).isEqualTo((byte) (i < 32 ? 1 : 2));
            }
            assertThat(log.warnings()).filteredOn(m -> m.contains("copyH2DAsyncRetained")).hasSize(1);
            gpu.destroyStream(s);
        }
    }

    @Test
    void retainedCopyDoesNotWaitAndReadsTheSourceWhenItRuns() {
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            MemorySegment host = gpu.allocHostPinned(16);
            DevicePtr d = gpu.alloc(16);
            Stream s = gpu.createStream();
            host.fill((byte) 1);
            gpu.copyH2DAsyncRetained(host, d, s);
            host.fill((byte) 9);
            gpu.synchronize(s);
            byte[] back = new byte[16];
            gpu.copyD2H(d, back);
            // Page-locked memory is read when the copy executes, which the simulator defers to the sync.
            assertThat(back).containsOnly(9);
            assertThat(log.warnings()).noneMatch(m -> m.contains("copyH2DAsyncRetained"));
        }
    }
}
