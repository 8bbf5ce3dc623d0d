// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.Test;

/**
 * The quarantine against a small scripted device: an out-of-memory gives the held memory back
 * and retries, on the driver path and in both pools; a failure the held memory cannot relieve is
 * not retried.
 */
class QuarantineTest {

    private static final long MIB = 1L << 20;

    private static Gpu small(String allocator) {
        return small(new ScriptedDriver(8 * MIB).withMemPools(), allocator);
    }

    private static Gpu small(ScriptedDriver driver, String allocator) {
        return driver.builder().quarantineBytes(64 * MIB).allocator(allocator).open();
    }

    private static void retriesAfterGivingTheQuarantineBack(String allocator) {
        try (Gpu gpu = small(allocator)) {
            DevicePtr a = gpu.alloc(5 * MIB);
            gpu.free(a);
            assertThat(gpu.quarantinedBytes()).isEqualTo(5 * MIB);
            DevicePtr b = gpu.alloc(5 * MIB);
            assertThat(gpu.quarantinedBytes()).as("given back to make room").isZero();
            assertThat(gpu.liveBytes()).isEqualTo(5 * MIB);
            gpu.free(b);
        }
    }

    @Test
    void driverAllocationRetries() {
        retriesAfterGivingTheQuarantineBack("driver");
    }

    @Test
    void cachingPoolRetries() {
        retriesAfterGivingTheQuarantineBack("caching");
    }

    @Test
    void asyncPoolRetries() {
        retriesAfterGivingTheQuarantineBack("cuda");
    }

    @Test
    void aStreamOrderedPoolFreeIsHeldAndGivenBackOnItsStream() {
        try (Gpu gpu = small("caching")) {
            Stream s = gpu.createStream(true);
            DevicePtr a = gpu.pool().alloc(5 * MIB, s);
            gpu.pool().free(a, s);
            assertThat(gpu.quarantinedBytes()).isEqualTo(5 * MIB);
            DevicePtr b = gpu.pool().alloc(5 * MIB, s);
            assertThat(gpu.quarantinedBytes()).isZero();
            gpu.pool().free(b, s);
            gpu.synchronize(s);
            gpu.destroyStream(s);
        }
    }

    @Test
    void anInjectedFailureIsNotRetried() {
        ScriptedDriver driver = new ScriptedDriver(8 * MIB);
        try (Gpu gpu = small(driver, "driver")) {
            gpu.free(gpu.alloc(MIB));
            driver.failNext("memAlloc", CudaError.OUT_OF_MEMORY);
            assertThatThrownBy(() -> gpu.alloc(MIB)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY));
            assertThat(gpu.quarantinedBytes()).as("nothing was given back for it").isEqualTo(MIB);
        }
    }
}
