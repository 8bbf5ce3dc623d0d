// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import java.util.List;
import java.util.Optional;
import metrale.gpu.CudaError;

/**
 * The simulator's control panel for one runtime: fault injection, the schedule's seed, the device
 * capacity and what is pending. Reached from an application with
 * {@code gpu.unwrap(SimControls.class)}; it is not the driver, so nothing done through it bypasses
 * the runtime's ledger.
 *
 * <p><b>Threads.</b> Every method may be called from any thread; the simulated device serializes
 * them with its own calls.
 */
public interface SimControls {

    /**
     * Sets the device memory size, as option {@code sim.capacity} does. Live allocations stay; if
     * they exceed the new size, free memory reads 0 until enough is freed.
     *
     * @param bytes the capacity, positive
     * @throws IllegalArgumentException if {@code bytes} is not positive
     */
    void setCapacity(long bytes);

    /**
     * Restarts the schedule from {@code seed}: the same calls then interleave ready streams (and
     * graph nodes, and blocks where the block order is shuffled) the same way.
     *
     * @param seed the seed
     */
    void setScheduleSeed(long seed);

    /**
     * Makes the {@code nth} device allocation from now ({@code cuMemAlloc} or
     * {@code cuMemAllocManaged}; 1 is the next one) fail with {@code OUT_OF_MEMORY}. Not sticky.
     *
     * @param nth which future allocation fails, at least 1
     * @throws IllegalArgumentException if {@code nth} is below 1
     */
    void failAllocation(int nth);

    /**
     * Makes the next run of {@code module::func} raise {@code ILLEGAL_ADDRESS} instead of running,
     * latched as a sticky fault when the launch executes.
     *
     * @param module the module's load name
     * @param func   the function's name
     */
    void faultKernel(String module, String func);

    /**
     * Makes the next {@code cuStreamSynchronize}, {@code cuEventSynchronize} or
     * {@code cuCtxSynchronize} report {@code error} and latch it, as an asynchronous device fault
     * would.
     *
     * @param error a sticky error, such as {@link CudaError#ILLEGAL_ADDRESS} or {@link CudaError#LAUNCH_FAILED}
     * @throws IllegalArgumentException if {@code error} is not sticky
     */
    void failNextSync(CudaError error);

    /**
     * {@return how many device allocations ({@code cuMemAlloc}, {@code cuMemAllocManaged}) were
     * attempted since the device opened, failed ones included} With {@link #failAllocation} it says
     * whether an armed failure was reached. Readable after close.
     */
    long allocationAttempts();

    /**
     * {@return whether a fault {@link #faultKernel} armed for {@code module::func} is still waiting
     * for that kernel's next run} Readable after close.
     *
     * @param module the module's load name
     * @param func   the function's name
     */
    boolean kernelFaultArmed(String module, String func);

    /** {@return the error {@link #failNextSync} armed that no synchronize has reported yet, or empty} Readable after close. */
    Optional<CudaError> syncFailureArmed();

    /** {@return the number of enqueued operations that have not run yet, on every stream} */
    int pendingOperations();

    /**
     * {@return what the simulated device still held when its runtime closed it, one line per kind
     * with its count (device, managed and page-locked allocations, streams, events, modules,
     * graphs, graph execs)} Empty before close, and after a close that released everything first.
     * Readable after close: fetch the controls before closing the runtime.
     */
    List<String> liveAtClose();

    /** {@return whether the simulated device was closed (its runtime closes it last, at {@code Gpu.close()})} */
    boolean isClosed();

    /**
     * Allocates device memory in this simulated context behind the runtime's back, as another
     * library in the process (cuBLAS, NCCL) calling {@code cuMemAlloc} would: the runtime's ledger
     * does not know it, so its copies refuse it until {@code Gpu.adoptDeviceMemory} declares it,
     * and it outlives the runtime's {@code close()} (then listed by {@link #liveAtClose()}).
     *
     * @param bytes at least 1
     * @return the device address
     * @throws metrale.gpu.GpuException {@code INVALID_VALUE} for 0 bytes, {@code OUT_OF_MEMORY} past the capacity
     */
    long allocForeign(long bytes);

    /**
     * Frees memory {@link #allocForeign} returned, as its owner would with {@code cuMemFree}.
     *
     * @param ptr the address {@link #allocForeign} returned
     * @throws metrale.gpu.GpuException {@code INVALID_VALUE} when it is no live allocation
     */
    void freeForeign(long ptr);

    /**
     * {@return the virtual clock, in nanoseconds since the device opened} It moves only when the
     * host waits: a synchronize, a blocking copy, a free, a query that answers {@code NOT_READY}
     * (the poll stands for the host's waiting), or {@link #advanceClock}.
     */
    long clockNanos();

    /**
     * Moves the virtual clock forward, as time passing on the host would (a sleep between
     * launches and a query, say): work whose virtual end falls inside it is then complete.
     *
     * @param nanos how far, at least 0
     * @throws IllegalArgumentException if {@code nanos} is negative
     */
    void advanceClock(long nanos);

    /**
     * Declares how long every launch of {@code module::func} runs on the virtual clock, unless its
     * twin declares its own with {@link SimLaunch#runsFor}; 0 removes the declaration.
     *
     * @param module the module's load name
     * @param func   the function's name
     * @param nanos  the duration in nanoseconds, at least 0
     * @throws IllegalArgumentException if {@code nanos} is negative
     */
    void setKernelDuration(String module, String func, long nanos);

    /**
     * Sets how the blocks of later launches run, as option {@code sim.blocks} does.
     *
     * @param order the block order
     */
    void setBlockOrder(SimBlockOrder order);
}
