// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static metrale.gpu.cuda.internal.CudaLib.NOT_READY;
import static metrale.gpu.cuda.internal.CudaLib.SUCCESS;
import static metrale.gpu.cuda.internal.CudaLib.check;
import static metrale.gpu.cuda.internal.CudaLib.outInt;
import static metrale.gpu.cuda.internal.CudaLib.outLong;

/** Streams, and capturing a stream's work into a graph. */
final class CuStream {

    private CuStream() {
    }

    /** {@return a new stream}; flags 0 or {@code CU_STREAM_NON_BLOCKING} 1 */
    static long create(int flags) {
        return outLong(out -> LibCuda.cuStreamCreate(out, flags), "cuStreamCreate", "Flags=%d", flags);
    }

    static void destroy(long stream) {
        check(LibCuda.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2", "hStream=%#x", stream);
    }

    static void synchronize(long stream) {
        check(LibCuda.cuStreamSynchronize(stream), "cuStreamSynchronize", "hStream=%#x", stream);
    }

    /** {@return {@code true} when done, {@code false} for {@code CUDA_ERROR_NOT_READY}} */
    static boolean query(long stream) {
        int st = LibCuda.cuStreamQuery(stream);
        check(st == NOT_READY ? SUCCESS : st, "cuStreamQuery", "hStream=%#x", stream);
        return st == SUCCESS;
    }

    /** Makes a stream wait for an event; flags 0 or {@code CU_EVENT_WAIT_EXTERNAL} 1. */
    static void waitEvent(long stream, long event, int flags) {
        check(LibCuda.cuStreamWaitEvent(stream, event, flags), "cuStreamWaitEvent", "hStream=%#x, hEvent=%#x, Flags=%d",
                stream, event, flags);
    }

    /** Starts capturing; mode 0 global, 1 thread-local, 2 relaxed. */
    static void beginCapture(long stream, int mode) {
        check(LibCuda.cuStreamBeginCapture_v2(stream, mode), "cuStreamBeginCapture_v2", "hStream=%#x, mode=%d", stream, mode);
    }

    /** {@return the captured graph} */
    static long endCapture(long stream) {
        return outLong(out -> LibCuda.cuStreamEndCapture(stream, out), "cuStreamEndCapture", "hStream=%#x", stream);
    }

    /** {@return 0 none, 1 active, 2 invalidated}; optional: see {@link CudaLib#HAS_STREAM_IS_CAPTURING} */
    static int isCapturing(long stream) {
        if (!CudaLib.HAS_STREAM_IS_CAPTURING) {
            throw CudaLib.notSupported("cuStreamIsCapturing");
        }
        return outInt(out -> LibCuda.cuStreamIsCapturing(stream, out), "cuStreamIsCapturing", "hStream=%#x", stream);
    }
}
