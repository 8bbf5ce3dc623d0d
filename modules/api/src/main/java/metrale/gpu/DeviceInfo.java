// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * What a device is.
 *
 * @param backend             the backend's name, {@code cuda} or {@code sim}
 * @param name                the device's name, e.g. {@code NVIDIA H200}
 * @param totalMemory         device memory in bytes
 * @param smCount             streaming multiprocessors
 * @param computeMajor        compute capability, major
 * @param computeMinor        compute capability, minor
 * @param maxSharedPerBlockOptin the most dynamic shared memory a kernel may opt in to, in bytes
 */
public record DeviceInfo(String backend, String name, long totalMemory, int smCount,
                         int computeMajor, int computeMinor, int maxSharedPerBlockOptin) {

    @Override
    public String toString() {
        return name + " (" + backend + ", sm_" + computeMajor + computeMinor + ", " + smCount + " SMs, "
                + (totalMemory >> 20) + " MiB)";
    }
}
