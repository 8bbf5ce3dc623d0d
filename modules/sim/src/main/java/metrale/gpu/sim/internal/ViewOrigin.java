package metrale.gpu.sim.internal;

import metrale.gpu.CudaError;

/**
 * Where a view came from, kept only to explain a fault: the address it starts at, the allocation
 * it points into, and how the kernel obtained it. Building the message happens only on a fault.
 */
final class ViewOrigin {

    private final String source;
    private final long start;
    private final Alloc alloc;
    private final CudaError badError;
    private final String badReason;

    /** A view over live memory: {@code alloc} is {@code null} for shared memory. */
    ViewOrigin(String source, long start, Alloc alloc) {
        this(source, start, alloc, null, null);
    }

    private ViewOrigin(String source, long start, Alloc alloc, CudaError badError, String badReason) {
        this.source = source;
        this.start = start;
        this.alloc = alloc;
        this.badError = badError;
        this.badReason = badReason;
    }

    /** An empty view whose first access raises {@code error}, for a pointer that is not usable. */
    static ViewOrigin bad(String source, long start, CudaError error, String reason) {
        return new ViewOrigin(source, start, null, error, reason);
    }

    /** {@return the fault for an access to element {@code i} of a view of {@code length} elements} */
    SimFault fault(long i, int elemSize, String type, boolean write, long length) {
        String access = (write ? "write" : "read") + " of " + type + " [" + i + "]";
        if (badError != null) {
            return new SimFault(badError, access + " through " + source + " = 0x" + Long.toHexString(start)
                    + ", which " + badReason);
        }
        long addr = start + i * elemSize;
        StringBuilder sb = new StringBuilder(access);
        if (alloc == null) {
            sb.append(" at byte offset ").append(i * elemSize).append(" of ").append(source)
                    .append(", which has ").append(length).append(' ').append(type).append(" elements (")
                    .append(length * elemSize).append(" bytes)");
        } else {
            sb.append(" at address 0x").append(Long.toHexString(addr)).append(" through a view of ").append(source)
                    .append(" = 0x").append(Long.toHexString(start)).append(" (").append(length).append(' ')
                    .append(type).append(" elements to the end of ").append(alloc).append("); the access is ");
            if (i < 0) {
                sb.append(-i * elemSize).append(" bytes before the view's start");
            } else {
                sb.append((i - length) * elemSize).append(" bytes past the allocation's end");
            }
        }
        return new SimFault(CudaError.ILLEGAL_ADDRESS, sb.toString());
    }
}
