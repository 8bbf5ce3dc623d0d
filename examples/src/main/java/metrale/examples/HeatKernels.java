// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimLaunch;
import metrale.gpu.sim.SimTwins;

/**
 * The demo's kernels: their names, launch shapes, the PTX built from
 * {@code examples/src/main/cuda/heat.cu}, and the Java twins the simulator runs in their place.
 *
 * <p>Each twin computes exactly what its CUDA C function computes, line for line; the simulator
 * checks that the PTX a module is loaded from declares an {@code .entry} of every function looked
 * up, so a twin cannot silently outlive a renamed kernel.
 */
public final class HeatKernels {

    /** The module name the PTX is loaded under and the twins are registered for. */
    public static final String MODULE = "heat";
    /** {@code jacobi_step(const float* in, float* out, int n, float alpha)}. */
    public static final String JACOBI = "jacobi_step";
    /** {@code residual_reduce(const float* a, const float* b, float* partial, int n)}. */
    public static final String RESIDUAL = "residual_reduce";
    /** {@code fill(float* out, int count, float value)}. */
    public static final String FILL = "fill";

    /** {@code jacobi_step} runs in {@code TILE x TILE} blocks. */
    public static final int TILE = 16;
    /** Threads per {@code residual_reduce} block: a power of two, as its tree halves it. */
    public static final int REDUCE_THREADS = 256;

    private static final String PTX_RESOURCE = "heat.ptx";

    private HeatKernels() {
    }

    /**
     * {@return the PTX of {@code heat.cu}, kept as the resource {@code metrale/examples/heat.ptx}}
     *
     * @throws UncheckedIOException if the resource cannot be read
     */
    public static byte[] ptx() {
        try (InputStream in = HeatKernels.class.getResourceAsStream(PTX_RESOURCE)) {
            if (in == null) {
                throw new UncheckedIOException(new IOException("resource metrale/examples/" + PTX_RESOURCE
                        + " is missing from the metrale.examples module (run examples/src/main/cuda/build.sh)"));
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("reading metrale/examples/" + PTX_RESOURCE, e);
        }
    }

    /** Registers the Java twins of the three kernels for module {@value #MODULE}, replacing any earlier ones. */
    public static void registerTwins() {
        SimKernels.register(MODULE, JACOBI, HeatKernels::jacobiStep);
        SimKernels.register(MODULE, RESIDUAL, HeatKernels::residualReduce);
        SimKernels.register(MODULE, FILL, HeatKernels::fill);
    }

    /**
     * Registers the Java twins of the three kernels in {@code twins}, a table of one runtime's own
     * (tests that run in parallel give each runtime one).
     *
     * @param twins the runtime's table, passed with {@code GpuBuilder.backendOption(SimOptions.TWINS, twins)}
     */
    static void registerTwins(SimTwins twins) {
        twins.register(MODULE, JACOBI, HeatKernels::jacobiStep)
                .register(MODULE, RESIDUAL, HeatKernels::residualReduce)
                .register(MODULE, FILL, HeatKernels::fill);
    }

    /** Removes the twins {@link #registerTwins()} registered. */
    public static void unregisterTwins() {
        SimKernels.unregister(MODULE, JACOBI);
        SimKernels.unregister(MODULE, RESIDUAL);
        SimKernels.unregister(MODULE, FILL);
    }

    /**
     * {@return the number of {@code residual_reduce} blocks for {@code cells} values} Each thread
     * folds at least four values before the tree; at most 1024 blocks, so the host reads at most
     * 4 KiB of partials.
     *
     * @param cells the number of values compared
     */
    public static int reduceBlocks(long cells) {
        long perBlock = 4L * REDUCE_THREADS;
        return (int) Math.max(1, Math.min(1024, (cells + perBlock - 1) / perBlock));
    }

    /** The twin of {@code jacobi_step}: one thread per cell, boundary copied through. */
    private static void jacobiStep(SimLaunch l) {
        FloatView in = l.floats(0);
        FloatView out = l.floats(1);
        int n = l.i32(2);
        float alpha = l.f32(3);
        l.forEachThread(t -> {
            int j = t.globalX();
            int i = t.globalY();
            if (i >= n || j >= n) {
                return;
            }
            int c = i * n + j;
            if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
                out.set(c, in.get(c));
                return;
            }
            float centre = in.get(c);
            float sum = ((in.get(c - n) + in.get(c + n)) + in.get(c - 1)) + in.get(c + 1);
            float lap = sum + -(4.0f * centre);
            out.set(c, centre + alpha * lap);
        });
    }

    /**
     * The twin of {@code residual_reduce}. Each {@code forEachThread} of a block is one phase;
     * consecutive phases are separated by {@code __syncthreads()}, as in the CUDA C.
     */
    private static void residualReduce(SimLaunch l) {
        FloatView a = l.floats(0);
        FloatView b = l.floats(1);
        FloatView partial = l.floats(2);
        int n = l.i32(3);
        int threads = l.block().x();
        int gridStride = l.grid().x() * threads;
        l.forEachBlock(blk -> {
            FloatView s = blk.sharedFloats();
            blk.forEachThread(t -> {
                float m = 0.0f;
                for (int k = t.blockX() * threads + t.threadX(); k < n; k += gridStride) {
                    m = fmaxf(m, Math.abs(a.get(k) - b.get(k)));
                }
                s.set(t.threadX(), m);
            });
            for (int stride = threads / 2; stride > 0; stride >>= 1) {
                int half = stride;
                blk.forEachThread(t -> {
                    int tid = t.threadX();
                    if (tid < half) {
                        s.set(tid, fmaxf(s.get(tid), s.get(tid + half)));
                    }
                });
            }
            blk.forEachThread(t -> {
                if (t.threadX() == 0) {
                    partial.set(blk.blockX(), s.get(0));
                }
            });
        });
    }

    /** CUDA's {@code fmaxf}: a NaN operand yields the other one, where {@link Math#max} would yield NaN. */
    static float fmaxf(float x, float y) {
        if (Float.isNaN(x)) {
            return y;
        }
        if (Float.isNaN(y)) {
            return x;
        }
        return Math.max(x, y);
    }

    /** The twin of {@code fill}. */
    private static void fill(SimLaunch l) {
        FloatView out = l.floats(0);
        int count = l.i32(1);
        float value = l.f32(2);
        l.forEachThread(t -> {
            int k = t.globalX();
            if (k < count) {
                out.set(k, value);
            }
        });
    }
}
