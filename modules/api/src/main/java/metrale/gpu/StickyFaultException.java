// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A call refused because an earlier sticky device fault (an illegal address, a trap, an assert)
 * was latched: CUDA leaves the context unusable after one, so every later call fails fast with
 * this, naming the original fault, the call that surfaced it and that call's site.
 *
 * <p>{@link Gpu#close()} still completes after a fault.
 */
public final class StickyFaultException extends GpuException {

    private static final long serialVersionUID = 1L;

    private final transient GpuException original;
    /** The runtime call during which the fault surfaced. */
    private final String faultCall;
    /** That call's caller, {@code File.java:line}. */
    private final String faultSite;

    /**
     * Creates the exception for a call refused after {@code original} was latched.
     *
     * @param original  the failure that latched the fault
     * @param faultCall the runtime call during which the fault surfaced, e.g. {@code launch heat::jacobi}
     * @param faultSite that call's caller, {@code File.java:line}
     * @param thisCall  the call now refused, with its arguments
     */
    public StickyFaultException(GpuException original, String faultCall, String faultSite, String thisCall) {
        super(thisCall + " refused: the context is unusable after sticky " + original.error()
                        + " latched during " + faultCall + " at " + faultSite + " (" + original.getMessage() + ")",
                original.error(), thisCall, "", original);
        this.original = original;
        this.faultCall = faultCall;
        this.faultSite = faultSite;
    }

    /** {@return the failure that latched the fault} */
    public GpuException original() {
        return original;
    }

    /** {@return the runtime call during which the fault surfaced} */
    public String faultCall() {
        return faultCall;
    }

    /** {@return the caller site of that call, {@code File.java:line}} */
    public String faultSite() {
        return faultSite;
    }
}
