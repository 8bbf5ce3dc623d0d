// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;

/** What every CUDA benchmark's setup does first: find the CUDA backend, open it, load the benchmark kernels. */
public final class CudaFixture {

    /** The module name {@value} the benchmark PTX ({@code bench.cu}) is loaded under. */
    public static final String MODULE = "bench";

    /** The classpath resource of the benchmark PTX. */
    public static final String PTX_RESOURCE = "/metrale/bench/bench.ptx";

    private CudaFixture() {
    }

    /**
     * {@return why the CUDA backend cannot open here, or {@code null} if it can}
     */
    public static String unavailableReason() {
        for (Gpu.BackendInfo b : Gpu.backends()) {
            if (b.name().equals("cuda")) {
                return b.available() ? null : b.reason();
            }
        }
        return "the CUDA backend (metrale.gpu.cuda) is not on the class path";
    }

    /**
     * {@return options with the telemetry that costs time on every call off: no kernel timing, no
     * debug sync, no red zones}
     */
    public static GpuBuilder telemetryOff() {
        return Gpu.builder().timing(false).debugSync(false).redZoneBytes(0);
    }

    /**
     * Opens the CUDA backend with {@code builder}'s options and loads the benchmark kernels.
     *
     * @param builder the options (its backend is set to {@code cuda})
     * @return the runtime
     * @throws CudaUnavailableException if there is no usable CUDA driver or device
     */
    public static Gpu open(GpuBuilder builder) {
        String why = unavailableReason();
        if (why != null) {
            throw new CudaUnavailableException(why);
        }
        Gpu gpu = builder.backend("cuda").open();
        try {
            gpu.loadModule(MODULE, ptx());
            gpu.bindToThread();
        } catch (RuntimeException | Error e) {
            gpu.close();
            throw e;
        }
        return gpu;
    }

    /** {@return the benchmark PTX; the simulator benchmark loads it too, so its twins must match its entries} */
    public static byte[] ptx() {
        try (InputStream in = CudaFixture.class.getResourceAsStream(PTX_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(PTX_RESOURCE + " is missing from the benchmarks jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Captures {@code launches} launches of {@code fn} on {@code stream} through the runtime.
     *
     * @param gpu      the runtime
     * @param fn       the kernel
     * @param config   grid, block and shared memory
     * @param stream   the stream to capture
     * @param args     the arguments
     * @param launches how many launches the graph holds
     * @return the instantiated graph
     */
    public static GraphHandle captureChain(Gpu gpu, KernelHandle fn, LaunchConfig config, Stream stream,
                                           KernelArgs args, int launches) {
        gpu.beginCapture(stream);
        for (int i = 0; i < launches; i++) {
            gpu.launch(fn, config, stream, args);
        }
        return gpu.endCapture(stream);
    }

    /**
     * Captures the same chain as {@link #captureChain} through the bare binding alone, so the
     * baseline's graph touches no runtime code.
     *
     * @param func     the bare {@code CUfunction}, from {@link BareKernels#function}
     * @param config   grid, block and shared memory
     * @param st       the bare {@code CUstream}, from {@link BareKernels#stream}
     * @param args     the arguments
     * @param launches how many launches the graph holds
     * @return {@code {CUgraph, CUgraphExec}}, for {@link Bare#destroyGraph}
     */
    public static long[] captureBareChain(long func, LaunchConfig config, long st, KernelArgs args, int launches) {
        Dim3 g = config.grid();
        Dim3 b = config.block();
        int smem = config.sharedMemBytes();
        MemorySegment table = args.table();
        return Bare.capture(st, () -> {
            for (int i = 0; i < launches; i++) {
                Bare.launchKernel(func, g.x(), g.y(), g.z(), b.x(), b.y(), b.z(), smem, st, table);
            }
        });
    }

    /**
     * The baseline's own module and stream, made by bare downcalls in the context the runtime made
     * current: the runtime's handles are opaque values, not driver handles, so the baseline never
     * borrows them.
     */
    public static final class BareKernels implements AutoCloseable {
        private final long module;
        private final long stream;

        private BareKernels(long module, long stream) {
            this.module = module;
            this.stream = stream;
        }

        /**
         * Loads the benchmark PTX and creates a non-blocking stream; the runtime's context must be
         * current on the calling thread ({@link #open} binds it).
         *
         * @return the bare module and stream
         */
        public static BareKernels load() {
            long m = Bare.moduleLoad(ptx());
            return new BareKernels(m, Bare.streamCreate(1));
        }

        /**
         * {@return the bare {@code CUfunction} of a benchmark kernel}
         *
         * @param name the kernel's entry name in {@code bench.cu}
         */
        public long function(String name) {
            return Bare.moduleGetFunction(module, name);
        }

        /** {@return the bare non-blocking {@code CUstream}} */
        public long stream() {
            return stream;
        }

        /** Destroys the stream (after draining it) and unloads the module. */
        @Override
        public void close() {
            Bare.streamSynchronize(stream);
            Bare.streamDestroy(stream);
            Bare.moduleUnload(module);
        }
    }
}
