// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static metrale.gpu.cuda.internal.CudaLib.NOT_READY;
import static metrale.gpu.cuda.internal.CudaLib.SUCCESS;
import static metrale.gpu.cuda.internal.CudaLib.check;
import static metrale.gpu.cuda.internal.CudaLib.outLong;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Events. */
final class CuEvent {

    private CuEvent() {
    }

    /** {@return a new event}; flags: {@code BLOCKING_SYNC} 1, {@code DISABLE_TIMING} 2, {@code INTERPROCESS} 4 */
    static long create(int flags) {
        return outLong(out -> LibCuda.cuEventCreate(out, flags), "cuEventCreate", "Flags=%d", flags);
    }

    static void record(long event, long stream) {
        check(LibCuda.cuEventRecord(event, stream), "cuEventRecord", "hEvent=%#x, hStream=%#x", event, stream);
    }

    /** {@return {@code true} when done, {@code false} for {@code CUDA_ERROR_NOT_READY}} */
    static boolean query(long event) {
        int st = LibCuda.cuEventQuery(event);
        check(st == NOT_READY ? SUCCESS : st, "cuEventQuery", "hEvent=%#x", event);
        return st == SUCCESS;
    }

    static void synchronize(long event) {
        check(LibCuda.cuEventSynchronize(event), "cuEventSynchronize", "hEvent=%#x", event);
    }

    /** {@return milliseconds from {@code start} to {@code end}, by {@link CudaLib#EVENT_ELAPSED_TIME}} */
    static float elapsedTime(long start, long end) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_FLOAT);
            check(LibCuda.cuEventElapsedTime_v2(out, start, end), CudaLib.EVENT_ELAPSED_TIME, "hStart=%#x, hEnd=%#x", start, end);
            return out.get(JAVA_FLOAT, 0);
        }
    }

    static void destroy(long event) {
        check(LibCuda.cuEventDestroy_v2(event), "cuEventDestroy_v2", "hEvent=%#x", event);
    }
}
