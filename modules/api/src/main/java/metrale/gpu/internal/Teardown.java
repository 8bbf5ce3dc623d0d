// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.GpuException;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import metrale.gpu.spi.Driver;

/**
 * What close releases, in order: open captures ended, the context synchronized (unless a fault
 * was latched), then graphs, the quarantine, leaked allocations, the pool, arena chunks, pinned
 * memory, the staging buffers, events, streams and modules, and last the driver. Every step is
 * attempted; a failure is logged, never thrown, and after a fault only at debug level, since
 * every release then fails the same way.
 */
final class Teardown {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    private final Core c;

    Teardown(Core c) {
        this.c = c;
    }

    /** Releases everything; runs once, after the last call in flight has left the closed gate. */
    void release() {
        boolean faulted = c.gate().latched() != null;
        c.resources().logAtClose(c.resources().close());
        endOpenCaptures();
        if (!faulted) {
            faulted = synchronizeFaulted();
        }
        boolean quiet = faulted;
        Driver driver = c.driver();
        for (HandleTable.Slot g : c.graphs().drain()) {
            quietly("cuGraphExecDestroy", quiet, () -> driver.graphExecDestroy(g.raw()));
            quietly("cuGraphDestroy", quiet, () -> driver.graphDestroy((Long) g.extra()));
        }
        try {
            c.quarantine().flush(false);
        } catch (RuntimeException e) {
            LOG.log(quiet ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "metrale-gpu: close: giving back the quarantine failed: " + e.getMessage());
        }
        freeLeaks(quiet);
        c.pool().close((what, step) -> quietly(what, quiet, step));
        for (ArenaTable.Chunk chunk : c.arenas().drain()) {
            quietly("cuMemFree_v2 arena chunk 0x" + Long.toHexString(chunk.base), quiet, () -> driver.memFree(chunk.base));
        }
        for (MemorySegment seg : c.pinned().drain()) {
            quietly("cuMemFreeHost", quiet, () -> driver.memFreeHost(seg));
        }
        c.staging().close((what, step) -> quietly(what, quiet, step));
        c.uploads().close((what, step) -> quietly(what, quiet, step));
        for (HandleTable.Slot ev : c.events().drain()) {
            quietly("cuEventDestroy_v2", quiet, () -> driver.eventDestroy(ev.raw()));
        }
        for (HandleTable.Slot st : c.streams().drain()) {
            quietly("cuStreamDestroy_v2", quiet, () -> driver.streamDestroy(st.raw()));
        }
        for (long m : c.modules().drain(c.functions())) {
            quietly("cuModuleUnload", quiet, () -> driver.moduleUnload(m));
        }
        c.opCache().clear();
        quietly("closing the driver", quiet, driver::close);
    }

    /**
     * Ends the captures a closed call left open: they would refuse the sync and the frees after
     * (900 under GLOBAL mode). Ended from whichever thread closes.
     */
    private void endOpenCaptures() {
        List<Long> capturable = new ArrayList<>(List.of(Stream.PER_THREAD.handle()));
        for (HandleTable.Slot st : c.streams().snapshot()) {
            capturable.add(st.raw());
        }
        for (long raw : capturable) {
            if (c.capturingRaw(raw)) {
                c.pool().captureEnded(raw);
                quietly("cuStreamEndCapture", true, () -> {
                    long graph = c.driver().streamEndCapture(raw);
                    if (graph != 0) {
                        c.driver().graphDestroy(graph);
                    }
                });
            }
        }
    }

    /**
     * Synchronizes the context: pending async copies may still write pinned memory or read
     * buffers freed after. {@return whether it surfaced a sticky fault no call had surfaced}
     */
    private boolean synchronizeFaulted() {
        try {
            c.driver().ctxSynchronize();
            return false;
        } catch (GpuException e) {
            // A fault that surfaces only now makes every release after it fail the same way.
            boolean faulted = e.error().isSticky() || c.failures().probe().isSticky();
            LOG.log(faulted || e.error().isTeardown() ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "metrale-gpu: close: cuCtxSynchronize failed: " + e.getMessage());
            if (faulted) {
                LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: the context reports a sticky fault "
                        + "no call had surfaced: " + e.getMessage());
            }
            return faulted;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: cuCtxSynchronize failed: " + e);
            return false;
        }
    }

    /** Logs and frees what is left on the ledger; a leak the caller reported itself is logged at debug level. */
    private void freeLeaks(boolean quiet) {
        List<Ledger.Entry> leaks = c.ledger().drain("close");
        if (leaks.isEmpty()) {
            return;
        }
        long bytes = 0;
        int unreported = 0;
        int named = 0;
        for (Ledger.Entry e : leaks) {
            if (!c.reportedLeaks().contains(e.allocation().index())) {
                bytes += e.allocation().bytes();
                unreported++;
                if (LeakDetection.hasSite(e.allocation().site())) {
                    named++;
                }
            }
        }
        if (unreported > 0) {
            String coverage = c.sites().coverage(named, unreported, "leaked allocations");
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: " + unreported + " allocation(s) of "
                    + bytes + " bytes were never freed; freeing them" + (coverage.isEmpty() ? "" : "; " + coverage));
        }
        for (Ledger.Entry e : leaks) {
            boolean reported = c.reportedLeaks().contains(e.allocation().index());
            LOG.log(reported ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "metrale-gpu: leak: " + e.describe() + (reported ? " (reported before close)" : ""));
            if (c.pool().owns(e.base())) {
                continue;
            }
            quietly("cuMemFree_v2 " + e.allocation().ptr(), quiet, () -> c.driver().memFree(e.base()));
        }
    }

    /** Runs a cleanup step; a failure is logged, never thrown. */
    private static void quietly(String what, boolean faulted, Runnable step) {
        try {
            step.run();
        } catch (GpuException e) {
            System.Logger.Level level = e.error().isTeardown() || faulted ? System.Logger.Level.DEBUG
                    : System.Logger.Level.WARNING;
            LOG.log(level, "metrale-gpu: close: " + what + " failed: " + e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "metrale-gpu: close: " + what + " failed: " + e);
        }
    }
}
