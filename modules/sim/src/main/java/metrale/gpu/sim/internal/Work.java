// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

/** One unit of device work: a copy, a memset, a kernel, an event marker, a graph. */
interface Work {

    /**
     * Executes the work on the device.
     *
     * @param engine the device's memory and state
     * @throws SimFault on a device-side fault, which the device latches as sticky
     */
    void run(Engine engine);

    /** {@return a short description, for fault messages} */
    String describe();

    /**
     * {@return whether this work may touch device memory in {@code [lo, hi)}} Copies and memsets
     * know their ranges; a kernel counts as touching a range when an argument word points into
     * it. Used by the pool's stream-order check.
     *
     * @param lo the first address
     * @param hi one past the last
     */
    default boolean touches(long lo, long hi) {
        return false;
    }

    /** {@return whether {@code [a, a + n)} meets {@code [lo, hi)}} */
    static boolean overlaps(long a, long n, long lo, long hi) {
        return Long.compareUnsigned(a, hi) < 0 && Long.compareUnsigned(a + n, lo) > 0;
    }
}
