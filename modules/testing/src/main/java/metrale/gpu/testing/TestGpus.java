// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.LeakDetection;
import metrale.gpu.sim.SimBlockOrder;
import metrale.gpu.sim.SimInitCheck;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwins;

/**
 * Opens the runtimes {@link GpuTest} gives its runs, for code that opens its own: a jqwik property
 * opens one per try, checks it with {@link GpuChecks} and closes it.
 *
 * <p>A simulator runtime lives in a simulated process of its own ({@code sim.process=fresh}), so a
 * sticky fault in one test poisons no other, and looks twins up first in a table of its own
 * ({@code sim.twins}), so tests may run in parallel.
 *
 * <pre>{@code
 * @Property
 * void pipelineIsOrdered(@ForAll("seeds") long seed) {
 *     Gpu gpu = TestGpus.sim().seed(seed).open();
 *     try {
 *         // ... the property ...
 *     } finally {
 *         GpuChecks.verifyAndClose(gpu);
 *     }
 * }
 * }</pre>
 */
public final class TestGpus {

    private TestGpus() {
    }

    /** {@return a builder of a simulator runtime with the kit's defaults (256-byte red zones, seed 0)} */
    public static Builder sim() {
        return new Builder(Backend.SIM);
    }

    /**
     * {@return a builder of a runtime on {@code backend}}
     *
     * @param backend the backend
     */
    public static Builder on(Backend backend) {
        return new Builder(Objects.requireNonNull(backend, "backend"));
    }

    /** Options of a test runtime. Not thread-safe; each {@link #open()} makes a new runtime. */
    public static final class Builder {

        private final Backend backend;
        private long redZoneBytes = 256;
        private long capacity;
        private long seed;
        private boolean initCheck;
        private SimBlockOrder blocks = SimBlockOrder.ORDERED;
        private metrale.gpu.sim.SimTwinMode twinMode = metrale.gpu.sim.SimTwinMode.PREFER;
        private SimTwins table;
        private final List<Twins> twins = new ArrayList<>();
        private String allocator;

        Builder(Backend backend) {
            this.backend = backend;
        }

        /**
         * Sets the red-zone pad after each buffer.
         *
         * @param bytes the pad, at least 0; 0 turns red zones off
         * @return this
         */
        public Builder redZoneBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("redZoneBytes(" + bytes + "): must be at least 0");
            }
            this.redZoneBytes = bytes;
            return this;
        }

        /**
         * Sets the simulated device's memory (simulator only).
         *
         * @param bytes the capacity, positive; 0 keeps the simulator's default
         * @return this
         */
        public Builder capacity(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("capacity(" + bytes + "): must be positive, or 0 for the default");
            }
            this.capacity = bytes;
            return this;
        }

        /**
         * Sets the simulator's schedule seed (ignored on CUDA, whose hardware picks the order).
         *
         * @param seed the seed
         * @return this
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Turns the simulator's initcheck on or off ({@link SimInitCheck}); simulator only.
         *
         * @param on whether reads of unwritten device memory are recorded
         * @return this
         */
        public Builder initCheck(boolean on) {
            this.initCheck = on;
            return this;
        }

        /**
         * Sets what runs a simulated kernel (ignored on CUDA): {@code PREFER} (the default, which
         * leaves it to {@code metrale.sim.twins} / {@code METRALE_SIM_TWINS} when set) runs a
         * registered twin and otherwise the kernel's PTX; {@code OFF} runs the PTX only;
         * {@code VERIFY} runs both and fails a launch whose results differ.
         *
         * @param mode what runs a kernel
         * @return this
         */
        public Builder twinMode(metrale.gpu.sim.SimTwinMode mode) {
            this.twinMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * Sets how the simulator runs a grid's blocks (ignored on CUDA).
         *
         * @param order the block order
         * @return this
         */
        public Builder blocks(SimBlockOrder order) {
            this.blocks = Objects.requireNonNull(order, "order");
            return this;
        }

        /**
         * Adds twins to register in the runtime's own table (simulator only; ignored on CUDA,
         * which runs the real kernels).
         *
         * @param more the application's twins
         * @return this
         */
        public Builder twins(Twins... more) {
            for (Twins t : more) {
                twins.add(Objects.requireNonNull(t, "twins"));
            }
            return this;
        }

        /**
         * Uses {@code table} as the runtime's twin table instead of a fresh one, so the caller can
         * register more twins after the runtime is open.
         *
         * @param table the table; {@link #twins(Twins...)} registers into it too
         * @return this
         */
        public Builder twinTable(SimTwins table) {
            this.table = Objects.requireNonNull(table, "table");
            return this;
        }

        /**
         * Chooses what {@code Gpu.alloc} uses, as {@link GpuBuilder#allocator(String)} does; the
         * runtime's default (the caching pool) when not called.
         *
         * @param name {@code caching}, {@code driver} or {@code cuda}
         * @return this
         */
        public Builder allocator(String name) {
            this.allocator = Objects.requireNonNull(name, "allocator");
            return this;
        }

        /** {@return the backend this builder opens} */
        public Backend backend() {
            return backend;
        }

        /**
         * Opens the runtime, with every allocation's and resource's site walked
         * ({@link LeakDetection#ALL}, so each leak names its line) and a quarantine of
         * {@link metrale.gpu.GpuOptions#DEFAULT_QUARANTINE_BYTES} bytes whatever the red zone. Its frees read the freed buffer's red zone back (the
         * runtime's own scan at free), so {@link GpuChecks} also reports overflows of buffers freed
         * before the check; a {@code close} through it runs the checks first, so a test that closes
         * its runtime itself still gets the report.
         *
         * @return a new runtime, owned by the caller
         * @throws metrale.gpu.GpuException if the backend cannot be opened, naming why
         * @throws IllegalArgumentException if a simulator-only option is set for CUDA
         */
        public Gpu open() {
            GpuBuilder b = Gpu.builder().backend(backend.id()).redZoneBytes(redZoneBytes).redZoneMinIndex(0)
                    .leakDetection(LeakDetection.ALL)
                    .quarantineBytes(metrale.gpu.GpuOptions.DEFAULT_QUARANTINE_BYTES);
            if (allocator != null) {
                b.allocator(allocator);
            }
            if (backend == Backend.SIM) {
                SimTwins t = table != null ? table : new SimTwins();
                for (Twins w : twins) {
                    w.register(t);
                }
                b.backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
                b.backendOption(SimOptions.TWINS, (Object) t);
                b.backendOption(SimOptions.SEED, Long.toString(seed));
                b.backendOption(SimOptions.BLOCKS, blocks.name().toLowerCase(Locale.ROOT));
                if (twinMode != metrale.gpu.sim.SimTwinMode.PREFER) {
                    b.backendOption(SimOptions.TWINS, twinMode.option());
                }
                if (capacity > 0) {
                    b.backendOption(SimOptions.CAPACITY, Long.toString(capacity));
                }
                b.backendOption(SimInitCheck.OPT_INITCHECK, Boolean.toString(initCheck));
            } else if (capacity > 0 || initCheck) {
                throw new IllegalArgumentException("capacity and initCheck are simulator options; " + backend + " has neither");
            }
            return CheckedGpu.wrap(b.open());
        }
    }
}
