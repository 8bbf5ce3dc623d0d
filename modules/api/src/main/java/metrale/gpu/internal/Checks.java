// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import metrale.gpu.DevicePtr;

/** Host-input checks made before anything reaches the driver. Throw helpers stay out of line. */
final class Checks {

    private Checks() {
    }

    /** {@return {@code seg}} after checking it is non-null and alive. */
    static MemorySegment alive(MemorySegment seg, String param) {
        Objects.requireNonNull(seg, param);
        if (!seg.scope().isAlive()) {
            throw new IllegalStateException(param + ": the segment's arena is closed");
        }
        return seg;
    }

    /** {@return {@code seg}} after checking it is non-null, alive and writable. */
    static MemorySegment writable(MemorySegment seg, String param) {
        alive(seg, param);
        if (seg.isReadOnly()) {
            throw new IllegalArgumentException(param + ": the segment is read-only");
        }
        return seg;
    }

    /** {@return {@code seg}} after checking it is non-null, alive and native, as async copies require. */
    static MemorySegment nativeSeg(MemorySegment seg, String param, String call) {
        alive(seg, param);
        if (!seg.isNative()) {
            throw new IllegalArgumentException(call + ": " + param + " must be native memory (a heap segment may move "
                    + "before an async copy reads it); use the blocking copy or an Arena-allocated segment");
        }
        return seg;
    }

    /** {@return the pointer's address} after a null check. */
    static long ptr(DevicePtr p, String param) {
        return Objects.requireNonNull(p, param).address();
    }

    /** Rejects a negative size. */
    static void size(long v, String param, String call) {
        if (v < 0) {
            throw negative(v, param, call);
        }
    }

    static IllegalArgumentException negative(long v, String param, String call) {
        return new IllegalArgumentException(call + "(" + param + "=" + v + "): must be >= 0");
    }

    /** Rejects a memset value outside a byte. */
    static void byteValue(int v, String call) {
        if (v < 0 || v > 255) {
            throw new IllegalArgumentException(call + "(value=" + v + "): must be a byte, 0 to 255");
        }
    }
}
