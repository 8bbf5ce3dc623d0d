// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import metrale.gpu.GpuException;
import metrale.gpu.StickyFaultException;

/**
 * The lifetime word of one runtime, in the manner of Lucene's {@code RefCountedSharedArena}: one
 * atomic {@code long} holds the closed bit, the latched-fault bit, the parity of the current grace
 * period and the counts of calls in flight, so a call enters with one CAS and leaves with one
 * atomic add, and {@link #close(Runnable, long)} can wait for the calls in flight before anything
 * is released.
 *
 * <p>Layout: bit 63 closed, bit 62 fault latched, bit 61 current parity; bits 40–59 the
 * <em>releasers</em> in flight (calls that destroy or replace a handle, see below); bits 20–39
 * and 0–19 the ordinary calls in flight that entered under parity 1 and 0.
 *
 * <p><b>Grace periods.</b> A call that retires a handle (destroying a stream or event, replacing a
 * module, freeing pinned memory) enters as a releaser, takes the handle out of its table, and
 * calls {@link #awaitGrace()} before the driver destroys it: that flips the parity and waits for
 * the calls that entered under the old parity to leave. Every call that could still hold the
 * handle entered before it left its table, so under the old parity; every call after the flip
 * finds the table without it. Releasers are not counted in a parity, so two releasers never wait
 * for each other, and an ordinary call never blocks on a lock a releaser holds while it waits.
 *
 * <p><b>Passes.</b> Entering returns a {@link Pass}, which leaves when closed, so a call is framed
 * as {@code try (var _ = gate.enter("alloc")) { ... }}. The gate makes its three passes (parity 0,
 * parity 1, releaser) once: a pass carries no state of its call, so concurrent calls share it.
 *
 * <p>Thread-safe; lock-free on the enter and leave paths, which allocate nothing.
 */
final class Gate {

    /**
     * A call inside the gate: closing it leaves. Shared by every call that entered with the same
     * token, so each entry must be closed exactly once (a try-with-resources does that).
     */
    static final class Pass implements AutoCloseable {

        private final Gate gate;
        private final int token;

        private Pass(Gate gate, int token) {
            this.gate = gate;
            this.token = token;
        }

        /** {@return the parity the call entered under (0 or 1), or {@link #RELEASER}} */
        int token() {
            return token;
        }

        /** Leaves the gate: the last call out of a closed gate runs the release {@link Gate#close} left pending. */
        @Override
        public void close() {
            gate.leave(token);
        }
    }

    /**
     * A latched sticky fault.
     *
     * @param original the failure that latched it
     * @param call     the runtime call during which it surfaced
     * @param site     that call's caller, {@code File.java:line}
     */
    record Latched(GpuException original, String call, String site) {
    }

    /** The token of a releaser's {@link Pass}. */
    static final int RELEASER = 2;

    private static final long CLOSED = 1L << 63;
    private static final long FAULT = 1L << 62;
    private static final long PARITY = 1L << 61;
    private static final int FIELD = 20;
    private static final long MAX = (1L << FIELD) - 1;
    private static final long UNIT_RELEASER = 1L << (2 * FIELD);
    private static final long COUNTS = (1L << (3 * FIELD)) - 1;

    private static final VarHandle WORD;

