// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Arena chunks: off the ledger, their slack counted as usable memory. */
class ArenaTest {

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
    void chunksNeverTouchTheLedger() {
        DevicePtr c = gpu.allocArena(1 << 20);
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.liveBytes()).isZero();
        assertThat(gpu.allocReport(10, 0)).startsWith("live device memory: 0 allocation(s)");
        assertThat(gpu.sweepUnreleased()).isZero();
        gpu.copyH2D(new int[] {1, 2, 3}, c);
        int[] back = new int[3];
        gpu.copyD2H(c, back);
        assertThat(back).containsExactly(1, 2, 3);
        gpu.freeArena(c);
    }

    @Test
    void slackIsChunkBytesMinusNotedUse() {
        DevicePtr a = gpu.allocArena(4096);
        DevicePtr b = gpu.allocArena(1000);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(5096);
        gpu.noteArenaUse(a, 4000);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(1096);
        gpu.noteArenaUse(b, 1000);
        assertThat(gpu.chunkSlackBytes()).isEqualTo(96);
        gpu.freeArena(a);
        assertThat(gpu.chunkSlackBytes()).isZero();
        assertThatThrownBy(() -> gpu.noteArenaUse(b, 1001)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1001");
        assertThatThrownBy(() -> gpu.noteArenaUse(a, 1)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
    }

    @Test
    void freeMemoryIsDeviceFreePlusSlack() {
        DevicePtr a = gpu.allocArena(1 << 20);
        gpu.noteArenaUse(a, 1 << 18);
        assertThat(gpu.freeMemory()).isEqualTo(gpu.deviceFreeMemory() + (3 << 18));
    }

    @Test
    void freeOfAChunkIsInvalidValuePointingToFreeArenaAndFreesNothing() {
        DevicePtr c = gpu.allocArena(512);
        assertThatThrownBy(() -> gpu.free(c)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.getMessage()).contains(c.toString(), "arena chunk", "freeArena");
        });
        assertThat(gpu.chunkSlackBytes()).isEqualTo(512);
        gpu.freeArena(c);
    }

    @Test
    void freeArenaOfALedgerPointerOrTwiceIsInvalidValue() {
        DevicePtr p = gpu.alloc(128);
        assertThatThrownBy(() -> gpu.freeArena(p)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        assertThat(gpu.liveAllocCount()).isEqualTo(1);
        DevicePtr c = gpu.allocArena(128);
        gpu.freeArena(c);
        assertThatThrownBy(() -> gpu.freeArena(c)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.getMessage()).contains(c.toString(), "not a live arena chunk"));
    }
}
