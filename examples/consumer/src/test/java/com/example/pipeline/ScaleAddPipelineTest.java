// SPDX-License-Identifier: Apache-2.0
package com.example.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import metrale.gpu.Gpu;
import metrale.gpu.sim.SimTwinMode;
import metrale.gpu.testing.Backend;
import metrale.gpu.testing.FaultPlan;
import metrale.gpu.testing.GpuTest;

/**
 * The pipeline on a fresh runtime per run: on the simulator always, on CUDA where a driver loads.
 * Each run fails if it leaks, overflows a buffer or latches a fault, naming the site.
 */
class ScaleAddPipelineTest {

    static float[] reference(float[] x, float[] y, float a) {
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = a * x[i] + y[i];
        }
        return out;
    }

    static float[] ramp(int n, float step) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = i * step;
        }
        return v;
    }

    @GpuTest(twins = PipelineTwins.class)
    void computesAxPlusY(Gpu gpu) {
        float[] x = ramp(1000, 0.5f);
        float[] y = ramp(1000, 2f);
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            ScaleAddPipeline.Result r = p.run(x, y, 3f);
            assertArrayEquals(reference(x, y, 3f), r.out());
            assertEquals(1, r.chunks());
        }
    }

    @GpuTest(backends = Backend.SIM, twinMode = SimTwinMode.OFF)
    void computesAxPlusYFromItsOwnPtxWithNoTwin(Gpu gpu) {
        float[] x = ramp(1000, 0.5f);
        float[] y = ramp(1000, 2f);
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            assertArrayEquals(reference(x, y, 3f), p.run(x, y, 3f).out());
        }
    }

    @GpuTest(backends = Backend.SIM, twins = PipelineTwins.class, twinMode = SimTwinMode.VERIFY)
    void itsTwinAgreesWithItsPtx(Gpu gpu) {
        float[] x = ramp(1000, 0.5f);
        float[] y = ramp(1000, 2f);
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            assertArrayEquals(reference(x, y, 3f), p.run(x, y, 3f).out());
        }
    }

    @GpuTest(backends = Backend.SIM, twins = PipelineTwins.class)
    @FaultPlan(failAllocation = 1)
    void fallsBackToChunksWhenTheDeviceIsOutOfMemory(Gpu gpu) {
        float[] x = ramp(3000, 1f);
        float[] y = ramp(3000, -1f);
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            ScaleAddPipeline.Result r = p.run(x, y, 2f);
            assertArrayEquals(reference(x, y, 2f), r.out());
            assertEquals(3, r.chunks(), "3000 elements in chunks of " + ScaleAddPipeline.CHUNK);
        }
    }

    @GpuTest(backends = Backend.SIM, twins = PipelineTwins.class, initCheck = true)
    void readsOnlyMemoryItWrote(Gpu gpu) {
        try (ScaleAddPipeline p = new ScaleAddPipeline(gpu)) {
            p.run(ramp(777, 1f), ramp(777, 1f), 1f);
        }
    }
}
