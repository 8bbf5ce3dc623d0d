package metrale.gpu.sim;

import metrale.gpu.Dim3;

/**
 * What a {@link SimKernel} sees for one launch: the configuration, the argument values copied when
 * the launch was enqueued, and bounds-checked views of device memory.
 *
 * <p><b>Arguments.</b> Argument {@code i} is read as the type the kernel declares. Reading a wider
 * value than the launch passed (say {@link #i64} of a 4-byte argument), or an index past
 * {@link #argCount()}, stops the kernel with {@code LAUNCH_FAILED} (719, sticky): on a GPU it would
 * read garbage. Reading a narrower value takes the low bytes, as the GPU does.
 *
 * <p><b>Views.</b> A view starts at a device address (a pointer argument, or an address) and ends
 * at the end of the allocation it points into: device, managed or page-locked host memory. A pointer
 * into no live allocation gives an empty view whose first access is an illegal address; a pointer
 * misaligned for the element type gives an empty view whose first access is {@code MISALIGNED_ADDRESS}
 * (716). Views are valid only during {@link SimKernel#launch}.
 *
 * <p><b>Threads.</b> {@link #forEachThread} runs a body for every thread of the grid with no
 * barriers; {@link #forEachBlock} runs block by block with explicit phases and shared memory.
 */
public interface SimLaunch {

    /** {@return the kernel's name, {@code module::func}} */
    String name();

    /** {@return the grid dimensions, in blocks} */
    Dim3 grid();

    /** {@return the block dimensions, in threads} */
    Dim3 block();

    /** {@return the dynamic shared memory per block, in bytes} */
    int sharedMemBytes();

    /**
     * Declares how long this launch runs on the simulator's virtual clock, overriding a duration
     * set with {@link SimControls#setKernelDuration}: until that much virtual time has passed
     * after the launch starts, queries of its stream, or of an event recorded after it, answer
     * {@code NOT_READY}, and {@code elapsedMillis} across it reads it. Without a declaration a
     * launch takes no virtual time. A twin of a kernel that spins for a time argument declares
     * that argument here.
     *
     * @param nanos the duration in nanoseconds, at least 0
     * @throws IllegalArgumentException if {@code nanos} is negative
     */
    void runsFor(long nanos);

    /** {@return the number of arguments the launch passed} */
    int argCount();

    /**
     * {@return argument {@code i} as an {@code int}}
     *
     * @param i the argument index
     */
    int i32(int i);

    /**
     * {@return argument {@code i} as a {@code long long}}
     *
     * @param i the argument index
     */
    long i64(int i);

    /**
     * {@return argument {@code i} as a {@code float}}
     *
     * @param i the argument index
     */
    float f32(int i);

    /**
     * {@return argument {@code i} as a {@code double}}
     *
     * @param i the argument index
     */
    double f64(int i);

    /**
     * {@return argument {@code i} as a device pointer}
     *
     * @param i the argument index
     */
    long ptr(int i);

    /**
     * {@return a copy of argument {@code i}'s bytes, for by-value structs}
     *
     * @param i the argument index
     */
    byte[] bytes(int i);

    /**
     * {@return a float view from pointer argument {@code argIndex} to the end of its allocation}
     *
     * @param argIndex the index of a pointer argument
     */
    FloatView floats(int argIndex);

    /**
     * {@return an int view from pointer argument {@code argIndex} to the end of its allocation}
     *
     * @param argIndex the index of a pointer argument
     */
    IntView ints(int argIndex);

    /**
     * {@return a double view from pointer argument {@code argIndex} to the end of its allocation}
     *
     * @param argIndex the index of a pointer argument
     */
    DoubleView doubles(int argIndex);

    /**
     * {@return a long view from pointer argument {@code argIndex} to the end of its allocation}
     *
     * @param argIndex the index of a pointer argument
     */
    LongView longs(int argIndex);

    /**
     * {@return a byte view from pointer argument {@code argIndex} to the end of its allocation}
     *
     * @param argIndex the index of a pointer argument
     */
    ByteView bytesAt(int argIndex);

    /**
     * {@return a float view from {@code devicePtr} to the end of its allocation}
     *
     * @param devicePtr a device address
     */
    FloatView floats(long devicePtr);

    /**
     * {@return an int view from {@code devicePtr} to the end of its allocation}
     *
     * @param devicePtr a device address
     */
    IntView ints(long devicePtr);

    /**
     * {@return a double view from {@code devicePtr} to the end of its allocation}
     *
     * @param devicePtr a device address
     */
    DoubleView doubles(long devicePtr);

    /**
     * {@return a long view from {@code devicePtr} to the end of its allocation}
     *
     * @param devicePtr a device address
     */
    LongView longs(long devicePtr);

    /**
     * {@return a byte view from {@code devicePtr} to the end of its allocation}
     *
     * @param devicePtr a device address
     */
    ByteView bytesAt(long devicePtr);

    /**
     * Runs {@code body} for every thread of the grid: blocks in order (x fastest), and within a
     * block its threads in order (x fastest). There is no barrier: a kernel that needs one uses
     * {@link #forEachBlock}.
     *
     * @param body the thread body
     */
    void forEachThread(ThreadBody body);

    /**
     * Runs {@code body} for every block of the grid, in order (x fastest), each with fresh zeroed
     * shared memory.
     *
     * @param body the block body
     */
    void forEachBlock(BlockBody body);
}
