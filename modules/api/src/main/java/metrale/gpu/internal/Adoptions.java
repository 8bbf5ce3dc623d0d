// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import metrale.gpu.AdoptedMemory;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;

/**
 * The foreign device ranges a runtime adopted ({@code Gpu.adoptDeviceMemory}): memory of another
 * library that range checks accept and that nothing in the runtime ever frees. Ranges do not
 * overlap one another. Thread-safe: adopting and releasing take the table's lock; lookups read the
 * concurrent map without it.
 */
final class Adoptions {

    // Device addresses are unsigned; ordered so a floor lookup finds the range that may hold an address.
    private final ConcurrentSkipListMap<Long, AdoptedMemory> ranges = new ConcurrentSkipListMap<>(Long::compareUnsigned);
    private final Object lock = new Object();

    /**
     * Adopts {@code [address, address + bytes)}.
     *
     * @param conflict why the range is this runtime's own memory, or {@code null} when it is not
     * @throws GpuException {@code INVALID_VALUE} for a null address, a range that wraps, a range that
     *                      overlaps an adoption, or one that is this runtime's own memory
     */
    AdoptedMemory adopt(long address, long bytes, String label, String site, String conflict) {
        String op = "adoptDeviceMemory";
        String range = "[0x" + Long.toHexString(address) + ", +" + bytes + ")";
        if (address == 0) {
            throw new GpuException(CudaError.INVALID_VALUE, op, "address=0: the null pointer is no device memory");
        }
        if (Long.compareUnsigned(address + bytes, address) < 0) {
            throw new GpuException(CudaError.INVALID_VALUE, op, range + " wraps past the end of the address space");
        }
        if (conflict != null) {
            throw new GpuException(CudaError.INVALID_VALUE, op, range + " is this runtime's own memory (" + conflict
                    + "): only memory another library allocated can be adopted");
        }
        synchronized (lock) {
            AdoptedMemory over = overlapping(address, bytes);
            if (over != null) {
                throw new GpuException(CudaError.INVALID_VALUE, op, range + " overlaps the adopted range "
                        + over.describe() + "; release it first");
            }
            AdoptedMemory a = new AdoptedMemory(new DevicePtr(address), bytes, label, site);
            ranges.put(address, a);
            return a;
        }
    }

    /**
     * Releases the adoption that starts at {@code ptr}.
     *
     * @return it
     * @throws GpuException {@code INVALID_VALUE} when no adoption starts there
     */
    AdoptedMemory release(long ptr) {
        synchronized (lock) {
            AdoptedMemory a = ranges.remove(ptr);
            if (a != null) {
                return a;
            }
            AdoptedMemory in = containing(ptr);
            throw new GpuException(CudaError.INVALID_VALUE, "releaseAdoption", "ptr=0x" + Long.toHexString(ptr)
                    + (in != null ? " is inside the adopted range " + in.describe() + ", not its start"
                    : " starts no adopted range (released already, or never adopted)"));
        }
    }

    /** {@return whether {@code [p, p + bytes)} lies inside one adopted range} Allocates nothing. */
    boolean covers(long p, long bytes) {
        Map.Entry<Long, AdoptedMemory> f = ranges.floorEntry(p);
        if (f == null) {
            return false;
        }
        long off = p - f.getKey();
        long size = f.getValue().bytes();
        return Long.compareUnsigned(off, size) < 0 && Long.compareUnsigned(bytes, size - off) <= 0;
    }

    /** {@return why {@code [p, p + bytes)} starts in an adopted range but runs past it, or {@code null}} */
    String explainPast(long p, long bytes) {
        AdoptedMemory a = containing(p);
        if (a == null) {
            return null;
        }
        long off = p - a.ptr().address();
        return "[0x" + Long.toHexString(p) + ", +" + bytes + ") starts at +" + off + " in " + a.describe()
                + " but runs " + (bytes - (a.bytes() - off)) + " byte(s) past its end";
    }

    /** {@return the adopted ranges, by address} */
    List<AdoptedMemory> snapshot() {
        return List.copyOf(ranges.values());
    }

    /** {@return the report's section on adopted ranges, or empty when there are none} Each line ends in a newline. */
    String report() {
        List<AdoptedMemory> all = snapshot();
        if (all.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("foreign device memory (adopted, never freed by this runtime): ")
                .append(all.size()).append(" range(s)\n");
        for (AdoptedMemory a : all) {
            sb.append("  ").append(a.describe()).append('\n');
        }
        return sb.toString();
    }

    private AdoptedMemory containing(long p) {
        Map.Entry<Long, AdoptedMemory> f = ranges.floorEntry(p);
        return f != null && Long.compareUnsigned(p - f.getKey(), f.getValue().bytes()) < 0 ? f.getValue() : null;
    }

    /** {@return an adopted range that shares a byte with {@code [p, p + bytes)}, or {@code null}} */
    private AdoptedMemory overlapping(long p, long bytes) {
        AdoptedMemory below = containing(p);
        if (below != null) {
            return below;
        }
        Map.Entry<Long, AdoptedMemory> above = ranges.higherEntry(p);
        return above != null && Long.compareUnsigned(above.getKey() - p, bytes) < 0 ? above.getValue() : null;
    }
}
