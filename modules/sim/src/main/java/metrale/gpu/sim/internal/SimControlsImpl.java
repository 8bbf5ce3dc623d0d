// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import metrale.gpu.CudaError;
import metrale.gpu.sim.SimBlockOrder;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.SimInitCheck;
import metrale.gpu.sim.UninitializedRead;

/**
 * The one holder of a simulated device's knobs: fault injection, the schedule's seed, the capacity,
 * the block order and the virtual clock, and what the device still held at close. A separate
 * object from the driver, so an application holding it cannot be cast to the driver, and nothing
 * done through it bypasses the runtime's ledger. Each knob takes the device lock; the injected
 * faults it arms are read by the device under the same lock ({@link #allocationAttempt},
 * {@link #takeSyncFailure}).
 */
final class SimControlsImpl implements SimControls, SimInitCheck {

    private final SimDevice device;
    private final SimLock lock;
    private final DeviceMemory memory;
    private final Engine engine;
    private final Scheduler scheduler;
    /** The numbers of the device allocations {@link #failAllocation} armed to fail, counted from 1. */
    private final TreeSet<Long> failAt = new TreeSet<>();
    private long allocAttempts;
    private CudaError syncFailure;

    SimControlsImpl(SimDevice device, SimLock lock, DeviceMemory memory, Engine engine, Scheduler scheduler) {
        this.device = device;
        this.lock = lock;
        this.memory = memory;
        this.engine = engine;
        this.scheduler = scheduler;
    }

    // ---- what the device reads, under its lock --------------------------------------------------

    /** Counts a device allocation; {@return its number when {@link #failAllocation} armed it to fail, else 0} */
    long allocationAttempt() {
        allocAttempts++;
        return failAt.remove(allocAttempts) ? allocAttempts : 0;
    }

    /** {@return the error {@link #failNextSync} armed, now disarmed, or {@code null}} */
    CudaError takeSyncFailure() {
        CudaError e = syncFailure;
        syncFailure = null;
        return e;
    }

    // ---- the knobs ----------------------------------------------------------------------------

    @Override
    public void setCapacity(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("setCapacity(" + bytes + "): must be positive");
        }
        try (var _ = lock.hold()) {
            memory.setCapacity(bytes);
        }
    }

    @Override
    public void setScheduleSeed(long seed) {
        try (var _ = lock.hold()) {
            engine.seed(seed);
        }
    }

    @Override
    public void failAllocation(int nth) {
        if (nth < 1) {
            throw new IllegalArgumentException("failAllocation(" + nth + "): the count starts at 1 (the next allocation)");
        }
        try (var _ = lock.hold()) {
            failAt.add(allocAttempts + nth);
        }
    }

    @Override
    public void faultKernel(String module, String func) {
        String name = name(module, func);
        try (var _ = lock.hold()) {
            engine.faultKernels.add(name);
        }
    }

    @Override
    public void failNextSync(CudaError error) {
        Objects.requireNonNull(error, "error");
        if (!error.isSticky()) {
            throw new IllegalArgumentException("failNextSync(" + error + "): only sticky errors surface at a sync; "
                    + "for a failing call use the call's own arguments");
        }
        try (var _ = lock.hold()) {
            syncFailure = error;
        }
    }

    @Override
    public long allocationAttempts() {
        try (var _ = lock.hold()) {
            return allocAttempts;
        }
    }

    @Override
    public boolean kernelFaultArmed(String module, String func) {
        String name = name(module, func);
        try (var _ = lock.hold()) {
            return engine.faultKernels.contains(name);
        }
    }

    @Override
    public Optional<CudaError> syncFailureArmed() {
        try (var _ = lock.hold()) {
            return Optional.ofNullable(syncFailure);
        }
    }

    @Override
    public int pendingOperations() {
        try (var _ = lock.hold()) {
            return scheduler.pendingCount();
        }
    }

    @Override
    public List<String> liveAtClose() {
        try (var _ = lock.hold()) {
            return device.liveAtClose();
        }
    }

    @Override
    public boolean isClosed() {
        try (var _ = lock.hold()) {
            return device.isClosed();
        }
    }

    @Override
    public long allocForeign(long bytes) {
        return device.memAlloc(bytes);
    }

    @Override
    public void freeForeign(long ptr) {
        device.memFree(ptr);
    }

    @Override
    public long clockNanos() {
        try (var _ = lock.hold()) {
            return engine.now;
        }
    }

    @Override
    public void advanceClock(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("advanceClock(" + nanos + "): the clock does not go back");
        }
        try (var _ = lock.hold()) {
            engine.advanceTo(Math.addExact(engine.now, nanos));
        }
    }

    @Override
    public void setKernelDuration(String module, String func, long nanos) {
        String name = name(module, func);
        if (nanos < 0) {
            throw new IllegalArgumentException("setKernelDuration(" + module + ", " + func + ", " + nanos
                    + "): a duration is not negative");
        }
        try (var _ = lock.hold()) {
            if (nanos == 0) {
                engine.durations.remove(name);
            } else {
                engine.durations.put(name, nanos);
            }
        }
    }

    @Override
    public void setBlockOrder(SimBlockOrder order) {
        Objects.requireNonNull(order, "order");
        try (var _ = lock.hold()) {
            engine.blockOrder = order;
        }
    }

    @Override
    public boolean initCheckEnabled() {
        return memory.init != null;
    }

    @Override
    public List<UninitializedRead> uninitializedReads() {
        InitCheck init = memory.init;
        return init == null ? List.of() : init.reads();
    }

    @Override
    public String toString() {
        return "SimControls of " + device;
    }

    /** {@return {@code module::func}, the name the engine keys kernels by} */
    private static String name(String module, String func) {
        return Objects.requireNonNull(module, "module") + "::" + Objects.requireNonNull(func, "func");
    }
}
