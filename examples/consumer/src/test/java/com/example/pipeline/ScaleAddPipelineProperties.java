// SPDX-License-Identifier: Apache-2.0
package com.example.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.testing.GpuArbitraries;
import metrale.gpu.testing.GpuChecks;
import metrale.gpu.testing.GpuOp;
import metrale.gpu.testing.TestGpus;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Properties of the pipeline and its kernels over sizes, schedules and op sequences. */
class ScaleAddPipelineProperties {

    @Property(tries = 60)
    void matchesTheReferenceForEverySizeAndSchedule(@ForAll("sizes") int n, @ForAll("seeds") long seed) {
        float[] x = ScaleAddPipelineTest.ramp(n, 0.25f);
        float[] y = ScaleAddPipelineTest.ramp(n, -1.5f);
        Gpu gpu = TestGpus.sim().seed(seed).initCheck(true).twins(new PipelineTwins()).open();
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            assertArrayEquals(ScaleAddPipelineTest.reference(x, y, 1.5f), p.run(x, y, 1.5f).out());
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    /** The twins and the kernels' own PTX agree byte for byte on any inputs (sim.twins=verify fails a launch that differs). */
    @Property(tries = 30)
    void theTwinsAgreeWithThePtxOnAnyInputs(@ForAll("sizes") int n, @ForAll long bits) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(bits);
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextDouble(-1e6, 1e6);
            y[i] = (float) r.nextDouble(-1e6, 1e6);
        }
        float a = (float) r.nextDouble(-100, 100);
        Gpu gpu = TestGpus.sim().twinMode(metrale.gpu.sim.SimTwinMode.VERIFY).twins(new PipelineTwins()).open();
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            assertArrayEquals(ScaleAddPipelineTest.reference(x, y, a), p.run(x, y, a).out());
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    /** Two device vectors and their host model, threaded through an op sequence. */
    static final class Vectors {
        static final int N = 300;
        final DeviceBuffer x;
        final DeviceBuffer y;
        final float[] hx = ScaleAddPipelineTest.ramp(N, 1f);
        final float[] hy = ScaleAddPipelineTest.ramp(N, 0.5f);
        final KernelArgs args = new KernelArgs();

        Vectors(Gpu gpu) {
            x = gpu.allocBuffer(4L * N).copyFrom(hx);
            y = gpu.allocBuffer(4L * N).copyFrom(hy);
        }
    }

    @Property(tries = 40)
    void opSequencesOverTheKernelsMatchTheModel(@ForAll("ops") List<GpuOp<Vectors>> ops) {
        Gpu gpu = TestGpus.sim().twins(new PipelineTwins()).open();
        try {
            gpu.loadModule(ScaleAddPipeline.MODULE, ScaleAddPipeline.ptx());
            Vectors v = new Vectors(gpu);
            try (v.args; v.x; v.y) {
                GpuOp.runAll(gpu, v, ops);
                float[] gx = new float[Vectors.N];
                float[] gy = new float[Vectors.N];
                v.x.copyTo(gx);
                v.y.copyTo(gy);
                assertArrayEquals(v.hx, gx, "x after " + ops);
                assertArrayEquals(v.hy, gy, "y after " + ops);
            }
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    @Provide
    Arbitrary<Integer> sizes() {
        return GpuArbitraries.elementCounts(3 * ScaleAddPipeline.CHUNK, ScaleAddPipeline.BLOCK);
    }

    @Provide
    Arbitrary<Long> seeds() {
        return GpuArbitraries.scheduleSeeds();
    }

    @Provide
    Arbitrary<List<GpuOp<Vectors>>> ops() {
        Arbitrary<GpuOp<Vectors>> scaleX = Arbitraries.of(-2f, 0.5f, 3f).map(a -> GpuOp.of("scale(x, " + a + ")", (gpu, v) -> {
            gpu.launch(gpu.kernel(ScaleAddPipeline.MODULE, "scale"), LaunchConfig.forElements(Vectors.N, ScaleAddPipeline.BLOCK),
                    Stream.DEFAULT, v.args.clear().ptr(v.x.ptr()).f32(a).i32(Vectors.N));
            for (int i = 0; i < Vectors.N; i++) {
                v.hx[i] = a * v.hx[i];
            }
        }));
        Arbitrary<GpuOp<Vectors>> addIntoY = Arbitraries.just(GpuOp.of("y = x + y", (gpu, v) -> {
            gpu.launch(gpu.kernel(ScaleAddPipeline.MODULE, "add"), LaunchConfig.forElements(Vectors.N, ScaleAddPipeline.BLOCK),
                    Stream.DEFAULT, v.args.clear().ptr(v.x.ptr()).ptr(v.y.ptr()).ptr(v.y.ptr()).i32(Vectors.N));
            for (int i = 0; i < Vectors.N; i++) {
                v.hy[i] = v.hx[i] + v.hy[i];
            }
        }));
        Arbitrary<GpuOp<Vectors>> copyYToX = Arbitraries.just(GpuOp.of("x = y (d2d)", (gpu, v) -> {
            gpu.copyD2D(v.y.ptr(), v.x.ptr(), 4L * Vectors.N);
            System.arraycopy(v.hy, 0, v.hx, 0, Vectors.N);
        }));
        Arbitrary<GpuOp<Vectors>> sync = Arbitraries.just(GpuOp.of("synchronize", (gpu, v) -> {
            gpu.synchronize();
            assertEquals(0, gpu.liveAllocCount() - 2, "only x and y are live");
        }));
        return GpuArbitraries.opSequences(12, List.of(scaleX, addIntoY, copyYToX, sync));
    }
}
