// SPDX-License-Identifier: Apache-2.0
package com.example.pipeline;

import metrale.gpu.sim.FloatView;
import metrale.gpu.sim.SimTwins;
import metrale.gpu.testing.Twins;

/** The simulator twins of {@code pipeline.cu}, line for line. */
public final class PipelineTwins implements Twins {

    /** Creates the twins. */
    public PipelineTwins() {
    }

    @Override
    public void register(SimTwins twins) {
        twins.register(ScaleAddPipeline.MODULE, "scale", l -> {
            FloatView x = l.floats(0);
            float a = l.f32(1);
            int n = l.i32(2);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    x.set(i, a * x.get(i));
                }
            });
        });
        twins.register(ScaleAddPipeline.MODULE, "add", l -> {
            FloatView x = l.floats(0);
            FloatView y = l.floats(1);
            FloatView out = l.floats(2);
            int n = l.i32(3);
            l.forEachThread(t -> {
                int i = t.globalX();
                if (i < n) {
                    out.set(i, x.get(i) + y.get(i));
                }
            });
        });
    }
}
