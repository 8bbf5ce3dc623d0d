// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static metrale.gpu.cuda.internal.CudaLib.MEMORYTYPE_DEVICE;
import static metrale.gpu.cuda.internal.CudaLib.check;
import static metrale.gpu.cuda.internal.CudaLib.outLong;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import metrale.gpu.CudaError;

/** Memory: device, managed, page-locked and stream-ordered (pool) allocations, copies and memset. */
final class CuMem {

    /**
     * {@code CUDA_MEMCPY2D} (the {@code _v2} layout of {@code cuda.h}: {@code size_t} offsets,
     * pitches and extents; {@code CUmemorytype} is a 4-byte enum followed by padding).
     */
    static final StructLayout CUDA_MEMCPY2D = MemoryLayout.structLayout(
            JAVA_LONG.withName("srcXInBytes"),
            JAVA_LONG.withName("srcY"),
            JAVA_INT.withName("srcMemoryType"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("srcHost"),
            JAVA_LONG.withName("srcDevice"),
            ADDRESS.withName("srcArray"),
            JAVA_LONG.withName("srcPitch"),
            JAVA_LONG.withName("dstXInBytes"),
            JAVA_LONG.withName("dstY"),
            JAVA_INT.withName("dstMemoryType"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("dstHost"),
            JAVA_LONG.withName("dstDevice"),
            ADDRESS.withName("dstArray"),
            JAVA_LONG.withName("dstPitch"),
            JAVA_LONG.withName("WidthInBytes"),
            JAVA_LONG.withName("Height")).withName("CUDA_MEMCPY2D");

    private static final long M2D_SRC_MEMORY_TYPE = offset("srcMemoryType");
    private static final long M2D_SRC_DEVICE = offset("srcDevice");
    private static final long M2D_SRC_PITCH = offset("srcPitch");
    private static final long M2D_DST_MEMORY_TYPE = offset("dstMemoryType");
    private static final long M2D_DST_DEVICE = offset("dstDevice");
    private static final long M2D_DST_PITCH = offset("dstPitch");
    private static final long M2D_WIDTH = offset("WidthInBytes");
    private static final long M2D_HEIGHT = offset("Height");

    private CuMem() {
    }

    private static long offset(String field) {
        return CUDA_MEMCPY2D.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    // ---- allocation ---------------------------------------------------------------------------

    /** {@return {@code {free, total}} in bytes} */
    static long[] getInfo() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 2);
            check(LibCuda.cuMemGetInfo_v2(out, out.asSlice(8)), "cuMemGetInfo_v2", "");
            return new long[] {out.getAtIndex(JAVA_LONG, 0), out.getAtIndex(JAVA_LONG, 1)};
        }
    }

