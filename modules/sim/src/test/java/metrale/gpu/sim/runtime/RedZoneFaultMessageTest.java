// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.regex.Pattern;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A fault past a buffer with a red zone: the simulator sizes the driver's allocation (buffer and
 * pad), the ledger the buffer; the message says how the two sizes make one buffer.
 */
class RedZoneFaultMessageTest {

    private static final String MODULE = "rt_rzmsg";

    @BeforeAll
    static void kernels() {
        // Stores float element i (an i64) of buffer 0.
        SimKernels.register(MODULE, "poke", l -> {
            FloatView v = l.floats(0);
            long i = l.i64(1);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    v.set(i, 1f);
                }
            });
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "poke");
    }

    @Test
    void theNearestAllocationNamesItsRedZoneAndTheDriversSize() {
        try (Gpu gpu = sim().redZoneBytes(256).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(400);
            // Element 200 is byte 800: past the 400-byte buffer and its 256-byte pad, outside the driver's allocation.
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().ptr(p).i64(200));
            GpuException e = catchThrowableOfType(GpuException.class, () -> gpu.synchronize(Stream.DEFAULT));
            assertThat(e).isNotNull();
            assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
            assertThat(e.getMessage()).contains("nearest allocation to", p + " (400 B",
                    "(with its 256-byte red zone, the driver allocation of +656 bytes), 400 byte(s) past its end");
            assertThat(Pattern.compile("\\+(\\d+) bytes").matcher(e.getMessage()).results().map(m -> m.group(1)).distinct())
                    .as("every driver-allocation size in: " + e.getMessage()).containsOnly("656");
        }
    }
}
