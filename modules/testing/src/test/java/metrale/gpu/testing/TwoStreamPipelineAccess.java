// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import metrale.gpu.Gpu;

/** {@link TwoStreamPipeline} for the fixtures' package. */
public final class TwoStreamPipelineAccess {

    /** The value the producer writes. */
    public static final float VALUE = TwoStreamPipeline.VALUE;

    private TwoStreamPipelineAccess() {
    }

    /** {@return what the consumer wrote} */
    public static float[] run(Gpu gpu, boolean waitForProducer) {
        return TwoStreamPipeline.run(gpu, waitForProducer);
    }

    /** {@return the first wrong index, or -1} */
    public static int firstWrong(float[] out) {
        return TwoStreamPipeline.firstWrong(out);
    }
}
