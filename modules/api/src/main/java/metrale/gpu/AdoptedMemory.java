// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * Device memory another library allocated (cuBLAS, NCCL, another runtime) that a runtime was told
 * to accept with {@link Gpu#adoptDeviceMemory}: its copies, sets and pointer checks accept the
 * range, and the runtime never frees it, not at {@link Gpu#close()} nor at
 * {@link Gpu#sweepUnreleased()}; its owner does, after {@link Gpu#releaseAdoption}.
 *
 * @param ptr   the range's first byte
 * @param bytes the range's length
 * @param label what the caller named it, e.g. {@code "cuBLAS workspace"}
 * @param site  the {@code File.java:line} that adopted it
 */
public record AdoptedMemory(DevicePtr ptr, long bytes, String label, String site) {

    /** {@return the adoption's line in messages and reports: range, label and site} */
    public String describe() {
        return ptr + " (" + bytes + " B, foreign: '" + label + "', adopted at " + site + ")";
    }
}