    /**
     * The status of {@code cuMemGetInfo_v2}, which waits for nothing, is not a capture-unsafe call,
     * and reports a sticky error latched in the current context.
     *
     * @return the status, as a {@link CudaError}
     */
    static CudaError getInfoStatus() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 2);
            return CudaError.of(LibCuda.cuMemGetInfo_v2(out, out.asSlice(8)));
        }
    }

    static long alloc(long bytes) {
        return outLong(out -> LibCuda.cuMemAlloc_v2(out, bytes), "cuMemAlloc_v2", "bytesize=%d", bytes);
    }

    /** Frees a base address; 0 is a no-op. */
    static void free(long ptr) {
        check(LibCuda.cuMemFree_v2(ptr), "cuMemFree_v2", "dptr=%#x", ptr);
    }

    /** {@return managed memory}; flags {@code CU_MEM_ATTACH_GLOBAL} 1 or {@code CU_MEM_ATTACH_HOST} 2 */
    static long allocManaged(long bytes, int flags) {
        return outLong(out -> LibCuda.cuMemAllocManaged(out, bytes, flags), "cuMemAllocManaged",
                "bytesize=%d, flags=%d", bytes, flags);
    }

    /**
     * Page-locked host memory.
     *
     * @param flags {@code PORTABLE} 1, {@code DEVICEMAP} 2, {@code WRITECOMBINED} 4
     * @return the host address, 0 for size 0
     */
    static long hostAlloc(long bytes, int flags) {
        return outLong(out -> LibCuda.cuMemHostAlloc(out, bytes, flags), "cuMemHostAlloc", "bytesize=%d, Flags=%d", bytes, flags);
    }

    /** Frees an address from {@link #hostAlloc}; 0 is a no-op. */
    static void freeHost(long host) {
        check(LibCuda.cuMemFreeHost(MemorySegment.ofAddress(host)), "cuMemFreeHost", "p=%#x", host);
    }

    /** {@return the device address of page-locked host memory}; {@code flags} must be 0 */
    static long hostGetDevicePointer(long host, int flags) {
        return outLong(out -> LibCuda.cuMemHostGetDevicePointer_v2(out, MemorySegment.ofAddress(host), flags),
                "cuMemHostGetDevicePointer_v2", "p=%#x, Flags=%d", host, flags);
    }

    // ---- the stream-ordered allocator (optional: CudaLib.HAS_MEM_POOLS) ----------------------

    static long allocAsync(long bytes, long stream) {
        return outLong(out -> LibCuda.cuMemAllocAsync(out, bytes, stream), "cuMemAllocAsync",
                "bytesize=%d, hStream=%#x", bytes, stream);
    }

    static void freeAsync(long ptr, long stream) {
        check(LibCuda.cuMemFreeAsync(ptr, stream), "cuMemFreeAsync", "dptr=%#x, hStream=%#x", ptr, stream);
    }

    static long defaultPool(int device) {
        return outLong(out -> LibCuda.cuDeviceGetDefaultMemPool(out, device), "cuDeviceGetDefaultMemPool", "dev=%d", device);
    }

    static void poolTrimTo(long pool, long minBytesToKeep) {
        check(LibCuda.cuMemPoolTrimTo(pool, minBytesToKeep), "cuMemPoolTrimTo", "pool=%#x, minBytesToKeep=%d",
                pool, minBytesToKeep);
    }

    /** {@return an attribute whose value is a {@code cuuint64_t} (4 to 8)} */
    static long poolGetAttribute(long pool, int attr) {
        return outLong(out -> LibCuda.cuMemPoolGetAttribute(pool, attr, out), "cuMemPoolGetAttribute",
                "pool=%#x, attr=%d", pool, attr);
    }

    /** Sets an attribute whose value is a {@code cuuint64_t} (4 to 8). */
    static void poolSetAttribute(long pool, int attr, long value) {
        try (Arena arena = Arena.ofConfined()) {
            check(LibCuda.cuMemPoolSetAttribute(pool, attr, arena.allocateFrom(JAVA_LONG, value)), "cuMemPoolSetAttribute",
                    "pool=%#x, attr=%d, value=%s", pool, attr, Long.toUnsignedString(value));
        }
    }

    // ---- copies and memset: host memory is a native segment at least the count long ------------

    static void copyHtoD(long dst, MemorySegment src, long bytes) {
        check(LibCuda.cuMemcpyHtoD_v2(dst, src, bytes), "cuMemcpyHtoD_v2", "dstDevice=%#x, srcHost=%#x, ByteCount=%d",
                dst, src.address(), bytes);
    }

    static void copyDtoH(MemorySegment dst, long src, long bytes) {
        check(LibCuda.cuMemcpyDtoH_v2(dst, src, bytes), "cuMemcpyDtoH_v2", "dstHost=%#x, srcDevice=%#x, ByteCount=%d",
                dst.address(), src, bytes);
    }

    static void copyDtoD(long dst, long src, long bytes) {
        check(LibCuda.cuMemcpyDtoD_v2(dst, src, bytes), "cuMemcpyDtoD_v2", "dstDevice=%#x, srcDevice=%#x, ByteCount=%d",
                dst, src, bytes);
    }

    static void copyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        check(LibCuda.cuMemcpyHtoDAsync_v2(dst, src, bytes, stream), "cuMemcpyHtoDAsync_v2",
                "dstDevice=%#x, srcHost=%#x, ByteCount=%d, hStream=%#x", dst, src.address(), bytes, stream);
    }

    static void copyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        check(LibCuda.cuMemcpyDtoHAsync_v2(dst, src, bytes, stream), "cuMemcpyDtoHAsync_v2",
                "dstHost=%#x, srcDevice=%#x, ByteCount=%d, hStream=%#x", dst.address(), src, bytes, stream);
    }

    static void copyDtoDAsync(long dst, long src, long bytes, long stream) {
        check(LibCuda.cuMemcpyDtoDAsync_v2(dst, src, bytes, stream), "cuMemcpyDtoDAsync_v2",
                "dstDevice=%#x, srcDevice=%#x, ByteCount=%d, hStream=%#x", dst, src, bytes, stream);
    }

    /** A pitched device-to-device copy; X and Y offsets are 0 (the addresses carry them). */
    static void copy2DAsyncDtoD(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(CUDA_MEMCPY2D); // zeroed: offsets, host and array fields stay 0
            p.set(JAVA_INT, M2D_SRC_MEMORY_TYPE, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, M2D_SRC_DEVICE, src);
            p.set(JAVA_LONG, M2D_SRC_PITCH, srcPitch);
            p.set(JAVA_INT, M2D_DST_MEMORY_TYPE, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, M2D_DST_DEVICE, dst);
            p.set(JAVA_LONG, M2D_DST_PITCH, dstPitch);
            p.set(JAVA_LONG, M2D_WIDTH, widthBytes);
            p.set(JAVA_LONG, M2D_HEIGHT, height);
            check(LibCuda.cuMemcpy2DAsync_v2(p, stream), "cuMemcpy2DAsync_v2",
                    "srcDevice=%#x, srcPitch=%d, dstDevice=%#x, dstPitch=%d, WidthInBytes=%d, Height=%d, hStream=%#x",
                    src, srcPitch, dst, dstPitch, widthBytes, height, stream);
        }
    }

    static void setD8(long ptr, byte value, long bytes) {
        check(LibCuda.cuMemsetD8_v2(ptr, value, bytes), "cuMemsetD8_v2", "dstDevice=%#x, uc=%d, N=%d", ptr, value & 0xff, bytes);
    }

    static void setD8Async(long ptr, byte value, long bytes, long stream) {
        check(LibCuda.cuMemsetD8Async(ptr, value, bytes, stream), "cuMemsetD8Async", "dstDevice=%#x, uc=%d, N=%d, hStream=%#x",
                ptr, value & 0xff, bytes, stream);
    }

    static void copyPeer(long dst, long dstCtx, long src, long srcCtx, long bytes) {
        check(LibCuda.cuMemcpyPeer(dst, dstCtx, src, srcCtx, bytes), "cuMemcpyPeer",
                "dstDevice=%#x, dstContext=%#x, srcDevice=%#x, srcContext=%#x, ByteCount=%d", dst, dstCtx, src, srcCtx, bytes);
    }

    static void copyPeerAsync(long dst, long dstCtx, long src, long srcCtx, long bytes, long stream) {
        check(LibCuda.cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream), "cuMemcpyPeerAsync",
                "dstDevice=%#x, dstContext=%#x, srcDevice=%#x, srcContext=%#x, ByteCount=%d, hStream=%#x",
                dst, dstCtx, src, srcCtx, bytes, stream);
    }
}
