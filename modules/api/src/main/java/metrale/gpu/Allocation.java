// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * One live entry of the allocation ledger.
 *
 * @param ptr     the base pointer the caller received
 * @param bytes   the bytes the caller asked for (any red zone is not counted)
 * @param site    the caller's {@code File.java:line}
 * @param index   the creation index: allocations are numbered from 0 in the order they were made
 * @param managed whether it is unified (managed) memory
 */
public record Allocation(DevicePtr ptr, long bytes, String site, long index, boolean managed) {
}
