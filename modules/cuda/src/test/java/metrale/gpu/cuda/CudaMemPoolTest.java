// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.cuda.internal.CudaDevice;
import metrale.gpu.spi.Driver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The binding of CUDA's stream-ordered allocator: {@code cuMemAllocAsync}, {@code cuMemFreeAsync}
 * and the default pool's attributes and trim, against a real device. Runs on a GPU host only.
 */
@RequiresCuda
class CudaMemPoolTest {

    static CudaDevice gpu;

    @BeforeAll
    static void open() {
        gpu = TestKernels.open();
    }

    @AfterAll
    static void close() {
        if (gpu != null) {
            gpu.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
            gpu.close();
        }
    }

    /** An async allocation holds data in stream order and counts in the pool's used and reserved bytes. */
    @Test
    void allocWriteReadFree() {
        assertThat(gpu.supportsMemPools()).isTrue();
        long s = gpu.streamCreate(1);
        try {
            long usedBefore = gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT);
            long p = gpu.memAllocAsync(1 << 20, s);
            assertThat(p % 256).isZero();
            gpu.memsetD8Async(p, 0x5a, 1 << 20, s);
            gpu.streamSynchronize(s);
            byte[] out = new byte[4096];
            gpu.memcpyDtoH(MemorySegment.ofArray(out), p, out.length);
            byte[] want = new byte[out.length];
            Arrays.fill(want, (byte) 0x5a);
            assertThat(out).isEqualTo(want);
            assertThat(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT)).isGreaterThanOrEqualTo(usedBefore + (1 << 20));
            assertThat(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT))
                    .isGreaterThanOrEqualTo(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT));
            gpu.memFreeAsync(p, s);
            gpu.streamSynchronize(s);
            assertThat(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_USED_MEM_CURRENT)).isEqualTo(usedBefore);
        } finally {
            gpu.streamDestroy(s);
        }
    }

    /** With the release threshold raised, freed memory stays reserved until a trim. */
    @Test
    void thresholdKeepsMemoryUntilTrim() {
        long s = gpu.streamCreate(1);
        try {
            gpu.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, -1L);
            assertThat(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD)).isEqualTo(-1L);
            long p = gpu.memAllocAsync(32L << 20, s);
            gpu.memFreeAsync(p, s);
            gpu.streamSynchronize(s);
            assertThat(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT)).isGreaterThanOrEqualTo(32L << 20);
            gpu.memPoolTrimTo(0);
            assertThat(gpu.memPoolGetAttribute(Driver.MEMPOOL_ATTR_RESERVED_MEM_CURRENT)).isLessThan(32L << 20);
        } finally {
            gpu.memPoolSetAttribute(Driver.MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
            gpu.streamDestroy(s);
        }
    }

    /** 2^50 bytes, a bad pointer and a bad attribute are CUDA's errors, named; size 0 is not an error here. */
    @Test
    void badInputIsRefused() {
        long s = gpu.streamCreate(1);
        try {
            // Unlike cuMemAlloc (size 0 -> 1), cuMemAllocAsync of 0 bytes succeeds on the H200
            // (driver 580); the runtime's pool refuses 0 bytes itself, as cuMemAlloc does.
            long none = gpu.memAllocAsync(0, s);
            if (none != 0) {
                gpu.memFreeAsync(none, s);
            }
            assertThatThrownBy(() -> gpu.memAllocAsync(1L << 50, s)).isInstanceOf(GpuException.class)
                    .satisfies(e -> assertThat(((GpuException) e).error()).isEqualTo(CudaError.OUT_OF_MEMORY));
            assertThatThrownBy(() -> gpu.memPoolGetAttribute(99)).isInstanceOf(GpuException.class)
                    .satisfies(e -> assertThat(((GpuException) e).error()).isEqualTo(CudaError.INVALID_VALUE))
                    .hasMessageContaining("cuMemPoolGetAttribute");
            long p = gpu.memAllocAsync(4096, s);
            gpu.memFreeAsync(p, s);
            gpu.streamSynchronize(s);
        } finally {
            gpu.streamDestroy(s);
        }
    }
}
