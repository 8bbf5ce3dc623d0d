package metrale.gpu.sim;

/**
 * A bounds-checked view of device (or shared) memory as longs, indexed in elements, little-endian,
 * from a pointer to the end of the allocation it points into. An access outside it is an illegal
 * address: the kernel stops and the device latches {@code ILLEGAL_ADDRESS} (700) as a sticky fault,
 * reported with the kernel, the address and the allocation.
 *
 * <p>The {@code atomic} methods are CUDA's atomic operations: each returns the old value, and
 * they are atomic also when blocks run on several threads ({@link SimBlockOrder#PARALLEL}); plain
 * {@code get} and {@code set} are not, as on a GPU.
 */
public interface LongView {

    /** {@return the number of longs from the view's start to the end of its allocation} */
    long length();

    /**
     * {@return element {@code i}}
     *
     * @param i the element index, in [0, {@link #length()})
     */
    long get(long i);

    /**
     * Stores element {@code i}.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the value
     */
    void set(long i, long v);

    /**
     * Atomically reads element {@code i} and adds {@code v}, as CUDA's {@code atomicAdd} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicAdd(long i, long v);

    /**
     * Atomically reads element {@code i} and stores {@code v}, as CUDA's {@code atomicExch} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicExch(long i, long v);

    /**
     * Atomically reads element {@code i} and stores the smaller of it and {@code v} (signed), as CUDA's {@code atomicMin} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicMin(long i, long v);

    /**
     * Atomically reads element {@code i} and stores the larger of it and {@code v} (signed), as CUDA's {@code atomicMax} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicMax(long i, long v);

    /**
     * Atomically reads element {@code i} and stores its bitwise AND with {@code v}, as CUDA's {@code atomicAnd} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicAnd(long i, long v);

    /**
     * Atomically reads element {@code i} and stores its bitwise OR with {@code v}, as CUDA's {@code atomicOr} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicOr(long i, long v);

    /**
     * Atomically reads element {@code i} and stores its bitwise XOR with {@code v}, as CUDA's {@code atomicXor} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the operand
     * @return the element's old value
     */
    long atomicXor(long i, long v);

    /**
     * Atomically stores {@code v} in element {@code i} if it equals {@code expected}, as CUDA's
     * {@code atomicCAS} does.
     *
     * @param i        the element index, in [0, {@link #length()})
     * @param expected the value it must hold
     * @param v        the new value
     * @return the element's old value (equal to {@code expected} when the store happened)
     */
    long atomicCas(long i, long expected, long v);
}
