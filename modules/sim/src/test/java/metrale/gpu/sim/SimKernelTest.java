package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

/** The kernel model: thread indices, block phases, shared memory, argument decoding. */
class SimKernelTest {

    static {
        SimKernels.register("k", "ids", l -> {
            IntView out = l.ints(0);
            int w = l.i32(1);
            int h = l.i32(2);
            l.forEachThread(t -> {
                int x = t.globalX();
                int y = t.globalY();
                int z = t.globalZ();
                if (x < w && y < h) {
                    out.set((long) z * w * h + (long) y * w + x, (x + 1) * 10000 + (y + 1) * 100 + (z + 1));
                }
            });
        });
        SimKernels.register("k", "sharedFresh", l -> {
            IntView out = l.ints(0);
            l.forEachBlock(b -> {
                IntView sh = b.sharedInts();
                b.forEachThread(t -> {
                    if (t.threadX() == 0) {
                        out.set(b.blockX(), sh.get(0));
                        sh.set(0, 99);
                    }
                });
            });
        });
        SimKernels.register("k", "sharedOob", l -> l.forEachBlock(b -> b.sharedFloats().set(b.sharedFloats().length(), 1f)));
        SimKernels.register("k", "args", l -> {
            LongView out = l.longs(0);
            out.set(0, l.i64(1));
            out.set(1, Double.doubleToLongBits(l.f64(2)));
            out.set(2, Float.floatToIntBits(l.f32(3)));
            byte[] b = l.bytes(4);
            out.set(3, b.length * 1000L + b[0] + b[b.length - 1]);
            out.set(4, l.argCount());
            out.set(5, l.name().length());
        });
    }

    @Test
    void threadIndicesCoverA3dGrid() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); KernelArgs args = new KernelArgs()) {
            int w = 37;
            int h = 11;
            int d = 3;
            long out = dev.memAlloc(4L * w * h * d);
            long f = dev.moduleGetFunction(dev.moduleLoadData("k", SimKernels.image("k")), "ids");
            args.ptr(out).i32(w).i32(h);
            dev.launchKernel(f, LaunchConfig.of(Dim3.of(5, 3, 3), Dim3.of(8, 4, 1)), 0, args);
            int[] got = SimTestSupport.readInts(dev, out, w * h * d);
            for (int z = 0; z < d; z++) {
                for (int y = 0; y < h; y++) {
                    for (int x = 0; x < w; x++) {
                        assertThat(got[z * w * h + y * w + x]).isEqualTo((x + 1) * 10000 + (y + 1) * 100 + (z + 1));
                    }
                }
            }
        }
    }

    @Test
    void aSharedMemoryBlockReductionSumsEachBlock() {
        try (Fixture fx = new Fixture(); KernelArgs args = new KernelArgs()) {
            int n = 1000;
            int block = 128;
            int blocks = (n + block - 1) / block;
            float[] in = new float[n];
            for (int i = 0; i < n; i++) {
                in[i] = i;
            }
            long pin = fx.dev.memAlloc(4L * n);
            long pout = fx.dev.memAlloc(4L * blocks);
            SimTestSupport.writeFloats(fx.dev, pin, in);
            args.ptr(pin).ptr(pout).i32(n);
            fx.dev.launchKernel(fx.f("blockSum"), LaunchConfig.of(blocks, block).withSharedMem(4 * block), 0, args);
            float[] sums = SimTestSupport.readFloats(fx.dev, pout, blocks);
            for (int b = 0; b < blocks; b++) {
                float expected = 0;
                for (int i = b * block; i < Math.min(n, (b + 1) * block); i++) {
                    expected += i;
                }
                assertThat(sums[b]).as("block %d", b).isEqualTo(expected);
            }
        }
    }

    @Test
    void sharedMemoryIsZeroedForEachBlock() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); KernelArgs args = new KernelArgs()) {
            long out = dev.memAlloc(4 * 4);
            long f = dev.moduleGetFunction(dev.moduleLoadData("k", SimKernels.image("k")), "sharedFresh");
            args.ptr(out);
            dev.launchKernel(f, LaunchConfig.of(4, 2).withSharedMem(16), 0, args);
            assertThat(SimTestSupport.readInts(dev, out, 4)).containsOnly(0);
        }
    }

    @Test
    void aSharedMemoryAccessPastItsEndIsAnIllegalAddress() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); KernelArgs args = new KernelArgs()) {
            long f = dev.moduleGetFunction(dev.moduleLoadData("k", SimKernels.image("k")), "sharedOob");
            dev.launchKernel(f, LaunchConfig.of(1, 1).withSharedMem(64), 0, args);
            fails(CudaError.ILLEGAL_ADDRESS, dev::ctxSynchronize)
                    .hasMessageContaining("k::sharedOob").hasMessageContaining("dynamic shared memory")
                    .hasMessageContaining("write of float [16]");
        }
    }

    @Test
    void argumentsDecodeAsTheyWereSnapshottedAtEnqueue() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); KernelArgs args = new KernelArgs()) {
            long out = dev.memAlloc(8 * 6);
            long f = dev.moduleGetFunction(dev.moduleLoadData("k", SimKernels.image("k")), "args");
            byte[] struct = new byte[12];
            struct[0] = 3;
            struct[11] = 4;
            args.ptr(out).i64(-5L).f64(2.5).f32(1.5f).bytes(struct);
            dev.launchKernel(f, LaunchConfig.of(1, 1), 0, args);
            args.clear().ptr(0).i64(0).f64(0).f32(0).bytes(new byte[12]);
            dev.ctxSynchronize();
            MemorySegment host = MemorySegment.ofArray(new long[6]);
            dev.memcpyDtoH(host, out, 48);
            long[] got = host.toArray(ValueLayout.JAVA_LONG);
            assertThat(got[0]).isEqualTo(-5L);
            assertThat(Double.longBitsToDouble(got[1])).isEqualTo(2.5);
            assertThat(Float.intBitsToFloat((int) got[2])).isEqualTo(1.5f);
            assertThat(got[3]).isEqualTo(12007L);
            assertThat(got[4]).isEqualTo(5);
            assertThat(got[5]).isEqualTo("k::args".length());
        }
    }
}
