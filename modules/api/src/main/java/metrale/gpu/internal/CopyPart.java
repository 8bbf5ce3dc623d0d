// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import metrale.telemetry.CallSites;

/**
 * The rules of copies and memsets: every device range is checked against live memory before the
 * driver sees it, every device-to-host copy, blocking or not, is counted as one (each is a hidden
 * sync point), an async copy from page-locked memory this runtime allocated waits for its
 * stream, and a blocking copy of up to 256 KiB of Java heap memory (an array, a heap segment)
 * goes through the {@link StagingBuffers} when one is free. Each method runs inside the caller's
 * gate frame.
 *
 * <p>The driver calls are framed by a {@code try}/{@code catch} of their own, not by
 * {@link Core#run}: a capturing lambda per call would allocate on every copy, and the failure's
 * message is built only in the {@code catch}.
 */
final class CopyPart {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    private final Core c;
    private final AtomicBoolean pinnedSourceWarned = new AtomicBoolean();

    CopyPart(Core c) {
        this.c = c;
    }

    void copyH2D(MemorySegment src, DevicePtr dst) {
        Checks.alive(src, "src");
        long d = Checks.ptr(dst, "dst");
        long n = src.byteSize();
        c.checkRange(d, n, "copyH2D", "dst");
        var jfr = Jfr.beginCopy();
        try {
            if (src.isNative() || !c.uploads().copyH2D(src, d, n)) {
                c.driver().memcpyHtoD(d, src, n);
            }
        } catch (GpuException e) {
            throw c.fail(e, "copyH2D " + n + " B to 0x" + Long.toHexString(d));
        }
        c.counters().h2dCopy(n);
        Jfr.copy(jfr, "H2D", n, false, 0);
    }

    void copyD2H(DevicePtr src, MemorySegment dst) {
        long s = Checks.ptr(src, "src");
        Checks.writable(dst, "dst");
        long n = dst.byteSize();
        c.checkRange(s, n, "copyD2H", "src");
        var jfr = Jfr.beginCopy();
        try {
            if (dst.isNative() || !c.staging().copyD2H(s, dst, n)) {
                c.driver().memcpyDtoH(dst, s, n);
            }
        } catch (GpuException e) {
            throw c.fail(e, "copyD2H " + n + " B from 0x" + Long.toHexString(s));
        }
        c.counters().d2hCopy(n);
        Jfr.copy(jfr, "D2H", n, false, 0);
    }

