// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import metrale.gpu.DeviceBuffer;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;

/**
 * A producer on one stream fills a buffer, a consumer on another copies it out: correct only if
 * the consumer's stream waits for the producer's event. {@link #run} can leave that wait out.
 */
final class TwoStreamPipeline {

    static final int N = 256;
    static final float VALUE = 7f;

    private TwoStreamPipeline() {
    }

    /** {@return what the consumer wrote} {@code gpu} has {@link KitKernels}' twins. */
    static float[] run(Gpu gpu, boolean waitForProducer) {
        KitKernels.load(gpu);
        Stream producer = gpu.createStream();
        Stream consumer = gpu.createStream();
        Event produced = gpu.createEvent();
        float[] out = new float[N];
        try (DeviceBuffer mid = gpu.allocBuffer(4L * N); DeviceBuffer dst = gpu.allocBuffer(4L * N);
             KernelArgs args = new KernelArgs()) {
            gpu.launch(gpu.kernel(KitKernels.MODULE, "fill"), LaunchConfig.forElements(N, 64), producer,
                    args.clear().ptr(mid.ptr()).i32(N).f32(VALUE));
            gpu.recordEvent(produced, producer);
            if (waitForProducer) {
                gpu.streamWaitEvent(consumer, produced);
            }
            gpu.launch(gpu.kernel(KitKernels.MODULE, "copy"), LaunchConfig.forElements(N, 64), consumer,
                    args.clear().ptr(mid.ptr()).ptr(dst.ptr()).i32(N));
            gpu.synchronize();
            dst.copyTo(out);
        } finally {
            gpu.destroyEvent(produced);
            gpu.destroyStream(producer);
            gpu.destroyStream(consumer);
        }
        return out;
    }

    /** {@return the first index whose value is not {@link #VALUE}, or -1} */
    static int firstWrong(float[] out) {
        for (int i = 0; i < out.length; i++) {
            if (out[i] != VALUE) {
                return i;
            }
        }
        return -1;
    }
}
