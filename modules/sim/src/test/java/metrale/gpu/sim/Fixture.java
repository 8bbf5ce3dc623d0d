package metrale.gpu.sim;

import java.util.function.Consumer;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.DriverConfig;

/**
 * A simulated device with the test kernels of module {@code t} loaded. Kernels (ints unless named):
 * {@code fill(p, v, n)}: p[i] = v; {@code add(p, v, n)}: p[i] += v; {@code copy(dst, src, n)};
 * {@code scale(p, k, n)}: p[i] *= k; {@code oob(p, n)}: writes p[n]; {@code boom()}: throws;
 * {@code assertFalse()}: fails an assert; {@code blockSum(in, out, n)}: float block reduction in shared memory.
 */
final class Fixture implements AutoCloseable {

    static final String MODULE = "t";

    static {
        SimKernels.register(MODULE, "fill", l -> {
            IntView p = l.ints(0);
            int v = l.i32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    p.set(i, v);
                }
            });
        });
        SimKernels.register(MODULE, "add", l -> {
            IntView p = l.ints(0);
            int v = l.i32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    p.set(i, p.get(i) + v);
                }
            });
        });
        SimKernels.register(MODULE, "scale", l -> {
            IntView p = l.ints(0);
            int k = l.i32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    p.set(i, p.get(i) * k);
                }
            });
        });
        SimKernels.register(MODULE, "copy", l -> {
            IntView dst = l.ints(0);
            IntView src = l.ints(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    dst.set(i, src.get(i));
                }
            });
        });
        SimKernels.register(MODULE, "oob", l -> {
            IntView p = l.ints(0);
            int n = l.i32(1);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    p.set(n, 1);
                }
            });
        });
        SimKernels.register(MODULE, "boom", l -> {
            throw new ArithmeticException("twin threw on purpose");
        });
        SimKernels.register(MODULE, "assertFalse", l -> {
            throw new AssertionError("x > 0");
        });
        SimKernels.register(MODULE, "blockSum", l -> {
            FloatView in = l.floats(0);
            FloatView out = l.floats(1);
            int n = l.i32(2);
            l.forEachBlock(b -> {
                FloatView sh = b.sharedFloats();
                b.forEachThread(t -> {
                    int i = t.globalX();
                    sh.set(t.threadX(), i < n ? in.get(i) : 0f);
                });
                for (int stride = l.block().x() / 2; stride > 0; stride /= 2) {
                    int s = stride;
                    b.forEachThread(t -> {
                        int tid = t.threadX();
                        if (tid < s) {
                            sh.set(tid, sh.get(tid) + sh.get(tid + s));
                        }
                    });
                }
                b.forEachThread(t -> {
                    if (t.threadX() == 0) {
                        out.set(b.blockX(), sh.get(0));
                    }
                });
            });
        });
    }

    final SimDevice dev;
    final long module;
    private final KernelArgs args = new KernelArgs();

    Fixture() {
        this(DriverConfig.empty());
    }

    Fixture(DriverConfig config) {
        dev = new SimDevice(SimTestSupport.fresh(config));
        module = dev.moduleLoadData(MODULE, SimKernels.image(MODULE));
    }

    long f(String name) {
        return dev.moduleGetFunction(module, name);
    }

    /** Launches {@code t::name} with one thread per element of {@code n}, 128 per block. */
    void launch(String name, long stream, int n, Consumer<KernelArgs> fill) {
        launch(name, LaunchConfig.forElements(Math.max(n, 1), 128), stream, fill);
    }

    void launch(String name, LaunchConfig cfg, long stream, Consumer<KernelArgs> fill) {
        args.clear();
        fill.accept(args);
        dev.launchKernel(f(name), cfg, stream, args);
    }

    /** p[0..n) = v on {@code stream}. */
    void fill(long stream, long p, int v, int n) {
        launch("fill", stream, n, a -> a.ptr(p).i32(v).i32(n));
    }

    /** p[0..n) += v on {@code stream}. */
    void add(long stream, long p, int v, int n) {
        launch("add", stream, n, a -> a.ptr(p).i32(v).i32(n));
    }

    /** dst[0..n) = src[0..n) on {@code stream}. */
    void copy(long stream, long dst, long src, int n) {
        launch("copy", stream, n, a -> a.ptr(dst).ptr(src).i32(n));
    }

    /** An int buffer of n elements, set to 0 (blocking). */
    long zeros(int n) {
        long p = dev.memAlloc(4L * n);
        dev.memsetD8(p, 0, 4L * n);
        dev.ctxSynchronize();
        return p;
    }

    int[] ints(long p, int n) {
        return SimTestSupport.readInts(dev, p, n);
    }

    @Override
    public void close() {
        args.close();
        dev.close();
    }
}
