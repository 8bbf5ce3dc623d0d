// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimTwins;

/** Kernels of the kit's own tests, as simulator twins of module {@value #MODULE}. */
public final class KitKernels implements Twins {

    /** The module's load name. */
    public static final String MODULE = "kit";

    @Override
    public void register(SimTwins twins) {
        // fill(float* out, int n, float v)
        twins.register(MODULE, "fill", l -> {
            FloatView out = l.floats(0);
            int n = l.i32(1);
            float v = l.f32(2);
            l.forEachThread(t -> {
                if (t.globalX() < n) {
                    out.set(t.globalX(), v);
                }
            });
        });
        // overflow(float* out, int n): writes four floats past out[n - 1], the off-by-four bug.
        twins.register(MODULE, "overflow", l -> {
            FloatView out = l.floats(0);
            int n = l.i32(1);
            l.forEachThread(t -> {
                if (t.globalX() < n + 4) {
                    out.set(t.globalX(), 1f);
                }
            });
        });
        // copy(const float* in, float* out, int n)
        twins.register(MODULE, "copy", l -> {
            FloatView in = l.floats(0);
            FloatView out = l.floats(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                if (t.globalX() < n) {
                    out.set(t.globalX(), in.get(t.globalX()));
                }
            });
        });
    }

    /** Creates the twins; {@code @GpuTest(twins = KitKernels.class)} does this. */
    public KitKernels() {
    }

    /** Loads module {@value #MODULE} into {@code gpu}. */
    public static void load(Gpu gpu) {
        gpu.loadModule(MODULE, SimKernels.image(MODULE));
    }

    /** Launches {@code func(ptr, n, ...)} over {@code n + 4} threads on the legacy default stream. */
    public static void launch(Gpu gpu, String func, KernelArgs args, int n) {
        gpu.launch(gpu.kernel(MODULE, func), LaunchConfig.forElements(n + 4L, 64), Stream.DEFAULT, args);
    }

    /** Fills {@code n} floats at {@code p} with {@code v}. */
    public static void fill(Gpu gpu, DevicePtr p, int n, float v) {
        try (KernelArgs a = new KernelArgs()) {
            launch(gpu, "fill", a.ptr(p).i32(n).f32(v), n);
        }
    }

    /** {@return the line of the caller, to name a call site in an expected message} */
    public static int line() {
        return StackWalker.getInstance().walk(s -> s.skip(1).findFirst().orElseThrow().getLineNumber());
    }
}
