package metrale.gpu.sim.internal;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The simulated hardware that work runs against: the address space, the seeded schedule and the
 * kernels armed to fault. Guarded by the device lock.
 */
final class Engine {

    final DeviceMemory memory;
    /** Names ({@code module::func}) whose next run raises {@code ILLEGAL_ADDRESS}. */
    final Set<String> faultKernels = new HashSet<>();
    private SplittableRandom random;

    Engine(DeviceMemory memory, long seed) {
        this.memory = memory;
        this.random = new SplittableRandom(seed);
    }

    /** Restarts the schedule's random sequence from {@code seed}. */
    void seed(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** {@return a choice in [0, n) from the seeded schedule} */
    int choose(int n) {
        return n <= 1 ? 0 : random.nextInt(n);
    }
}
