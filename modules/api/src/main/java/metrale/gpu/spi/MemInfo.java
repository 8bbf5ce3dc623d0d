// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

/**
 * Device memory as {@code cuMemGetInfo_v2} reports it.
 *
 * @param free  free bytes
 * @param total total bytes; fixed for a device
 */
public record MemInfo(long free, long total) {
}
