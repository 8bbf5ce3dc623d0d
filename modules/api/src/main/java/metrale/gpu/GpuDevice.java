// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.List;

/**
 * One device a backend can open, as {@link Gpu#devices()} lists it; open a runtime on it with
 * {@code Gpu.builder().device(ordinal)}.
 *
 * @param ordinal      the device's index, 0 to count - 1 ({@code cuDeviceGet})
 * @param backend      the backend's name, {@code cuda} or {@code sim}
 * @param name         the device's name ({@code cuDeviceGetName}), e.g. {@code NVIDIA H200}
 * @param totalMemory  device memory in bytes ({@code cuDeviceTotalMem_v2})
 * @param computeMajor compute capability, major
 * @param computeMinor compute capability, minor
 * @param pciBusId     the PCI bus id, {@code domain:bus:device.function} ({@code cuDeviceGetPCIBusId})
 * @param peers        the ordinals of the other devices this one can access directly
 *                     ({@code cuDeviceCanAccessPeer} is 1), ascending; never itself
 */
public record GpuDevice(int ordinal, String backend, String name, long totalMemory, int computeMajor,
                        int computeMinor, String pciBusId, List<Integer> peers) {

    /** Copies the peer list. */
    public GpuDevice {
        peers = List.copyOf(peers);
    }

    /**
     * {@return whether this device can access {@code other}'s memory directly}
     *
     * @param other another device's ordinal
     */
    public boolean canAccessPeer(int other) {
        return peers.contains(other);
    }

    @Override
    public String toString() {
        return "#" + ordinal + " " + name + " (" + backend + ", sm_" + computeMajor + computeMinor + ", "
                + (totalMemory >> 20) + " MiB, PCI " + pciBusId + ", peers " + peers + ")";
    }
}
