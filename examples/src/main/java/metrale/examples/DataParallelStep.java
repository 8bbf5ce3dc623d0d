// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.nccl.Collectives;
import metrale.gpu.nccl.Communicator;
import metrale.gpu.nccl.NcclDataType;
import metrale.gpu.nccl.NcclRedOp;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimOptions;

/**
 * Data-parallel training steps of a linear model: each device holds a shard of the rows,
 * computes its partial gradient ({@code grad_linear}), the partial gradients are summed with an
 * all-reduce, and every device applies the same SGD update ({@code sgd_update}), so the replicas
 * of the weights stay equal. The result is checked against the same steps in plain Java.
 *
 * <p>{@code java ... metrale.examples.DataParallelStep [--backend sim|cuda] [--devices N] [--steps S]}:
 * the simulator with 4 devices by default; on CUDA every GPU of the machine.
 */
public final class DataParallelStep {

    /** The module name the PTX is loaded under. */
    public static final String MODULE = "dataparallel";
    private static final int THREADS = 128;

    private DataParallelStep() {
    }

    /**
     * The outcome of a run.
     *
     * @param devices   the ranks
     * @param weights   the weights after the last step, from rank 0
     * @param reference the weights plain Java computes
     * @param maxError  the largest absolute difference between the replicas and the reference
     */
    public record Result(int devices, float[] weights, float[] reference, double maxError) {
    }

    /** Registers the Java twins of the two kernels, for the simulator. */
    public static void registerTwins() {
        SimKernels.register(MODULE, "grad_linear", l -> {
            FloatView x = l.floats(0);
            FloatView y = l.floats(1);
            FloatView w = l.floats(2);
            FloatView g = l.floats(3);
            int m = l.i32(4);
            int d = l.i32(5);
            float scale = l.f32(6);
            l.forEachThread(t -> {
                int j = t.globalX();
                if (j < d) {
                    g.set(j, scale * partial(x::get, y::get, w::get, m, d, j));
                }
            });
        });
        SimKernels.register(MODULE, "sgd_update", l -> {
            FloatView w = l.floats(0);
            FloatView g = l.floats(1);
            float lr = l.f32(2);
            int d = l.i32(3);
            l.forEachThread(t -> {
                int j = t.globalX();
                if (j < d) {
                    w.set(j, w.get(j) - lr * g.get(j));
                }
            });
        });
    }

    /** An indexed float source, so the kernel's loop is written once for the twin and the reference. */
    private interface Floats {
        float get(int i);
    }

    /** The unscaled gradient of feature {@code j} over {@code m} rows, summed in row order as the kernel does. */
    private static float partial(Floats x, Floats y, Floats w, int m, int d, int j) {
        float acc = 0.0f;
        for (int i = 0; i < m; i++) {
            float r = 0.0f;
            for (int k = 0; k < d; k++) {
                r = r + x.get(i * d + k) * w.get(k);
            }
            r = r - y.get(i);
            acc = acc + x.get(i * d + j) * r;
        }
        return acc;
    }

