// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * A bounds-checked view of device (or shared) memory as ints, indexed in elements, little-endian,
 * from a pointer to the end of the allocation it points into. An access outside it is an illegal
 * address: the kernel stops and the device latches {@code ILLEGAL_ADDRESS} (700) as a sticky fault,
 * reported with the kernel, the address and the allocation.
 */
public interface IntView {

    /** {@return the number of ints from the view's start to the end of its allocation} */
    long length();

    /**
     * {@return element {@code i}}
     *
     * @param i the element index, in [0, {@link #length()})
     */
    int get(long i);

    /**
     * Stores element {@code i}.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the value
     */
    void set(long i, int v);
}
