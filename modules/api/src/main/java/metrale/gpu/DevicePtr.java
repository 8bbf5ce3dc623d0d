// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A device address, as {@code CUdeviceptr}: a plain 64-bit value that owns nothing.
 *
 * <p>Pointers come from {@link Gpu#alloc}, {@link Gpu#allocManaged}, {@link Gpu#allocArena} or
 * {@link Gpu#hostPtrToDevice}. Arithmetic with {@link #plus(long)} yields interior pointers,
 * which kernels and copies accept but {@link Gpu#free} rejects.
 *
 * @param address the device address; {@code 0} is the null pointer
 */
public record DevicePtr(long address) {

    /** The null device pointer; {@link Gpu#free} treats it as a no-op. */
    public static final DevicePtr NULL = new DevicePtr(0);

    /** {@return whether this is the null pointer} */
    public boolean isNull() {
        return address == 0;
    }

    /**
     * {@return the pointer {@code bytes} past this one}
     *
     * @param bytes the byte offset, may be negative
     */
    public DevicePtr plus(long bytes) {
        return new DevicePtr(address + bytes);
    }

    /** {@return the address in lowercase hex, {@code 0x...}} */
    @Override
    public String toString() {
        return "0x" + Long.toHexString(address);
    }
}