    private static byte[] ptx() {
        try (InputStream in = DataParallelStep.class.getResourceAsStream("dataparallel.ptx")) {
            if (in == null) {
                throw new UncheckedIOException(new IOException("resource metrale/examples/dataparallel.ptx is missing"));
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deterministic data: {@code y = X * wTrue} plus a small offset per row. */
    private static float[][] data(int rows, int d) {
        float[] x = new float[rows * d];
        float[] y = new float[rows];
        for (int i = 0; i < rows; i++) {
            float s = 0;
            for (int k = 0; k < d; k++) {
                float v = ((i * 7 + k * 3) % 11 - 5) / 8.0f;
                x[i * d + k] = v;
                s += v * (k % 3 - 1);
            }
            y[i] = s + (i % 5) / 16.0f;
        }
        return new float[][] {x, y};
    }

    /**
     * The same steps in plain Java: the full-batch gradient as the sum of the shards' partial
     * gradients (each scaled like the kernel), in rank order.
     */
    static float[] reference(float[] x, float[] y, int rows, int d, int devices, int steps, float lr) {
        int m = rows / devices;
        float scale = 1.0f / rows;
        float[] w = new float[d];
        for (int s = 0; s < steps; s++) {
            float[] g = new float[d];
            for (int r = 0; r < devices; r++) {
                int off = r * m;
                float[] wc = w;
                for (int j = 0; j < d; j++) {
                    g[j] += scale * partial(i -> x[off * d + i], i -> y[off + i], i -> wc[i], m, d, j);
                }
            }
            for (int j = 0; j < d; j++) {
                w[j] = w[j] - lr * g[j];
            }
        }
        return w;
    }

    /**
     * Runs {@code steps} data-parallel steps.
     *
     * @param builders one builder per rank (its device chosen)
     * @param rowsPerDevice rows in each shard
     * @param d        features
     * @param steps    SGD steps
     * @param lr       the learning rate
     * @return the weights and how far they are from the reference
     */
    public static Result run(List<GpuBuilder> builders, int rowsPerDevice, int d, int steps, float lr) {
        int n = builders.size();
        int rows = rowsPerDevice * n;
        float[][] xy = data(rows, d);
        List<Gpu> gpus = new ArrayList<>();
        try {
            byte[] ptx = ptx();
            for (GpuBuilder b : builders) {
                Gpu g = b.open();
                gpus.add(g);
                g.loadModule(MODULE, ptx);
            }
            List<Communicator> comms = Collectives.initAll(gpus);
            DevicePtr[] x = new DevicePtr[n];
            DevicePtr[] y = new DevicePtr[n];
            DevicePtr[] w = new DevicePtr[n];
            DevicePtr[] grad = new DevicePtr[n];
            Stream[] s = new Stream[n];
            KernelHandle[] gradK = new KernelHandle[n];
            KernelHandle[] updK = new KernelHandle[n];
            for (int r = 0; r < n; r++) {
                Gpu g = gpus.get(r);
                x[r] = g.alloc(4L * rowsPerDevice * d);
                y[r] = g.alloc(4L * rowsPerDevice);
                w[r] = g.alloc(4L * d);
                grad[r] = g.alloc(4L * d);
                g.copyH2D(java.util.Arrays.copyOfRange(xy[0], r * rowsPerDevice * d, (r + 1) * rowsPerDevice * d), x[r]);
                g.copyH2D(java.util.Arrays.copyOfRange(xy[1], r * rowsPerDevice, (r + 1) * rowsPerDevice), y[r]);
                g.memset(w[r], 0, 4L * d);
                s[r] = g.createStream();
                gradK[r] = g.kernel(MODULE, "grad_linear");
                updK[r] = g.kernel(MODULE, "sgd_update");
            }
            LaunchConfig cfg = LaunchConfig.forElements(d, THREADS);
            try (KernelArgs args = new KernelArgs()) {
                for (int step = 0; step < steps; step++) {
                    for (int r = 0; r < n; r++) {
                        gpus.get(r).launch(gradK[r], cfg, s[r], args.clear().ptr(x[r]).ptr(y[r]).ptr(w[r]).ptr(grad[r])
                                .i32(rowsPerDevice).i32(d).f32(1.0f / rows));
                    }
                    Collectives.groupStart();
                    for (Communicator c : comms) {
                        int r = c.rank();
                        c.allReduce(grad[r], grad[r], d, NcclDataType.FLOAT32, NcclRedOp.SUM, s[r]);
                    }
                    Collectives.groupEnd();
                    for (int r = 0; r < n; r++) {
                        gpus.get(r).launch(updK[r], cfg, s[r], args.clear().ptr(w[r]).ptr(grad[r]).f32(lr).i32(d));
                    }
                }
            }
            float[] ref = reference(xy[0], xy[1], rows, d, n, steps, lr);
            float[] w0 = null;
            double err = 0;
            for (int r = 0; r < n; r++) {
                Gpu g = gpus.get(r);
                g.synchronize(s[r]);
                float[] out = new float[d];
                g.copyD2H(w[r], out);
                if (r == 0) {
                    w0 = out;
                }
                for (int j = 0; j < d; j++) {
                    err = Math.max(err, Math.abs(out[j] - ref[j]));
                }
                g.destroyStream(s[r]);
                g.free(x[r]);
                g.free(y[r]);
                g.free(w[r]);
                g.free(grad[r]);
            }
            for (Communicator c : comms) {
                c.close();
            }
            return new Result(n, w0, ref, err);
        } finally {
            for (Gpu g : gpus.reversed()) {
                g.close();
            }
        }
    }

    /**
     * {@return one builder per device: {@code devices} simulated devices in one simulated process,
     * or every CUDA GPU}
     *
     * @param backend {@code sim} or {@code cuda}
     * @param devices the simulated device count (ignored on CUDA)
     */
    public static List<GpuBuilder> builders(String backend, int devices) {
        List<GpuBuilder> out = new ArrayList<>();
        if (backend.equals("sim")) {
            registerTwins();
            String process = SimOptions.PROCESS_NAMED + "dataparallel-" + System.nanoTime();
            for (int i = 0; i < devices; i++) {
                out.add(Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, process)
                        .backendOption(SimOptions.DEVICES, Integer.toString(devices)).device(i));
            }
        } else {
            int n = Gpu.builder().backend(backend).devices().size();
            for (int i = 0; i < n; i++) {
                out.add(Gpu.builder().backend(backend).device(i));
            }
        }
        return out;
    }

    /**
     * Runs the example and prints the result.
     *
     * @param argv {@code --backend sim|cuda}, {@code --devices N}, {@code --steps S}
     */
    public static void main(String[] argv) {
        String backend = "sim";
        int devices = 4;
        int steps = 20;
        for (int i = 0; i + 1 < argv.length; i += 2) {
            switch (argv[i]) {
                case "--backend" -> backend = argv[i + 1];
                case "--devices" -> devices = Integer.parseInt(argv[i + 1]);
                case "--steps" -> steps = Integer.parseInt(argv[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + argv[i]);
            }
        }
        Result r = run(builders(backend, devices), 64, 16, steps, 0.5f);
        System.out.printf("data-parallel SGD on %d %s device(s), %d steps: max |w - w_java| = %.3g%n",
                r.devices(), backend, steps, r.maxError());
        if (!(r.maxError() <= 1e-4)) {
            System.out.println("MISMATCH against plain Java");
            System.exit(1);
        }
        System.out.println("OK: matches plain Java");
    }
}