    static {
        try {
            WORD = MethodHandles.lookup().findVarHandle(Gate.class, "word", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through WORD
    private volatile long word;
    private final AtomicReference<Latched> latched = new AtomicReference<>();
    private volatile String closedAt;
    private final Object graceLock = new Object();
    private final AtomicBoolean releaseClaimed = new AtomicBoolean();
    private volatile Runnable pendingRelease;
    /** Set once the release has returned (or thrown), on whichever thread ran it. */
    private volatile boolean releaseDone;
    /** Indexed by token: made once, so entering allocates nothing. */
    private final Pass[] passes = {new Pass(this, 0), new Pass(this, 1), new Pass(this, RELEASER)};

    /**
     * Enters an ordinary call.
     *
     * @param call the call's name, for a refusal
     * @return the pass to close when the call leaves
     * @throws IllegalStateException after {@link #close}, naming where it was closed
     * @throws StickyFaultException  after a latched sticky fault
     */
    Pass enter(String call) {
        for (;;) {
            long w = (long) WORD.getVolatile(this);
            if ((w & (CLOSED | FAULT)) != 0) {
                throw refuse(w, call);
            }
            int p = (w & PARITY) != 0 ? 1 : 0;
            if (((w >>> (p * FIELD)) & MAX) == MAX) {
                throw tooMany(call);
            }
            if (WORD.compareAndSet(this, w, w + (1L << (p * FIELD)))) {
                return passes[p];
            }
        }
    }

    /**
     * Enters a releaser: a call that retires a handle and waits for a grace period.
     *
     * @param call the call's name, for a refusal
     * @return the releasers' pass, to close when the call leaves
     * @throws IllegalStateException after {@link #close}
     * @throws StickyFaultException  after a latched sticky fault
     */
    Pass enterReleaser(String call) {
        for (;;) {
            long w = (long) WORD.getVolatile(this);
            if ((w & (CLOSED | FAULT)) != 0) {
                throw refuse(w, call);
            }
            if (((w >>> (2 * FIELD)) & MAX) == MAX) {
                throw tooMany(call);
            }
            if (WORD.compareAndSet(this, w, w + UNIT_RELEASER)) {
                return passes[RELEASER];
            }
        }
    }

    /**
     * Refuses a call as {@link #enter} does, without entering: for a call that touches neither the
     * driver nor a handle, so that the release running meanwhile cannot harm it.
     *
     * @param call the call's name, for a refusal
     * @throws IllegalStateException after {@link #close}, naming where it was closed
     * @throws StickyFaultException  after a latched sticky fault
     */
    void check(String call) {
        long w = (long) WORD.getVolatile(this);
        if ((w & (CLOSED | FAULT)) != 0) {
            throw refuse(w, call);
        }
    }

    /**
     * Leaves the gate. The last call to leave a closed gate runs the release that
     * {@link #close} left pending, if it stopped waiting.
     *
     * @param token the token of the pass that entered
     */
    private void leave(int token) {
        long unit = 1L << (token * FIELD);
        long w = (long) WORD.getAndAdd(this, -unit) - unit;
        if ((w & CLOSED) != 0 && (w & COUNTS) == 0 && pendingRelease != null) {
            runRelease();
        }
    }

    /**
     * Waits until every ordinary call that entered before this one began has left. Only a
     * releaser may call it (an ordinary call would wait for itself).
     */
    void awaitGrace() {
        synchronized (graceLock) {
            long w;
            do {
                w = (long) WORD.getVolatile(this);
            } while (!WORD.compareAndSet(this, w, w ^ PARITY));
            int old = (w & PARITY) != 0 ? 1 : 0;
            long spins = 0;
            while ((((long) WORD.getVolatile(this) >>> (old * FIELD)) & MAX) != 0) {
                backOff(spins++);
            }
        }
    }

    /**
     * Closes the gate: later calls are refused; then waits up to {@code waitNanos} for the calls in
     * flight to leave and for {@code release} to have run, here or on the last call out. If they
     * have not left by then, the last of them runs it when it leaves.
     *
     * @param release   what frees the runtime's resources; run exactly once
     * @param waitNanos how long to wait for calls in flight
     * @param site      where close was called, named in later refusals
     * @return {@code false} if the gate was already closed (nothing else happens); otherwise
     *         {@code true}, with the number of calls still in flight readable from {@link #inFlight()}
     */
    boolean close(Runnable release, long waitNanos, String site) {
        for (;;) {
            long w = (long) WORD.getVolatile(this);
            if ((w & CLOSED) != 0) {
                return false;
            }
            closedAt = site + " on thread '" + Thread.currentThread().getName() + "'";
            if (WORD.compareAndSet(this, w, w | CLOSED)) {
                break;
            }
        }
        long deadline = System.nanoTime() + waitNanos;
        long spins = 0;
        while (inFlight() != 0 && System.nanoTime() - deadline < 0) {
            backOff(spins++);
        }
        pendingRelease = release;
        // Read after publishing: a call that left meanwhile either saw the pending release or is
        // seen here as gone.
        if (inFlight() == 0) {
            runRelease();
        }
        awaitRelease(deadline, spins);
        return true;
    }

    /**
     * The last call out may have read the pending release after its count reached zero and
     * claimed it first: close still returns only once it has run, within the same wait.
     */
    private void awaitRelease(long deadline, long spins) {
        while (releaseClaimed.get() && !releaseDone && System.nanoTime() - deadline < 0) {
            backOff(spins++);
        }
    }

    private void runRelease() {
        Runnable r = pendingRelease;
        if (r != null && releaseClaimed.compareAndSet(false, true)) {
            pendingRelease = null;
            try {
                r.run();
            } finally {
                releaseDone = true;
            }
        }
    }

    /** {@return the calls in flight, ordinary and releasers} */
    int inFlight() {
        long w = (long) WORD.getVolatile(this);
        return (int) ((w & MAX) + ((w >>> FIELD) & MAX) + ((w >>> (2 * FIELD)) & MAX));
    }

    /** {@return whether the release has run or is running} */
    boolean released() {
        return releaseClaimed.get();
    }

    /**
     * Latches a sticky fault unless one is latched already.
     *
     * @return whether this call latched it
     */
    boolean latch(GpuException original, String call, String site) {
        if (!latched.compareAndSet(null, new Latched(original, call, site))) {
            return false;
        }
        long w;
        do {
            w = (long) WORD.getVolatile(this);
        } while (!WORD.compareAndSet(this, w, w | FAULT));
        return true;
    }

    /** {@return the latched fault, or {@code null}} */
    Latched latched() {
        return latched.get();
    }

    /** {@return whether the gate is closed} */
    boolean isClosed() {
        return ((long) WORD.getVolatile(this) & CLOSED) != 0;
    }

    /** {@return the latched fault as a refusal of {@code call}, if a fault was latched} */
    Optional<StickyFaultException> fault(String call) {
        Latched l = latched.get();
        return l == null ? Optional.empty()
                : Optional.of(new StickyFaultException(l.original(), l.call(), l.site(), call));
    }

    /** {@return what a call refused now throws: the close, or the latched fault} */
    RuntimeException refusal(String call) {
        return refuse((long) WORD.getVolatile(this), call);
    }

    private RuntimeException refuse(long w, String call) {
        if ((w & CLOSED) != 0) {
            return new IllegalStateException("Gpu is closed: " + call + " refused; close() was called at " + closedAt);
        }
        Latched l = latched.get();
        return new StickyFaultException(l.original(), l.call(), l.site(), call);
    }

    private static IllegalStateException tooMany(String call) {
        return new IllegalStateException(call + ": more than " + MAX + " calls in flight on one runtime");
    }

    /** Spins briefly, then yields, then parks with a growing delay of at most a millisecond. */
    private static void backOff(long spins) {
        if (spins < 64) {
            Thread.onSpinWait();
        } else if (spins < 128) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(Math.min(TimeUnit.MILLISECONDS.toNanos(1), 1_000L << Math.min(spins - 128, 10)));
        }
    }
}
