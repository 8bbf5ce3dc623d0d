// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * A context's sticky error (CUDA_SEMANTICS section 4) and the waits that can latch it. A device
 * fault in work that a waiting call runs, or an injected sync failure that call reports, latches
 * here and poisons the simulated process; a fault another device of the process latched is adopted
 * at this context's next call. Once latched, every call fails with it and pending work is dropped,
 * as it will never run; there is no reset. Guarded by the device lock.
 */
final class FaultLatch {

    private final SimProcess process;
    private final Scheduler scheduler;
    private final Engine engine;
    private CudaError error;
    private String detail;

    FaultLatch(SimProcess process, Scheduler scheduler, Engine engine) {
        this.process = process;
        this.scheduler = scheduler;
        this.engine = engine;
    }

    /** Fails {@code op} with the latched error, the process's adopted first. */
    void check(String op) {
        adopt();
        if (error != null) {
            throw new GpuException(error, op, "the context is unusable after a sticky fault (no in-process recovery, "
                    + "as on CUDA: close this device and open another in a fresh simulated process): " + detail);
        }
    }

    /** {@return the latched error, or {@code SUCCESS}} {@code adopt}: take the process's first, as a live context would. */
    CudaError probe(boolean adopt) {
        if (adopt) {
            adopt();
        }
        return error == null ? CudaError.SUCCESS : error;
    }

    /** {@code injected}, the error {@code SimControls.failNextSync} armed (or {@code null}), surfaces at the sync {@code op} of {@code what}. */
    void surface(CudaError injected, String op, Object what) {
        if (injected != null) {
            set(injected, injected + " injected by SimControls.failNextSync and reported by " + op + " of " + what);
            throw new GpuException(injected, op, detail);
        }
    }

    /** Waits for {@code target}: runs it and what it depends on, and the clock moves to its end. */
    void runUntil(String op, Object what, Op target) {
        try {
            scheduler.runUntil(target);
        } catch (SimFault f) {
            throw latch(f, op, what);
        }
        if (target != null) {
            engine.advanceTo(target.end);
        }
    }

    /** Waits for the whole device: runs everything, and the clock moves to when the last work ends. */
    void runAll(String op, Object what) {
        try {
            scheduler.runAll();
        } catch (SimFault f) {
            throw latch(f, op, what);
        }
        engine.advanceTo(scheduler.horizon());
    }

    /** A poll that found {@code target} pending: the device advances by one operation toward it. */
    void step(String op, Object what, Op target) {
        try {
            scheduler.step(target);
        } catch (SimFault f) {
            throw latch(f, op, what);
        }
    }

    /** A sticky fault of another device in this simulated process poisons this one too. */
    private void adopt() {
        if (error != null) {
            return;
        }
        SimProcess.Fault f = process.fault();
        if (f != null) {
            error = f.error();
            detail = "latched in another simulator runtime of " + process + ": " + f.detail();
            scheduler.discardAll();
        }
    }

    /** Latches {@code e} here and in the simulated process; pending work is dropped, as it will never run. */
    private void set(CudaError e, String d) {
        error = e;
        detail = d;
        process.poison(e, d);
        scheduler.discardAll();
    }

    /** Latches a device fault as the sticky error. */
    private GpuException latch(SimFault f, String op, Object what) {
        set(f.error, f.error + " in " + f.getMessage());
        String w = String.valueOf(what);
        return new GpuException(f.error, f.error.code(), op, (w.isEmpty() ? "" : w + ": ") + "device fault: "
                + f.getMessage(), f);
    }
}
