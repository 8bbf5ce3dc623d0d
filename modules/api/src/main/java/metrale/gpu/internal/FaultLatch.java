package metrale.gpu.internal;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.GpuException;
import metrale.gpu.StickyFaultException;

/**
 * The gate every runtime call passes: open, latched after a sticky fault, or closed. One atomic
 * reference holds the state so the open path is a single volatile read.
 *
 * <p>Transitions: open to latched (first sticky fault wins), open or latched to closed. Closed is
 * final. The latched fault is also kept apart from the state so {@link #fault()} still reports it
 * after close.
 */
final class FaultLatch {

    /** A state other than open. */
    sealed interface State permits Closed, Latched {
    }

    /** The runtime is closed. */
    enum Closed implements State {
        /** The only value. */
        INSTANCE
    }

    /**
     * A latched sticky fault.
     *
     * @param original the failure that latched it
     * @param call     the runtime call during which it surfaced
     * @param site     that call's caller, {@code File.java:line}
     */
    record Latched(GpuException original, String call, String site) implements State {
    }

    private final AtomicReference<State> state = new AtomicReference<>();
    private volatile Latched latched;

    /**
     * Passes when open; otherwise throws what the state demands.
     *
     * @param call the call being made, for the refusal's message
     * @throws StickyFaultException  after a latched fault
     * @throws IllegalStateException after close
     */
    void check(String call) {
        State s = state.get();
        if (s != null) {
            throw refuse(s, call);
        }
    }

    /** {@return the exception a call refused in state {@code s} throws} */
    static RuntimeException refuse(State s, String call) {
        return switch (s) {
            case Closed c -> new IllegalStateException("Gpu is closed");
            case Latched l -> new StickyFaultException(l.original(), l.call(), l.site(), call);
        };
    }

    /** {@return the current state, {@code null} when open} */
    State state() {
        return state.get();
    }

    /**
     * Latches a sticky fault unless one is latched already or the runtime is closed.
     *
     * @return whether this call latched it
     */
    boolean latch(GpuException original, String call, String site) {
        Latched l = new Latched(original, call, site);
        if (state.compareAndSet(null, l)) {
            latched = l;
            return true;
        }
        return false;
    }

    /** Closes the gate. {@return the state before, or {@code null} when it was open} */
    State close() {
        return state.getAndSet(Closed.INSTANCE);
    }

    /** {@return whether the gate is closed} */
    boolean isClosed() {
        return state.get() == Closed.INSTANCE;
    }

    /** {@return the latched fault as a refusal of {@code call}, if a fault was latched} */
    Optional<StickyFaultException> fault(String call) {
        Latched l = latched;
        return l == null ? Optional.empty()
                : Optional.of(new StickyFaultException(l.original(), l.call(), l.site(), call));
    }
}
