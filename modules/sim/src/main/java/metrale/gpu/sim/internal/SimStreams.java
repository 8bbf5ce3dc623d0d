// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * A context's streams by handle, as CUDA names them: {@code 0} and {@code 1} the legacy default
 * stream, {@code 2} the calling thread's per-thread default stream (made on its first use), and
 * the streams {@code cuStreamCreate} made. The device calls these doors under its lock; not
 * thread-safe on its own.
 */
final class SimStreams {

    private final SimStream legacy;
    private final Map<Long, SimStream> streams = new HashMap<>();
    private final Map<Thread, SimStream> perThread = new WeakHashMap<>();

    SimStreams(SimStream legacy) {
        this.legacy = legacy;
    }

    /** {@return the stream {@code h} names for the calling thread, else {@code INVALID_HANDLE}} */
    SimStream get(long h, String op) {
        if (h == 0 || h == 1) {
            return legacy;
        }
        if (h == 2) {
            return perThread.computeIfAbsent(Thread.currentThread(), t -> new SimStream(2, SimStream.Kind.PER_THREAD, true,
                    "the per-thread default stream of thread '" + t.getName() + "'"));
        }
        SimStream s = streams.get(h);
        if (s == null) {
            throw err(CudaError.INVALID_HANDLE, op, "stream=" + hex(h) + ": not a live stream (destroyed, or never created)");
        }
        return s;
    }

    /** {@code cuStreamCreate}: {@return the new stream's handle} */
    long create(int flags, String op) {
        if (flags != 0 && flags != 1) {
            throw err(CudaError.INVALID_VALUE, op, "flags=" + flags + ": must be 0 or CU_STREAM_NON_BLOCKING (1)");
        }
        long h = Ids.handle();
        streams.put(h, new SimStream(h, SimStream.Kind.USER, flags == 0,
                "stream " + hex(h) + (flags == 1 ? " (non-blocking)" : "")));
        return h;
    }

    /** {@code cuStreamDestroy}: its pending work stays queued and runs at the next synchronization that needs it. */
    void destroy(long stream, String op) {
        if (stream == 0 || stream == 1 || stream == 2) {
            throw err(CudaError.INVALID_HANDLE, op, "stream=" + stream + ": "
                    + (stream == 0 ? "the NULL stream" : "a default stream") + " cannot be destroyed");
        }
        SimStream s = streams.remove(stream);
        if (s == null) {
            throw err(CudaError.INVALID_HANDLE, op, "stream=" + hex(stream) + ": not a live stream");
        }
        s.destroyed = true;
        if (s.capture != null) {
            s.capture.invalidate(op);
        }
    }

    /** {@return how many created streams are live} */
    int count() {
        return streams.size();
    }

    void clear() {
        streams.clear();
        perThread.clear();
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
