// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.UnaryOperator;
import metrale.gpu.GpuBuilder;
import metrale.gpu.LeakDetection;
import org.junit.jupiter.api.Test;

/**
 * The allocation path under threads, bounded: 16 platform threads (or 64 virtual ones), each on a
 * stream of its own, through alloc, copy, launch, copy back and free a few thousand times
 * together ({@link PoolSoak}), with the backend's defaults, without the quarantine (where the
 * pool reuses an address at once) and with every detector on. Every result is checked and the
 * ledger must be back where it started. A block the allocator took back while the backend still
 * had it as a block (a release told after the address was handed out again) shows here as a
 * false refusal of a copy into the new block, or a sticky fault.
 */
public abstract class PoolSoakContract extends GpuContract {

    /** Cycles per platform thread: 16 of them make a few thousand. */
    private static final int CYCLES = 250;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected PoolSoakContract() {
    }

    /**
     * {@return the builder with every detector this backend has on} Red zones, the quarantine and
     * every call site here; the simulator adds its parallel blocks. The quarantine holds 1 MiB, so
     * that a few thousand cycles of up to 8 KiB give memory back through it, as a long run does.
     *
     * @param b the backend's builder
     */
    protected GpuBuilder everythingOn(GpuBuilder b) {
        return b.redZoneBytes(256).quarantineBytes(1L << 20).leakDetection(LeakDetection.ALL);
    }

    private void soak(UnaryOperator<GpuBuilder> options, int threads, boolean virtual, int cycles, boolean streamOrdered)
            throws InterruptedException {
        reopen(options);
        PoolSoak.Result r = PoolSoak.run(gpu, kernel("add_i32"),
                new PoolSoak.Config(threads, virtual, cycles, 8192, 120, streamOrdered, 38));
        assertThat(r.clean()).as(r.report()).isTrue();
    }

    /**
     * With the backend's defaults.
     *
     * @throws InterruptedException if interrupted
     */
    @Test
    public void sixteenThreadsAllocCopyLaunchAndFreeWithTheDefaults() throws InterruptedException {
        soak(b -> b, 16, false, CYCLES, false);
    }

    /**
     * With the quarantine off, so the pool hands a freed address out again at once, to any thread.
     *
     * @throws InterruptedException if interrupted
     */
    @Test
    public void sixteenThreadsWithoutTheQuarantine() throws InterruptedException {
        soak(b -> b.quarantineBytes(0), 16, false, CYCLES, false);
    }

    /**
     * Through a quarantine small enough (256 KiB) that blocks go back to the pool while other
     * threads' work is still pending.
     *
     * @throws InterruptedException if interrupted
     */
    @Test
    public void sixteenThreadsThroughASmallQuarantine() throws InterruptedException {
        soak(b -> b.quarantineBytes(256 << 10), 16, false, CYCLES, false);
    }

    /**
     * Through {@code gpu.alloc(n, stream)} and {@code gpu.free(p, stream)}, without the quarantine.
     *
     * @throws InterruptedException if interrupted
     */
    @Test
    public void sixteenThreadsOnTheirStreamsPoolsWithoutTheQuarantine() throws InterruptedException {
        soak(b -> b.quarantineBytes(0), 16, false, CYCLES, true);
    }

    /**
     * Every detector on.
     *
     * @throws InterruptedException if interrupted
     */
    @Test
    public void sixteenThreadsWithEverythingOn() throws InterruptedException {
        soak(this::everythingOn, 16, false, CYCLES, false);
    }

    /**
     * Sixty-four virtual threads, without the quarantine.
     *
     * @throws InterruptedException if interrupted
     */
    @Test
    public void sixtyFourVirtualThreads() throws InterruptedException {
        soak(b -> b.quarantineBytes(0), 64, true, CYCLES / 4, false);
    }
}
