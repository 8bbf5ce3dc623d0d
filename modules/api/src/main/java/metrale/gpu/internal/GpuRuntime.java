package metrale.gpu.internal;

import metrale.gpu.Gpu;
import metrale.gpu.GpuOptions;

/** The runtime core over a {@link metrale.gpu.spi.Driver}. */
public final class GpuRuntime {

    private GpuRuntime() {
    }

    /**
     * Opens a runtime with the given options.
     *
     * @param options the options
     * @return the runtime
     */
    public static Gpu open(GpuOptions options) {
        throw new IllegalStateException("runtime core not yet built");
    }
}
