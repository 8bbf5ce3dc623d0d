package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

class SimSmokeTest {

    @Test
    void saxpyRoundTrip() {
        SimKernels.register("smoke", "saxpy", l -> {
            float a = l.f32(0);
            FloatView x = l.floats(1);
            FloatView y = l.floats(2);
            int n = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    y.set(i, a * x.get(i) + y.get(i));
                }
            });
        });
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); KernelArgs args = new KernelArgs()) {
            long m = dev.moduleLoadData("smoke", SimKernels.image("smoke"));
            long f = dev.moduleGetFunction(m, "saxpy");
            long x = dev.memAlloc(4 * 1000);
            long y = dev.memAlloc(4 * 1000);
            float[] xs = new float[1000];
            float[] ys = new float[1000];
            for (int i = 0; i < 1000; i++) {
                xs[i] = i;
                ys[i] = 1;
            }
            SimTestSupport.writeFloats(dev, x, xs);
            SimTestSupport.writeFloats(dev, y, ys);
            args.f32(2).ptr(x).ptr(y).i32(1000);
            dev.launchKernel(f, LaunchConfig.forElements(1000, 256), 0, args);
            float[] out = SimTestSupport.readFloats(dev, y, 1000);
            assertThat(out[999]).isEqualTo(2 * 999 + 1);
            assertThat(out[0]).isEqualTo(1);
        }
    }
}
