// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * The rules of the allocation calls over the address space: their out-of-memory answers (an
 * injected failure, the capacity, the JVM's native memory), the flags of page-locked host memory,
 * and what {@code cuMemFree}, {@code cuMemFreeHost} and {@code cuMemHostGetDevicePointer} accept.
 * The device calls these doors under its lock, after its capture checks; not thread-safe on its own.
 */
final class AllocRules {

    private final DeviceMemory memory;

    AllocRules(DeviceMemory memory) {
        this.memory = memory;
    }

    /**
     * {@return the base of a new device or managed allocation of {@code bytes}} A negative count is
     * a {@code size_t} too large to fit.
     *
     * @param injected the allocation's number when {@code SimControls.failAllocation} armed it to fail, else 0
     * @param d        the call's operands, for the message
     */
    long allocate(Alloc.Kind kind, long bytes, long injected, String op, String d) {
        if (injected != 0) {
            throw err(CudaError.OUT_OF_MEMORY, op, d + ": injected by SimControls.failAllocation (device allocation #"
                    + injected + "); free " + memory.free() + " of " + memory.capacity() + " bytes");
        }
        if (bytes < 0 || !memory.fits(bytes)) {
            throw err(CudaError.OUT_OF_MEMORY, op, d + (bytes < 0 ? " (as size_t " + Long.toUnsignedString(bytes) + ")" : "")
                    + ": exceeds free device memory: free " + memory.free() + " of " + memory.capacity() + " bytes");
        }
        Alloc a = memory.allocate(kind, bytes);
        if (a == null) {
            throw err(CudaError.OUT_OF_MEMORY, op, d + ": the JVM could not get " + bytes
                    + " bytes of native memory to back it (lower sim.capacity or raise the process's memory)");
        }
        return a.base;
    }

    /** {@return the live device or managed allocation {@code cuMemFree} may free at {@code ptr}, not 0} */
    Alloc freeable(long ptr, String op) {
        Alloc a = memory.atBase(ptr);
        if (a == null || a.kind == Alloc.Kind.PINNED) {
            throw err(CudaError.INVALID_VALUE, op, "ptr=0x" + Long.toHexString(ptr) + ": " + memory.whyNotFreeable(ptr, a));
        }
        return a;
    }

    /** {@code cuMemHostAlloc}: {@return new page-locked memory (not charged to the device), or NULL for 0 bytes} */
    MemorySegment hostAlloc(long bytes, int flags, String op, String d) {
        if ((flags & ~7) != 0) {
            throw err(CudaError.INVALID_VALUE, op, d + ": only PORTABLE (1), DEVICEMAP (2) and WRITECOMBINED (4) are flags");
        }
        if (bytes == 0) {
            return MemorySegment.NULL;
        }
        if (bytes < 0) {
            throw err(CudaError.OUT_OF_MEMORY, op, d + " (as size_t " + Long.toUnsignedString(bytes) + ")");
        }
        Alloc a = memory.allocate(Alloc.Kind.PINNED, bytes);
        if (a == null) {
            throw err(CudaError.OUT_OF_MEMORY, op, d + ": the JVM could not get that much native memory");
        }
        return a.segment;
    }

    /** {@return the live page-locked allocation {@code host} is the base of, for {@code cuMemFreeHost}} */
    Alloc pinnedBase(MemorySegment host, String op, String d) {
        Alloc a = host.isNative() ? memory.atBase(host.address()) : null;
        if (a == null || a.kind != Alloc.Kind.PINNED) {
            throw err(CudaError.INVALID_VALUE, op, d + ": " + (!host.isNative() ? "a heap segment"
                    : a != null ? "this is " + a + "; free it with cuMemFree"
                    : memory.find(host.address()) != null ? "an interior pointer into " + memory.find(host.address())
                    : "not the base of live page-locked memory from cuMemHostAlloc (already freed, or other memory)"));
        }
        return a;
    }

    /** {@code cuMemHostGetDevicePointer}: {@return the device address of page-locked {@code host}, its own (unified addressing)} */
    long devicePointer(MemorySegment host, String op) {
        long addr = host == null || !host.isNative() ? 0 : host.address();
        Alloc a = addr == 0 ? null : memory.find(addr);
        if (a == null || a.kind != Alloc.Kind.PINNED) {
            throw err(CudaError.INVALID_VALUE, op, "host=" + (host == null ? "null" : "0x" + Long.toHexString(addr))
                    + ": not inside page-locked memory from cuMemHostAlloc");
        }
        return addr;
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }
}
