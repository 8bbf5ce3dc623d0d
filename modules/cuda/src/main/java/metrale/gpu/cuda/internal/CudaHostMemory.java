// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One {@link CudaDevice}'s host side of memory: page-locked allocations, each with a scope of its
 * own, and copies between the device and host segments, staging heap segments through native
 * memory. The caller has made the context current.
 */
final class CudaHostMemory {

    /** The most bytes a heap segment is staged through native memory at a time. */
    private static final long STAGING_CHUNK = 8L << 20;

    private final long ctx;
    private final ConcurrentHashMap<Long, Arena> pinnedScopes = new ConcurrentHashMap<>();

    CudaHostMemory(long ctx) {
        this.ctx = ctx;
    }

    MemorySegment alloc(long bytes, int flags) {
        long p = CuMem.hostAlloc(bytes, flags);
        if (p == 0) {
            return MemorySegment.NULL;
        }
        // A shared scope of its own, ended by free before cuMemFreeHost: a later access
        // throws instead of writing freed page-locked memory, which crashes the JVM.
        Arena scope = Arena.ofShared();
        pinnedScopes.put(p, scope);
        return MemorySegment.ofAddress(p).reinterpret(bytes, scope, null);
    }

    void free(MemorySegment host) {
        if (!host.isNative()) {
            throw CudaDevice.invalid("cuMemFreeHost", "p is a heap segment, not page-locked memory from cuMemHostAlloc");
        }
        Arena scope = pinnedScopes.remove(host.address());
        if (scope != null) {
            try {
                scope.close();
            } catch (IllegalStateException e) {
                pinnedScopes.put(host.address(), scope);
                throw e;
            }
        }
        CuMem.freeHost(host.address());
    }

    static long devicePointer(MemorySegment host) {
        if (!host.isNative()) {
            throw CudaDevice.invalid("cuMemHostGetDevicePointer_v2", "p is a heap segment, not page-locked memory from cuMemHostAlloc");
        }
        return CuMem.hostGetDevicePointer(host.address(), 0);
    }

    private static void checkHostRange(String function, MemorySegment host, long bytes) {
        if (bytes < 0 || bytes > host.byteSize()) {
            throw CudaDevice.invalid(function, "ByteCount=" + bytes + " but the host segment holds " + host.byteSize() + " bytes");
        }
    }

    void copyHtoD(long dst, MemorySegment src, long bytes) {
        checkHostRange("cuMemcpyHtoD_v2", src, bytes);
        if (src.isNative() || bytes == 0) {
            CuMem.copyHtoD(dst, src.isNative() ? src : MemorySegment.NULL, bytes);
            return;
        }
        // The driver cannot read the Java heap (the GC may move it): stage through native memory.
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tmp = arena.allocate(Math.min(bytes, STAGING_CHUNK), 64);
            for (long off = 0; off < bytes; off += tmp.byteSize()) {
                long n = Math.min(tmp.byteSize(), bytes - off);
                MemorySegment.copy(src, off, tmp, 0, n);
                CuCtx.setCurrent(ctx);
                CuMem.copyHtoD(dst + off, tmp, n);
            }
        }
    }

    void copyDtoH(MemorySegment dst, long src, long bytes) {
        checkHostRange("cuMemcpyDtoH_v2", dst, bytes);
        if (dst.isNative() || bytes == 0) {
            CuMem.copyDtoH(dst.isNative() ? dst : MemorySegment.NULL, src, bytes);
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tmp = arena.allocate(Math.min(bytes, STAGING_CHUNK), 64);
            for (long off = 0; off < bytes; off += tmp.byteSize()) {
                long n = Math.min(tmp.byteSize(), bytes - off);
                CuCtx.setCurrent(ctx);
                CuMem.copyDtoH(tmp, src + off, n);
                MemorySegment.copy(tmp, 0, dst, off, n);
            }
        }
    }

    /** Checks that an asynchronous copy's host segment is native and holds {@code bytes}. */
    static void checkAsyncHost(String function, MemorySegment host, long bytes) {
        if (!host.isNative()) {
            throw CudaDevice.invalid(function, "an asynchronous copy needs native host memory (the driver reads it later), got a heap segment");
        }
        checkHostRange(function, host, bytes);
    }
}
