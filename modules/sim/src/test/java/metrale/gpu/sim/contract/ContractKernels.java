// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.contract;

import metrale.gpu.contract.GpuContract;
import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.IntView;
import metrale.gpu.sim.SimKernels;

/**
 * The simulator's twins of the kernels in {@code contract.cu} (the contract suite's test kernels,
 * resources of the contract module). Each twin does what its CUDA kernel does, thread for
 * thread; the simulator also checks that each function is an {@code .entry} of the PTX it loads.
 */
public final class ContractKernels {

    private ContractKernels() {
    }

    /**
     * Registers every twin under each module name the contract suite loads the PTX as
     * ({@link GpuContract#MODULE} and {@link GpuContract#SECOND_MODULE}). Idempotent.
     */
    public static void register() {
        register(GpuContract.MODULE);
        register(GpuContract.SECOND_MODULE);
    }

    /**
     * Registers every twin under {@code module}.
     *
     * @param module the name the PTX is loaded as
     */
    public static void register(String module) {
        // fill_f32(float* p, float v, int n)
        SimKernels.register(module, "fill_f32", l -> {
            FloatView p = l.floats(0);
            float v = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    p.set(i, v);
                }
            });
        });
        // axpy_f32(float a, const float* x, float* y, int n)
        SimKernels.register(module, "axpy_f32", l -> {
            float a = l.f32(0);
            FloatView x = l.floats(1);
            FloatView y = l.floats(2);
            int n = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    // nvcc contracts a * x[i] + y[i] into one fma.rn.f32 (-fmad=true): one rounding, not two.
                    y.set(i, Math.fma(x.get(i), a, y.get(i)));
                }
            });
        });
        // add_i32(int* p, int v, int n)
        SimKernels.register(module, "add_i32", l -> {
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
        // write_past(float* p, int n, int extra): p[i] = i + 1 for i < n + extra
        SimKernels.register(module, "write_past", l -> {
            FloatView p = l.floats(0);
            int limit = l.i32(1) + l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < limit) {
                    p.set(i, (float) (i + 1));
                }
            });
        });
        // store_illegal(int* p): *(int*) 0x10 = 1 from thread 0 of block 0
        SimKernels.register(module, "store_illegal", l -> l.forEachThread(t -> {
            if (t.blockX() == 0 && t.threadX() == 0) {
                l.ints(0x10L).set(0, 1);
            }
        }));
        // block_sum_f32(const float* in, float* out, int n): stage in shared memory, barrier, thread 0 sums in order
        SimKernels.register(module, "block_sum_f32", l -> {
            long in = l.ptr(0);
            FloatView out = l.floats(1);
            int n = l.i32(2);
            FloatView inView = in == 0 ? null : l.floats(0);
            l.forEachBlock(b -> {
                FloatView stage = b.sharedFloats();
                b.forEachThread(t -> {
                    int i = t.blockX() * t.blockDimX() + t.threadX();
                    stage.set(t.threadX(), i < n ? inView.get(i) : 0f);
                });
                b.forEachThread(t -> {
                    if (t.threadX() == 0) {
                        float s = 0f;
                        for (int k = 0; k < t.blockDimX(); k++) {
                            s += stage.get(k);
                        }
                        out.set(t.blockX(), s);
                    }
                });
            });
        });
        // thread_ids(int* out): out[t] = t + 1, t the thread's linear number in the grid
        SimKernels.register(module, "thread_ids", l -> {
            IntView out = l.ints(0);
            l.forEachThread(t -> {
                int block = t.blockX() + t.gridDimX() * (t.blockY() + t.gridDimY() * t.blockZ());
                int inBlock = t.threadX() + t.blockDimX() * (t.threadY() + t.blockDimY() * t.threadZ());
                int id = block * (t.blockDimX() * t.blockDimY() * t.blockDimZ()) + inBlock;
                out.set(id, id + 1);
            });
        });
        // noop()
        SimKernels.register(module, "noop", l -> {
        });
        // spin(long long ns): spins ns of the GPU's global timer; the twin takes ns of virtual time
        SimKernels.register(module, "spin", l -> l.runsFor(l.i64(0)));
    }
}
