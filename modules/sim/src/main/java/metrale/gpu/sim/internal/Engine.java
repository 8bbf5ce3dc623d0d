// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import metrale.gpu.sim.SimBlockOrder;

/**
 * The simulated hardware that work runs against: the address space, the seeded schedule, the
 * kernels armed to fault, and the virtual clock. Guarded by the device lock.
 *
 * <p><b>Virtual clock.</b> {@link #now} is the device's time in nanoseconds. It moves only when
 * the host waits (a synchronize, a blocking copy, a free, a query that answers {@code NOT_READY},
 * {@code SimControls.advanceClock}); work takes the time its kernels declare, and nothing else.
 */
final class Engine {

    final DeviceMemory memory;
    /**
     * The memories of the peers this context enabled access to ({@code cuCtxEnablePeerAccess}): a
     * kernel may address their live allocations too, and no other device's. Written under the
     * device lock, read by kernels on any thread; addresses are unique in the process, so at most
     * one memory holds an address.
     */
    final java.util.List<DeviceMemory> peers = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Names ({@code module::func}) whose next run raises {@code ILLEGAL_ADDRESS}. */
    final Set<String> faultKernels = new HashSet<>();
    /** Declared durations of kernels ({@code module::func}), in nanoseconds. */
    final Map<String, Long> durations = new HashMap<>();
    /** How the blocks of a grid run. */
    SimBlockOrder blockOrder = SimBlockOrder.ORDERED;
    /** The virtual time, in nanoseconds. */
    long now;
    /** What the work now executing has declared, in nanoseconds; the scheduler resets it per operation. */
    long workNanos;
    private SplittableRandom random;

    Engine(DeviceMemory memory, long seed) {
        this.memory = memory;
        this.random = new SplittableRandom(seed);
    }

    /** The memories of the process's open contexts by device ordinal, or {@code null}: set by the device. */
    java.util.Map<DeviceMemory, Integer> processMemories;
    /** This context's device ordinal. */
    int ordinal;

    /**
     * {@return why a kernel of this context may not address {@code addr} although it is live memory
     * of another context of the process, or {@code null} when it is not}
     */
    String notReachable(long addr) {
        if (processMemories == null) {
            return null;
        }
        for (var e : processMemories.entrySet()) {
            DeviceMemory m = e.getKey();
            if (m != memory && !peers.contains(m) && m.find(addr) != null) {
                return e.getValue() == ordinal
                        ? "it is live memory of another context on device " + ordinal + ", which this one cannot address"
                        : "it is live memory of device " + e.getValue() + ", and this context (device " + ordinal
                        + ") has not enabled peer access to it (Gpu.enablePeerAccess)";
            }
        }
        return null;
    }

    /** {@return the live allocation containing {@code addr} in an enabled peer's memory, or {@code null}} */
    Alloc peerFind(long addr) {
        for (DeviceMemory m : peers) {
            Alloc a = m.find(addr);
            if (a != null) {
                return a;
            }
        }
        return null;
    }

    /** Restarts the schedule's random sequence from {@code seed}. */
    void seed(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** Moves the virtual clock forward to {@code t}; never back. */
    void advanceTo(long t) {
        if (t > now) {
            now = t;
        }
    }

    /** {@return a choice in [0, n) from the seeded schedule} */
    int choose(int n) {
        return n <= 1 ? 0 : random.nextInt(n);
    }
}
