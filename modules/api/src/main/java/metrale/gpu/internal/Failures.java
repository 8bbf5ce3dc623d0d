// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.StickyFaultException;
import metrale.gpu.spi.Driver;
import metrale.telemetry.CallSites;

/**
 * The fault latch of one runtime: what a failed driver call throws. When a driver call fails,
 * the context is probed ({@link Driver#probe()}); if the error or the probe is sticky, the
 * failure is latched in the {@link Gate} with the runtime call during which it surfaced and that
 * call's site, and every later call is refused with {@link StickyFaultException}. The call itself
 * throws the original failure, for an illegal address with the ledger entry nearest the faulting
 * address added.
 *
 * <p>Made before the {@link Core} it belongs to, since the pool fails through it too.
 * Thread-safe: the latch is the gate's.
 */
final class Failures {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /** How far from an allocation a faulting address may be for the fault report to name it. */
    private static final long NEAR = 1 << 20;

    private static final Pattern HEX = Pattern.compile("0x([0-9a-fA-F]{1,16})");

    private final Driver driver;
    private final Gate gate;
    private final Ledger ledger;

    Failures(Driver driver, Gate gate, Ledger ledger) {
        this.driver = driver;
        this.gate = gate;
        this.ledger = ledger;
    }

    /**
     * Runs the fault latch for a failed driver call.
     *
     * @param call the runtime call, e.g. {@code launch heat::jacobi}
     * @return what the call should throw: {@code e}, {@code e} enriched when it latched, or a
     *         refusal if another thread latched first
     */
    RuntimeException fail(GpuException e, String call) {
        Gate.Latched s = gate.latched();
        if (s != null) {
            return e.error().isSticky() ? refuseLatched(s, call) : e;
        }
        CudaError probe = probe();
        if (!e.error().isSticky() && !probe.isSticky()) {
            return e;
        }
        String site = CallSites.caller();
        CudaError error;
        int raw;
        String details;
        if (e.error().isSticky()) {
            error = e.error();
            raw = e.rawCode();
            details = e.details();
            if (error == CudaError.ILLEGAL_ADDRESS) {
                details = join(join(details, freedMemory(e.getMessage())), nearestAllocation(e.getMessage()));
            }
        } else {
            // The call's own error is an argument error, but the context reports a sticky one
            // from earlier asynchronous work: latch what the context is in.
            error = probe;
            raw = probe.code();
            details = "the context reports sticky " + probe + " after: " + e.getMessage();
        }
        GpuException original = new GpuException(error, raw, e.operation(),
                join(details, "surfaced during " + call + " at " + site), e);
        if (gate.latch(original, call, site)) {
            LOG.log(System.Logger.Level.ERROR, "metrale-gpu: sticky fault latched: " + original.getMessage()
                    + "; every later call fails with StickyFaultException");
            return original;
        }
        return refuseLatched(gate.latched(), call);
    }

    private static StickyFaultException refuseLatched(Gate.Latched l, String call) {
        return new StickyFaultException(l.original(), l.call(), l.site(), call);
    }

    private static String join(String a, String b) {
        return a.isEmpty() ? b : b.isEmpty() ? a : a + "; " + b;
    }

    /** {@return the context's state: a sticky error, or {@code SUCCESS} also when the probe itself fails} */
    CudaError probe() {
        try {
            CudaError p = driver.probe();
            return p == null ? CudaError.SUCCESS : p;
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.DEBUG, "metrale-gpu: context probe failed: " + ex);
            return CudaError.SUCCESS;
        }
    }

    /**
     * {@return what the runtime remembers of freed memory at the first address the driver's message
     * names that no live allocation holds, or empty}: a kernel that touched a buffer after its free
     * is told where that buffer was allocated and freed
     */
    private String freedMemory(String message) {
        Matcher m = HEX.matcher(message == null ? "" : message);
        while (m.find()) {
            long addr;
            try {
                addr = Long.parseUnsignedLong(m.group(1), 16);
            } catch (NumberFormatException ex) {
                continue;
            }
            String was = ledger.freedHolding(addr);
            if (was != null) {
                return "0x" + Long.toHexString(addr) + " lies in memory this runtime freed: " + was;
            }
        }
        return "";
    }

    /**
     * {@return the live allocation nearest an address the driver's message names, or empty} Of
     * the hex numbers in the message (which may also name kernels or streams), the one closest to
     * a live allocation is taken as the faulting address; one more than {@link #NEAR} bytes from
     * every allocation (a null pointer, say) names none.
     */
    private String nearestAllocation(String message) {
        Matcher m = HEX.matcher(message == null ? "" : message);
        long bestAddr = 0;
        long bestDist = -1;
        Ledger.Entry best = null;
        long insideAddr = 0;
        Ledger.Entry inside = null;
        while (m.find()) {
            long addr;
            try {
                addr = Long.parseUnsignedLong(m.group(1), 16);
            } catch (NumberFormatException ex) {
                continue;
            }
            Ledger.Entry near = ledger.nearest(addr);
            if (near == null) {
                return "";
            }
            boolean within = Long.compareUnsigned(addr, near.base()) >= 0
                    && Long.compareUnsigned(addr, near.end() + near.pad()) < 0;
            if (within) {
                // A live address the message also quotes (a kernel argument, an allocation's range) is
                // not where the access went; it is named only when the message names no other.
                if (inside == null) {
                    inside = near;
                    insideAddr = addr;
                }
                continue;
            }
            long dist = Long.compareUnsigned(addr, near.base()) < 0 ? near.base() - addr : addr - (near.end() + near.pad());
            if (best == null || Long.compareUnsigned(dist, bestDist) < 0) {
                best = near;
                bestDist = dist;
                bestAddr = addr;
            }
        }
        if (best == null && inside != null) {
            best = inside;
            bestAddr = insideAddr;
            bestDist = 0;
        }
        if (best == null || Long.compareUnsigned(bestDist, NEAR) > 0) {
            return "";
        }
        long off = bestAddr - best.base();
        String where;
        if (off >= 0 && off < best.allocation().bytes()) {
            where = "inside it, at +" + off;
        } else if (off >= 0) {
            where = (off - best.allocation().bytes()) + " byte(s) past its end"
                    + (off < best.allocation().bytes() + best.pad() ? ", in its red zone" : "");
        } else {
            where = (-off) + " byte(s) before its start";
        }
        // With a red zone the driver's allocation (what a backend's own message sizes) is the
        // buffer plus its pad: say so, so the two sizes in one message are seen to be one buffer.
        String pad = best.pad() == 0 ? "" : " (with its " + best.pad() + "-byte red zone, the driver allocation of +"
                + (best.allocation().bytes() + best.pad()) + " bytes)";
        return "nearest allocation to 0x" + Long.toHexString(bestAddr) + ": " + best.describe() + pad + ", " + where;
    }
}
