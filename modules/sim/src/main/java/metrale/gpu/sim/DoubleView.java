package metrale.gpu.sim;

/**
 * A bounds-checked view of device (or shared) memory as doubles, indexed in elements, little-endian,
 * from a pointer to the end of the allocation it points into. An access outside it is an illegal
 * address: the kernel stops and the device latches {@code ILLEGAL_ADDRESS} (700) as a sticky fault,
 * reported with the kernel, the address and the allocation.
 *
 * <p>The {@code atomic} methods are CUDA's atomic operations: each returns the old value, and
 * they are atomic also when blocks run on several threads ({@link SimBlockOrder#PARALLEL}); plain
 * {@code get} and {@code set} are not, as on a GPU.
 */
public interface DoubleView {

    /** {@return the number of doubles from the view's start to the end of its allocation} */
    long length();

    /**
     * {@return element {@code i}}
     *
     * @param i the element index, in [0, {@link #length()})
     */
    double get(long i);

    /**
     * Stores element {@code i}.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the value
     */
    void set(long i, double v);

    /**
     * Atomically reads element {@code i} and adds {@code v}, as CUDA's {@code atomicAdd} does.
     *
     * @param i the element index, in [0, {@link #length()})
     * @param v the addend
     * @return the element's old value
     */
    double atomicAdd(long i, double v);
}