    void copyD2HOnStream(DevicePtr src, MemorySegment dst, Stream stream) {
        long s = Checks.ptr(src, "src");
        Checks.writable(dst, "dst");
        long st = c.liveStream(stream, "copyD2HOnStream");
        long n = dst.byteSize();
        c.checkRange(s, n, "copyD2HOnStream", "src");
        var jfr = Jfr.beginCopy();
        try {
            if (dst.isNative()) {
                c.driver().memcpyDtoHAsync(dst, s, n, st);
                c.driver().streamSynchronize(st);
            } else if (!c.staging().copyD2HOnStream(s, dst, n, st)) {
                // The async copy needs native memory that stays put; stage through a temporary.
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment tmp = a.allocate(Math.max(n, 1), 16).asSlice(0, n);
                    c.driver().memcpyDtoHAsync(tmp, s, n, st);
                    c.driver().streamSynchronize(st);
                    MemorySegment.copy(tmp, 0, dst, 0, n);
                }
            }
        } catch (GpuException e) {
            throw c.fail(e, "copyD2HOnStream " + n + " B from " + src + " on " + stream);
        }
        c.counters().d2hCopy(n);
        Jfr.copy(jfr, "D2H", n, false, st);
    }

    void copyD2HAsync(DevicePtr src, MemorySegment dst, Stream stream) {
        long s = Checks.ptr(src, "src");
        Checks.nativeSeg(dst, "dst", "copyD2HAsync");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("copyD2HAsync: dst: the segment is read-only");
        }
        long st = c.liveStream(stream, "copyD2HAsync");
        long n = dst.byteSize();
        c.checkRange(s, n, "copyD2HAsync", "src");
        var jfr = Jfr.beginCopy();
        try {
            c.driver().memcpyDtoHAsync(dst, s, n, st);
        } catch (GpuException e) {
            throw c.fail(e, "copyD2HAsync " + n + " B from " + src + " on " + stream);
        }
        c.counters().d2hCopy(n);
        Jfr.copy(jfr, "D2H", n, true, st);
    }

    void copyH2DAsync(MemorySegment src, DevicePtr dst, Stream stream) {
        long st = enqueueH2D("copyH2DAsync", src, dst, stream);
        // During capture the copy is a graph node that reads the source at every replay, so a
        // wait would neither help nor be allowed (it would invalidate the capture): it is
        // captured as the retained form is, and the source must outlive the graph.
        if (c.pinned().contains(src) && !c.capturingRaw(st)) {
            // A page-locked source is read when the copy executes, and the caller may drop it on
            // return: wait for the stream so the copy has read it.
            if (pinnedSourceWarned.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "metrale-gpu: copyH2DAsync from page-locked memory at "
                        + CallSites.caller() + " waits for its stream so the caller may reuse the source; "
                        + "use copyH2DAsyncRetained and keep the source alive until the next sync to skip the wait "
                        + "(warned once per runtime)");
            }
            try {
                c.driver().streamSynchronize(st);
            } catch (GpuException e) {
                throw c.fail(e, "copyH2DAsync (pinned-source sync of " + stream + ")");
            }
        }
    }

    void copyH2DAsyncRetained(MemorySegment src, DevicePtr dst, Stream stream) {
        enqueueH2D("copyH2DAsyncRetained", src, dst, stream);
    }

    /** Checks and enqueues an async host-to-device copy for {@code op}. {@return the stream's handle} */
    private long enqueueH2D(String op, MemorySegment src, DevicePtr dst, Stream stream) {
        Checks.nativeSeg(src, "src", op);
        long d = Checks.ptr(dst, "dst");
        long st = c.liveStream(stream, op);
        long n = src.byteSize();
        c.checkRange(d, n, op, "dst");
        var jfr = Jfr.beginCopy();
        try {
            c.driver().memcpyHtoDAsync(d, src, n, st);
        } catch (GpuException e) {
            throw c.fail(e, op + " " + n + " B to " + dst + " on " + stream);
        }
        c.counters().h2dCopy(n);
        Jfr.copy(jfr, "H2D", n, true, st);
        return st;
    }

    void copyD2D(DevicePtr src, DevicePtr dst, long bytes) {
        long s = Checks.ptr(src, "src");
        long d = Checks.ptr(dst, "dst");
        Checks.size(bytes, "bytes", "copyD2D");
        c.checkRange(s, bytes, "copyD2D", "src");
        c.checkRange(d, bytes, "copyD2D", "dst");
        var jfr = Jfr.beginCopy();
        try {
            c.driver().memcpyDtoD(d, s, bytes);
        } catch (GpuException e) {
            throw c.fail(e, "copyD2D " + bytes + " B " + src + " -> " + dst);
        }
        c.d2dDone(s, d, bytes);
        Jfr.copy(jfr, "D2D", bytes, false, 0);
    }

    void copyD2DAsync(DevicePtr src, DevicePtr dst, long bytes, Stream stream) {
        long s = Checks.ptr(src, "src");
        long d = Checks.ptr(dst, "dst");
        Checks.size(bytes, "bytes", "copyD2DAsync");
        c.checkRange(s, bytes, "copyD2DAsync", "src");
        c.checkRange(d, bytes, "copyD2DAsync", "dst");
        long st = c.liveStream(stream, "copyD2DAsync");
        var jfr = Jfr.beginCopy();
        try {
            c.driver().memcpyDtoDAsync(d, s, bytes, st);
        } catch (GpuException e) {
            throw c.fail(e, "copyD2DAsync " + bytes + " B " + src + " -> " + dst + " on " + stream);
        }
        c.d2dDone(s, d, bytes);
        Jfr.copy(jfr, "D2D", bytes, true, st);
    }

    void copyD2D2DAsync(DevicePtr src, long srcPitch, DevicePtr dst, long dstPitch, long widthBytes, long height,
                        Stream stream) {
        String op = "copyD2D2DAsync";
        long s = Checks.ptr(src, "src");
        long d = Checks.ptr(dst, "dst");
        Checks.size(srcPitch, "srcPitch", op);
        Checks.size(dstPitch, "dstPitch", op);
        Checks.size(widthBytes, "widthBytes", op);
        Checks.size(height, "height", op);
        long st = c.liveStream(stream, op);
        long n;
        try {
            n = Math.multiplyExact(widthBytes, height);
        } catch (ArithmeticException ex) {
            throw new IllegalArgumentException(op + "(widthBytes=" + widthBytes + ", height=" + height
                    + "): the byte count overflows");
        }
        if (widthBytes > 0 && height > 0 && srcPitch >= widthBytes && dstPitch >= widthBytes) {
            // A violated pitch rule is the driver's INVALID_VALUE; otherwise row h-1 ends the span.
            c.checkRange(s, span2D(srcPitch, widthBytes, height), op, "src");
            c.checkRange(d, span2D(dstPitch, widthBytes, height), op, "dst");
        }
        var jfr = Jfr.beginCopy();
        try {
            c.driver().memcpy2DAsync(d, dstPitch, s, srcPitch, widthBytes, height, st);
        } catch (GpuException e) {
            throw c.fail(e, op + " " + widthBytes + "x" + height + " " + src + " -> " + dst + " on " + stream);
        }
        c.counters().d2dCopy(n);
        Jfr.copy(jfr, "D2D", n, true, st);
    }

    /** {@return the bytes a 2D copy spans from its start: {@code (height - 1) * pitch + width}} */
    private static long span2D(long pitch, long width, long height) {
        try {
            return Math.addExact(Math.multiplyExact(height - 1, pitch), width);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("copyD2D2DAsync(pitch=" + pitch + ", height=" + height
                    + "): the span overflows");
        }
    }

    void memset(DevicePtr ptr, int value, long bytes) {
        long p = Checks.ptr(ptr, "ptr");
        Checks.byteValue(value, "memset");
        Checks.size(bytes, "bytes", "memset");
        c.checkRange(p, bytes, "memset", "ptr");
        try {
            c.driver().memsetD8(p, value, bytes);
        } catch (GpuException e) {
            throw c.fail(e, "memset " + bytes + " B at " + ptr);
        }
    }

    void memsetAsync(DevicePtr ptr, int value, long bytes, Stream stream) {
        long p = Checks.ptr(ptr, "ptr");
        Checks.byteValue(value, "memsetAsync");
        Checks.size(bytes, "bytes", "memsetAsync");
        c.checkRange(p, bytes, "memsetAsync", "ptr");
        long st = c.liveStream(stream, "memsetAsync");
        try {
            c.driver().memsetD8Async(p, value, bytes, st);
        } catch (GpuException e) {
            throw c.fail(e, "memsetAsync " + bytes + " B at " + ptr + " on " + stream);
        }
        if (c.tracing().on()) {
            c.tracing().memset(p, value, bytes);
        }
    }
}
