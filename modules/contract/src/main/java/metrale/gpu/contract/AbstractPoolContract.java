// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.MemoryPool;

/**
 * What the memory pool's contracts ({@link PoolContract}, {@link PoolStreamOrderContract}) share:
 * the allocator under test and a runtime reopened with it.
 *
 * <p>A backend's subclass runs a contract for one allocator: {@link #allocator()} is {@code caching} (the
 * runtime's own, the default here) or {@code cuda} ({@code cuMemAllocAsync}). Tests of the caching
 * allocator's own reuse decisions run only for {@code caching}.
 */
public abstract class AbstractPoolContract extends GpuContract {

    /** A size that gets its own chunk in the caching allocator (at least 10 MiB, a multiple of 2 MiB). */
    protected static final long BIG = 12L << 20;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected AbstractPoolContract() {
    }

    /** {@return {@code caching} or {@code cuda}: the allocator under test} */
    protected String allocator() {
        return "caching";
    }

    /**
     * {@return whether the backend reports stream-order races ({@link MemoryPool#races()})} True on
     * the simulator, which sees its pending work; CUDA cannot.
     */
    protected boolean detectsRaces() {
        return false;
    }

    /**
     * {@return the builder with this contract's allocator and no quarantine} These contracts test
     * the allocator's own reuse decisions, which a quarantine (the simulator's default) would delay.
     */
    GpuBuilder pooled(GpuBuilder b) {
        return b.allocator(allocator()).quarantineBytes(0);
    }

    boolean caching() {
        return "caching".equals(allocator());
    }

    MemoryPool pool() {
        reopenOnce();
        return gpu.pool();
    }

    /** Whether this test already reopened the runtime with the allocator under test. */
    boolean reopened;

    void reopenOnce() {
        if (!reopened) {
            reopen(this::pooled);
            reopened = true;
        }
    }
}
