// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.Driver;
import org.junit.jupiter.api.Test;

/**
 * The simulator's {@code cuMemAllocAsync} pool keeps freed memory as CUDA's default pool does: up
 * to its release threshold at a synchronization, trimmed by {@code cuMemPoolTrimTo}.
 */
class SimMemPoolTest {

    private static final long MIB = 1 << 20;

    private static long free(SimDevice dev) {
        return dev.memGetInfo().free();
    }

    @Test
    void theDefaultThresholdZeroReleasesAtTheNextSync() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long before = free(dev);
            long p = dev.memAllocAsync(8 * MIB, 0);
            assertThat(free(dev)).isEqualTo(before - 8 * MIB);
            dev.memFreeAsync(p, 0);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT)).isEqualTo(8 * MIB);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT)).isZero();
            assertThat(free(dev)).as("reserved until a sync").isEqualTo(before - 8 * MIB);
            dev.ctxSynchronize();
            assertThat(free(dev)).as("threshold 0: released at the sync").isEqualTo(before);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT)).isZero();
        }
    }

    @Test
    void aThresholdKeepsThatManyBytesAcrossSyncs() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long before = free(dev);
            dev.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, 3 * MIB);
            long p = dev.memAllocAsync(8 * MIB, 0);
            dev.memFreeAsync(p, 0);
            long s = dev.streamCreate(1);
            dev.streamSynchronize(s);
            dev.streamSynchronize(0);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT)).isEqualTo(3 * MIB);
            assertThat(free(dev)).isEqualTo(before - 3 * MIB);
            long q = dev.memAllocAsync(2 * MIB, s);
            assertThat(free(dev)).as("drawn from the reserve").isEqualTo(before - 3 * MIB);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT)).isEqualTo(2 * MIB);
            dev.memFreeAsync(q, s);
            dev.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, -1L);
            dev.ctxSynchronize();
            assertThat(free(dev)).as("an unbounded threshold keeps everything").isEqualTo(before - 3 * MIB);
            dev.memPoolTrimTo(MIB);
            assertThat(free(dev)).isEqualTo(before - MIB);
            dev.memPoolTrimTo(0);
            assertThat(free(dev)).isEqualTo(before);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_HIGH)).isEqualTo(8 * MIB);
            dev.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0);
            assertThat(dev.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_HIGH)).isZero();
            dev.streamDestroy(s);
        }
    }

    @Test
    void cachedMemoryIsNotValidForTheFreedPointer() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            dev.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, -1L);
            long p = dev.memAllocAsync(4096, 0);
            dev.memFreeAsync(p, 0);
            dev.ctxSynchronize();
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(p, 0, 16)).hasMessageContaining("freed");
        }
    }
}
