// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * A read of device memory that nothing had written, found by the simulator's opt-in initcheck
 * (option {@code sim.initcheck}), as compute-sanitizer's {@code initcheck} finds it on a GPU.
 * Device memory holds garbage until a copy, a memset or a kernel writes it; a result computed from
 * it is wrong on a GPU even when the simulator's fill byte happens to give a plausible one.
 *
 * <p>Reads by the same access of the same allocation are reported once, with the first offset
 * and the count of such reads.
 *
 * @param access          what read: {@code kernel app::scale (grid (1, 1, 1), block (256, 1, 1), smem 0) argument 0},
 *                        or a copy such as {@code cuMemcpyDtoH_v2(src=0x..., bytes=64)}
 * @param allocationBase  the device address of the allocation read; 0 for on-chip memory (a block's
 *                        shared memory, a thread's local memory), which is garbage until written too
 * @param allocationBytes its size as the driver allocated it (with any red zone), or the on-chip memory's
 * @param allocationSite  where it was allocated, {@code File.java:line} of the application's call; for
 *                        on-chip memory, which memory ({@code shared memory of block (0,0,0)})
 * @param offset          offset into the allocation of the first byte read before it was written
 * @param bytes           how many of the bytes that access read were unwritten, at its first such read
 * @param count           how many such reads this access made of this allocation
 */
public record UninitializedRead(String access, long allocationBase, long allocationBytes, String allocationSite,
                                long offset, long bytes, long count) {

    @Override
    public String toString() {
        if (allocationBase == 0) {
            return access + " read " + bytes + " uninitialized byte(s) at offset " + offset + " of the " + allocationSite
                    + " (" + allocationBytes + " bytes)" + (count > 1 ? "; " + count + " such reads" : "");
        }
        return access + " read " + bytes + " uninitialized byte(s) at offset " + offset + " of device allocation 0x"
                + Long.toHexString(allocationBase) + " (" + allocationBytes + " bytes with any red zone, allocated at " + allocationSite + ")"
                + (count > 1 ? "; " + count + " such reads" : "");
    }
}
