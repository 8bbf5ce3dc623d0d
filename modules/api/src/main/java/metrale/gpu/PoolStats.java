// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Map;

/**
 * A memory pool's counters at one moment.
 *
 * <p>{@code fragmentation} is {@code 1 - largestCachedBlock / cachedBytes}: 0 when the cached
 * memory is one block (or there is none), near 1 when it is many small pieces.
 *
 * @param kind               {@code caching} or {@code cuda}
 * @param reservedBytes      bytes held from the driver (chunks)
 * @param allocatedBytes     bytes in live blocks, rounded to the pool's block sizes
 * @param requestedBytes     bytes the live blocks' callers asked for (red-zone pads included)
 * @param peakReservedBytes  the highest {@code reservedBytes} so far
 * @param peakAllocatedBytes the highest {@code allocatedBytes} so far
 * @param cachedBytes        reserved bytes in free blocks
 * @param largestCachedBlock the largest free block, in bytes
 * @param fragmentation      see above, in [0, 1]
 * @param liveBlocks         live blocks
 * @param chunks             chunks held from the driver
 * @param allocs             allocations served
 * @param hits               allocations served from the cache, without a driver call
 * @param driverAllocs       driver allocation calls ({@code cuMemAlloc_v2} or {@code cuMemAllocAsync})
 * @param driverFrees        driver free calls ({@code cuMemFree_v2} or {@code cuMemFreeAsync})
 * @param cacheFlushes       times the cache was emptied (by {@link MemoryPool#emptyCache()} or to retry an allocation)
 * @param bySite             allocated bytes of live blocks per call site
 */
public record PoolStats(String kind, long reservedBytes, long allocatedBytes, long requestedBytes,
                        long peakReservedBytes, long peakAllocatedBytes, long cachedBytes, long largestCachedBlock,
                        double fragmentation, int liveBlocks, int chunks, long allocs, long hits,
                        long driverAllocs, long driverFrees, long cacheFlushes, Map<String, Long> bySite) {

    /** Copies the map. */
    public PoolStats {
        bySite = Map.copyOf(bySite);
    }
}
