package metrale.bench.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;

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
}
