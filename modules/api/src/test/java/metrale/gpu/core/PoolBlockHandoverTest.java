// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CaptureMode;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.Test;

/**
 * What the runtime tells a driver that checks bounds when a pool block changes hands: its bounds
 * (red zone included) when carved, its release before the allocator can hand its address out
 * again, the quarantine's hold of freed memory, and the red zone after each buffer.
 */
class PoolBlockHandoverTest {

    private final ScriptedDriver driver = new ScriptedDriver();

    private static String hex(DevicePtr p) {
        return "0x" + Long.toHexString(p.address());
    }

    @Test
    void aFreedBlockIsReleasedToTheBackendBeforeItsAddressIsCarvedAgain() {
        try (Gpu gpu = driver.builder().allocator("caching").quarantineBytes(0).open()) {
            DevicePtr p = gpu.alloc(1000);
            gpu.free(p);
            DevicePtr q = gpu.alloc(700);
            assertThat(q).as("the pool hands the address out again").isEqualTo(p);
            gpu.free(q);
            assertThat(driver.bounds()).containsExactly("carve " + hex(p) + " 1000", "release " + hex(p),
                    "carve " + hex(p) + " 700", "release " + hex(p));
        }
    }

    @Test
    void aCarveCoversTheRedZoneAndTheBackendIsToldWhereTheBufferEnds() {
        try (Gpu gpu = driver.builder().allocator("caching").redZoneBytes(64).quarantineBytes(0).open()) {
            DevicePtr p = gpu.alloc(1000);
            assertThat(driver.bounds()).containsExactly("carve " + hex(p) + " 1064", "redzone " + hex(p) + " 1000 64");
            gpu.free(p);
            assertThat(driver.bounds()).last().isEqualTo("release " + hex(p));
        }
    }

    @Test
    void theQuarantineTellsTheBackendItHoldsABlockAndReleasesItOnlyWhenItGivesItBack() {
        try (Gpu gpu = driver.builder().allocator("caching").quarantineBytes(1 << 20).open()) {
            DevicePtr p = gpu.alloc(1000);
            gpu.free(p);
            assertThat(driver.bounds()).containsExactly("carve " + hex(p) + " 1000", "held " + hex(p));
            gpu.sweepUnreleased();
            assertThat(driver.bounds()).containsExactly("carve " + hex(p) + " 1000", "held " + hex(p), "release " + hex(p));
        }
    }

    @Test
    void theQuarantineHoldsADriverAllocationToo() {
        try (Gpu gpu = driver.builder().allocator("driver").quarantineBytes(1 << 20).open()) {
            DevicePtr p = gpu.alloc(1000);
            gpu.free(p);
            assertThat(driver.bounds()).containsExactly("held " + hex(p));
        }
    }

    @Test
    void aQuarantineThatHoldsNothingTellsNoHold() {
        try (Gpu gpu = driver.builder().allocator("driver").redZoneBytes(64).quarantineBytes(0).open()) {
            DevicePtr p = gpu.alloc(1000);
            gpu.free(p);
            assertThat(driver.bounds()).containsExactly("redzone " + hex(p) + " 1000 64");
        }
    }

    @Test
    void aGlobalCaptureRefusesAFreeTheQuarantineWouldDeferAsTheDriverRefusesIt() {
        try (Gpu gpu = driver.builder().allocator("driver").quarantineBytes(1 << 20).open()) {
            DevicePtr p = gpu.alloc(1000);
            Stream s = gpu.createStream();
            gpu.beginCapture(s, CaptureMode.GLOBAL);
            // What CUDA answers cuMemFree during a GLOBAL capture; the quarantine would not have asked.
            driver.failNext("memFree", CudaError.STREAM_CAPTURE_UNSUPPORTED);
            assertThatThrownBy(() -> gpu.free(p)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.STREAM_CAPTURE_UNSUPPORTED));
            assertThat(gpu.liveAllocations()).as("nothing was freed").hasSize(1);
            assertThat(driver.bounds()).as("nothing was held").isEmpty();
            gpu.destroyGraph(gpu.endCapture(s));
            gpu.free(p);
            assertThat(driver.bounds()).containsExactly("held " + hex(p));
            gpu.destroyStream(s);
        }
    }

    @Test
    void aRelaxedCaptureLetsTheQuarantineHoldAFree() {
        try (Gpu gpu = driver.builder().allocator("driver").quarantineBytes(1 << 20).open()) {
            DevicePtr p = gpu.alloc(1000);
            Stream s = gpu.createStream();
            gpu.beginCapture(s, CaptureMode.RELAXED);
            gpu.free(p);
            assertThat(driver.bounds()).containsExactly("held " + hex(p));
            gpu.destroyGraph(gpu.endCapture(s));
            gpu.destroyStream(s);
        }
    }
}
