// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;

/**
 * The operand rules of copies and memsets: a count is not negative (0 is a no-op), a host segment
 * is live and large enough, a device range lies inside one live allocation, a 2D copy's pitches
 * and extent fit; all are {@code INVALID_VALUE} at the call, and invalidate the capture of the
 * stream a refused call was on ({@code s}, or {@code null} for a synchronous call). Also how
 * pageable host memory is staged. The device calls these under its lock; not thread-safe on its own.
 */
final class CopyRules {

    private final DeviceMemory memory;

    CopyRules(DeviceMemory memory) {
        this.memory = memory;
    }

    /** @return {@code false} when {@code bytes} is 0 (a no-op) */
    boolean checkCount(SimStream s, long bytes, String op, String d) {
        if (bytes < 0) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, (d == null ? "" : d + ": ") + "bytes=" + bytes + " is negative");
        }
        return bytes != 0;
    }

    void checkHost(SimStream s, MemorySegment seg, long bytes, String op, String d, String which) {
        String why = seg == null ? "is null"
                : !seg.scope().isAlive() ? "is closed"
                : seg.byteSize() < bytes ? "has " + seg.byteSize() + " bytes, fewer than " + bytes
                : null;
        if (why != null) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, (d == null ? "bytes=" + bytes : d) + ": the host " + which + " " + why);
        }
    }

    void checkDevice(SimStream s, long ptr, long bytes, String op, String d, String which) {
        if (memory.find(ptr, bytes) == null) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, (d == null ? "bytes=" + bytes : d) + ": the " + which + " "
                    + memory.explain(ptr, bytes));
        }
    }

    /** {@return whether {@code seg} lies in page-locked memory from {@code cuMemHostAlloc}} */
    boolean isPinned(MemorySegment seg, long bytes) {
        if (!seg.isNative()) {
            return false;
        }
        Alloc a = memory.find(seg.address(), bytes);
        return a != null && a.kind == Alloc.Kind.PINNED;
    }

    /** {@return a copy of {@code bytes} of {@code src}, taken now, as CUDA stages pageable memory} */
    MemorySegment stage(MemorySegment src, long bytes) {
        MemorySegment copy = bytes <= Integer.MAX_VALUE - 8
                ? MemorySegment.ofArray(new byte[(int) bytes])
                // Too large for an array: native memory the garbage collector frees with the work.
                : Arena.ofAuto().allocate(bytes);
        MemorySegment.copy(src, 0, copy, 0, bytes);
        return copy;
    }

    /**
     * {@return the checked work of {@code cuMemcpy2DAsync}, or {@code null} when it copies nothing}
     *
     * @param d the call's operands, for the message
     */
    Works.Copy2D copy2D(SimStream s, long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height,
                        String op, String d) {
        if (widthBytes < 0 || height < 0 || dstPitch < 0 || srcPitch < 0) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, d + ": negative size or pitch");
        }
        if (widthBytes == 0 || height == 0) {
            return null;
        }
        if (srcPitch < widthBytes || dstPitch < widthBytes) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, d + ": each pitch must be at least WidthInBytes");
        }
        long srcSpan;
        long dstSpan;
        try {
            srcSpan = Math.addExact(Math.multiplyExact(height - 1, srcPitch), widthBytes);
            dstSpan = Math.addExact(Math.multiplyExact(height - 1, dstPitch), widthBytes);
        } catch (ArithmeticException e) {
            throw CaptureRules.bad(s, CudaError.INVALID_VALUE, op, d + ": the extent overflows");
        }
        checkDevice(s, src, srcSpan, op, d, "source");
        checkDevice(s, dst, dstSpan, op, d, "destination");
        return new Works.Copy2D(dst, dstPitch, src, srcPitch, widthBytes, height);
    }
}
