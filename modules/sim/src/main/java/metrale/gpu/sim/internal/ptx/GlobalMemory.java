// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

/**
 * Device (global) memory as a PTX kernel reaches it: every access is checked against the live
 * allocations, and a bad one throws {@link PtxFault} naming the thread and instruction ({@code at}
 * describes them, and is called only to build that message).
 */
public interface GlobalMemory {

    /** Where an access comes from, for the message of a fault: thread, block, PTX line, instruction. */
    interface Site {
        /** {@return "thread (x,y,z) of block (x,y,z) at PTX line N `insn`"} */
        String describe();

        /** {@return "PTX line N `insn`", without the thread: the same for every thread at that instruction} */
        String where();
    }

    /**
     * {@return the {@code bytes} (1, 2, 4 or 8) at {@code addr}, little-endian, zero-extended}
     *
     * @throws PtxFault {@code ILLEGAL_ADDRESS} outside live memory, {@code MISALIGNED_ADDRESS} when unaligned
     */
    long load(long addr, int bytes, Site at);

    /**
     * Stores the low {@code bytes} of {@code bits} at {@code addr}.
     *
     * @throws PtxFault as {@link #load}
     */
    void store(long addr, int bytes, long bits, Site at);

    /**
     * Performs an atomic read-modify-write of the 4- or 8-byte word at {@code addr}, atomically with
     * respect to every other block running at once, and {@return the old value}
     *
     * @param op   an {@code Insn.A_*} operation
     * @param type the instruction's type code
     * @param b    the operand ({@code cas}: the compare value)
     * @param c    {@code cas}: the new value; otherwise unused
     */
    long atomic(int op, int type, long addr, long b, long c, Site at);

    /**
     * {@return the byte a block's shared memory and a thread's local memory start as} The device's
     * fill byte: on-chip memory holds garbage until written, as device memory does.
     */
    default byte fill() {
        return 0;
    }

    /** {@return whether reads of on-chip memory nothing wrote are to be reported ({@link #uninitialized})} */
    default boolean initCheck() {
        return false;
    }

    /**
     * Reports a read of on-chip memory that nothing had written, to the device's initcheck.
     *
     * @param where  the instruction, as {@link Site#where()} gives it
     * @param memory which memory: {@code shared memory of block (x,y,z)}, {@code local memory of thread ...}
     * @param size   that memory's bytes
     * @param offset the first unwritten byte read
     * @param bytes  how many bytes the read took
     */
    default void uninitialized(String where, String memory, long size, long offset, long bytes) {
    }
}
