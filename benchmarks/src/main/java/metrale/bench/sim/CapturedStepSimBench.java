// SPDX-License-Identifier: Apache-2.0
package metrale.bench.sim;

import java.util.concurrent.TimeUnit;
import metrale.bench.cuda.CapturedStepBench;
import metrale.bench.cuda.CudaFixture;
import metrale.gpu.Gpu;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;

/**
 * {@link CapturedStepBench} on the simulator, for a machine without a GPU: the same five variants
 * and counters, so a change to the step's host path shows before a GPU run. Its nanoseconds are
 * the runtime's Java cost plus the simulator's driver calls (a graph launch runs the kernels' Java
 * twins), not CUDA's: the targets are judged on the GPU.
 *
 * <p>Run: {@code java -jar benchmarks.jar CapturedStepSimBench}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class CapturedStepSimBench extends CapturedStepBench {

    static {
        SimKernels.register(CudaFixture.MODULE, "axpy4", l -> {
            float a = l.f32(0);
            FloatView x = l.floats(1);
            FloatView y = l.floats(2);
            int n = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    // The PTX is one fma.rn.f32 (nvcc contracts a * x + y): one rounding, as Math.fma.
                    y.set(i, Math.fma(a, x.get(i), y.get(i)));
                }
            });
        });
    }

    /** Creates the state; JMH calls it. */
    public CapturedStepSimBench() {
    }

    /** {@return the simulator with telemetry off and the benchmark kernels loaded} */
    @Override
    protected Gpu open() {
        Gpu g = CudaFixture.telemetryOff().backend("sim").open();
        g.loadModule(CudaFixture.MODULE, CudaFixture.ptx());
        return g;
    }
}
