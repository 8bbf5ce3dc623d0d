// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CudaError;

/**
 * A simulated operating-system process, as far as CUDA can tell: a sticky fault in any of its
 * devices leaves the whole process unusable (CUDA_SEMANTICS section 4: no in-process recovery, a new
 * context fails too). The JVM has one shared simulated process, the default; a runtime opened with
 * {@code sim.process=fresh} gets one of its own. Thread-safe.
 */
final class SimProcess {

    /** A latched fault: the error, what raised it, and where. */
    record Fault(CudaError error, String detail) {
    }

    private static final AtomicLong COUNT = new AtomicLong();
    private static final SimProcess SHARED = new SimProcess("the shared simulated process");

    private final String label;
    private final AtomicReference<Fault> sticky = new AtomicReference<>();
    /** The memory of each open device context of the process, with its device ordinal, to explain a fault. */
    final java.util.Map<DeviceMemory, Integer> memories = new java.util.concurrent.ConcurrentHashMap<>();

    private SimProcess(String label) {
        this.label = label;
    }

    /** {@return the JVM's one shared simulated process} */
    static SimProcess shared() {
        return SHARED;
    }

    /** {@return a new simulated process with nothing latched} */
    static SimProcess fresh() {
        return new SimProcess("simulated process #" + COUNT.incrementAndGet());
    }

    private static final java.util.concurrent.ConcurrentHashMap<String, SimProcess> NAMED =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** {@return the simulated process called {@code name}, made on first use} */
    static SimProcess named(String name) {
        return NAMED.computeIfAbsent(name, n -> new SimProcess("simulated process '" + n + "'"));
    }

    /** Latches {@code error}; the first fault stays, as on CUDA. */
    void poison(CudaError error, String detail) {
        sticky.compareAndSet(null, new Fault(error, detail));
    }

    /** {@return the fault the process is poisoned with, or {@code null}} */
    Fault fault() {
        return sticky.get();
    }

    @Override
    public String toString() {
        return label;
    }
}
