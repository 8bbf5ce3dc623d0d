package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * Every stream-capture rule of the simulator in one place (CUDA_SEMANTICS section 3): which calls
 * are refused while a capture is live and with what code, which of them invalidate it, how events
 * fork and join streams into a capture, and how a capture begins and ends. The state lives in
 * {@link Capture}, {@link SimStream#capture} and {@link SimEvent#capturedIn}; the device calls
 * these doors under its lock. Not thread-safe on its own.
 */
final class CaptureRules {

    /** The live captures, in the order they began. */
    final List<Capture> live = new ArrayList<>();
    private long nextId;

    /** A thread that never runs: a segment it cannot access is confined to some thread. */
    private static final Thread NO_THREAD = Thread.ofPlatform().unstarted(() -> { });

    /**
     * A graph replays a captured host copy on the thread that launches it, so a host segment
     * confined to one thread would fail there: refused at capture, invalidating it.
     */
    void checkReadableAnywhere(SimStream s, MemorySegment host, String op, String d, String which) {
        if (!host.isAccessibleBy(NO_THREAD)) {
            throw bad(s, CudaError.INVALID_VALUE, op, d + ": the host " + which + " is confined to one thread "
                    + "(Arena.ofConfined), but a graph may be launched from any thread; use a shared, global or "
                    + "page-locked segment in a capture; the capture is now invalidated");
        }
    }

    void checkInvalidated(SimStream s, String op) {
        if (s.capture != null && s.capture.invalidated) {
            throw err(CudaError.STREAM_CAPTURE_INVALIDATED, op, "stream=" + s + ": " + s.capture
                    + "; end the capture (it reports 901) and begin again");
        }
    }

    /** Synchronizing or querying a capturing stream is never allowed: 900, invalidating. */
    void checkNotCapturing(SimStream s, String op) {
        if (s.capture != null) {
            s.capture.invalidate(op);
            throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, "stream=" + s + " is in " + s.capture
                    + "; it cannot be synchronized or queried until the capture ends; the capture is now invalidated");
        }
    }

    /** Querying or synchronizing an event recorded in a live capture: 907, invalidating. */
    void checkNotCaptured(SimEvent ev, String op) {
        Capture c = ev.capturedIn;
        if (c != null) {
            c.invalidate(op);
            throw err(CudaError.CAPTURED_EVENT, op, ev + " was last recorded in " + c
                    + "; it cannot be queried or synchronized; the capture is now invalidated");
        }
    }

    /**
     * CUDA's "potentially unsafe" calls (allocation, free, synchronizing or querying other work) are
     * refused while a GLOBAL capture is live in any thread, or a THREAD_LOCAL one in this thread: 900,
     * invalidating that capture.
     */
    void checkUnsafe(String op, String d) {
        if (live.isEmpty()) {
            return;
        }
        Thread me = Thread.currentThread();
        Capture hit = null;
        for (Capture c : live) {
            if (c.mode == Capture.GLOBAL || (c.mode == Capture.THREAD_LOCAL && c.owner == me)) {
                c.invalidate(op);
                if (hit == null) {
                    hit = c;
                }
            }
        }
        if (hit != null) {
            throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, d + ": not permitted while " + hit
                    + " is live; the capture is now invalidated (use RELAXED mode, or move this call out of the capture)");
        }
    }

    /**
     * Work on the legacy stream (or a synchronous copy, which runs there) while a blocking stream
     * live would make the legacy stream depend on the capture: 906, invalidating it. Captures on
     * non-blocking streams are exempt.
     */
    void checkLegacyWork(String op, String d) {
        if (live.isEmpty()) {
            return;
        }
        Capture hit = null;
        for (Capture c : live) {
            if (c.anyBlocking()) {
                c.invalidate(op);
                if (hit == null) {
                    hit = c;
                }
            }
        }
        if (hit != null) {
            throw err(CudaError.STREAM_CAPTURE_IMPLICIT, op, d + ": legacy-stream work while " + hit
                    + " is live would depend on a capturing blocking stream; the capture is now invalidated "
                    + "(capture on a non-blocking stream, or give this work an explicit stream)");
        }
    }

    private void finish(Capture c) {
        for (SimStream s : c.streams) {
            s.capture = null;
            s.tails = null;
        }
        for (SimEvent ev : c.events) {
            if (ev.capturedIn == c) {
                ev.capturedIn = null;
                ev.capturedTails = null;
            }
        }
        live.remove(c);
    }

    /**
     * An argument error on a call that names a stream: it also invalidates the stream's capture,
     * as CUDA does. {@return the exception to throw}
     */
    static GpuException bad(SimStream s, CudaError e, String op, String details) {
        if (s != null && s.capture != null) {
            s.capture.invalidate(op);
        }
        return err(e, op, details);
    }

    /** {@code cuCtxSynchronize} would wait for the capturing streams: 900 while any capture is live, invalidating all. */
    void checkContextSync(String op) {
        if (!live.isEmpty()) {
            for (Capture c : live) {
                c.invalidate(op);
            }
            throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, "not permitted while " + live.getFirst()
                    + " is live (it would wait for the capturing stream); every live capture is now invalidated");
        }
    }

    /**
     * {@code cuEventRecord} on a capturing stream records the event's position in the capture.
     * {@return whether the record was captured (and nothing is to be enqueued)}
     */
    boolean record(SimEvent ev, SimStream s) {
        if (s.capture == null) {
            return false;
        }
        ev.op = null;
        ev.capturedIn = s.capture;
        ev.capturedTails = s.tails.clone();
        s.capture.events.add(ev);
        return true;
    }

    /**
     * The capture cases of {@code cuStreamWaitEvent}: waiting on an event recorded in a capture forks
     * or joins the stream into it; a capturing stream may not wait on an outside event except with
     * {@code CU_EVENT_WAIT_EXTERNAL}. {@return whether the wait was handled here (nothing to enqueue)}
     */
    boolean waitEvent(SimStream s, SimEvent ev, int flags, String op, String d) {
        Capture c = ev.capturedIn;
        if (c != null) {
            if (c.invalidated) {
                throw bad(s, CudaError.STREAM_CAPTURE_INVALIDATED, op, d + ": the event was recorded in " + c);
            }
            if (s.kind == SimStream.Kind.LEGACY) {
                c.invalidate(op);
                throw err(CudaError.STREAM_CAPTURE_IMPLICIT, op, d + ": the legacy stream cannot join " + c
                        + "; the capture is now invalidated");
            }
            if (s.capture == null) {
                // Fork: the stream joins the capture, after the event's position.
                s.capture = c;
                s.tails = ev.capturedTails.clone();
                c.streams.add(s);
                return true;
            }
            if (s.capture == c) {
                s.tails = union(s.tails, ev.capturedTails);
                return true;
            }
            Capture other = s.capture;
            other.invalidate(op);
            c.invalidate(op);
            throw err(CudaError.STREAM_CAPTURE_MERGE, op, d + ": the stream is in " + other
                    + " but the event was recorded in " + c + "; both captures are now invalidated");
        }
        if (s.capture != null) {
            checkInvalidated(s, op);
            if (flags == 1 || ev.op == null) {
                // An external wait (its ordering outside the graph is not modelled) or a never-recorded event.
                return true;
            }
            s.capture.invalidate(op);
            throw err(CudaError.STREAM_CAPTURE_ISOLATION, op, d + ": the event was recorded outside "
                    + s.capture + "; waiting on it would make the graph depend on uncaptured work (pass "
                    + "CU_EVENT_WAIT_EXTERNAL (1) for an external dependency); the capture is now invalidated");
        }
        return false;
    }

    /** {@code cuStreamBeginCapture}: refused on the legacy stream, for a bad mode, or twice. */
    void begin(SimStream s, int mode, String op) {
        String d = "stream=" + s + ", mode=" + mode;
        if (s.kind == SimStream.Kind.LEGACY) {
            throw err(CudaError.STREAM_CAPTURE_UNSUPPORTED, op, d
                    + ": the legacy default stream cannot capture; use a created stream or the per-thread stream (2)");
        }
        if (mode < Capture.GLOBAL || mode > Capture.RELAXED) {
            throw err(CudaError.INVALID_VALUE, op, d + ": mode must be GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2)");
        }
        if (s.capture != null) {
            throw err(CudaError.ILLEGAL_STATE, op, d + ": the stream is already in " + s.capture);
        }
        Capture c = new Capture(++nextId, mode, Thread.currentThread(), s);
        c.streams.add(s);
        s.capture = c;
        s.tails = new int[0];
        live.add(c);
    }

    /**
     * {@code cuStreamEndCapture}: on the origin stream, by the owning thread (unless RELAXED), with
     * every forked stream joined back. {@return the captured nodes}
     */
    List<Works.Node> end(SimStream s, String op) {
        Capture c = s.capture;
        if (c == null) {
            throw err(CudaError.ILLEGAL_STATE, op, "stream=" + s + ": the stream is not capturing");
        }
        if (s != c.origin) {
            c.invalidate(op);
            throw err(CudaError.STREAM_CAPTURE_UNMATCHED, op, "stream=" + s + ": " + c
                    + " must be ended on the stream it began on; the capture is now invalidated");
        }
        if (c.mode != Capture.RELAXED && c.owner != Thread.currentThread()) {
            finish(c);
            throw err(CudaError.STREAM_CAPTURE_WRONG_THREAD, op, "stream=" + s + ": " + c
                    + " was ended by thread '" + Thread.currentThread().getName()
                    + "'; the capture has ended and its work is discarded");
        }
        if (c.invalidated) {
            finish(c);
            throw err(CudaError.STREAM_CAPTURE_INVALIDATED, op, "stream=" + s + ": " + c
                    + "; the stream is no longer capturing and may begin again");
        }
        SimStream u = c.unjoined();
        if (u != null) {
            finish(c);
            throw err(CudaError.STREAM_CAPTURE_UNJOINED, op, "stream=" + s + ": work captured on " + u
                    + " was not joined back (record an event on it and make " + s
                    + " wait on that event before ending); both streams are no longer capturing");
        }
        finish(c);
        return List.copyOf(c.nodes);
    }

    /** {@return {@code cuStreamIsCapturing}'s answer for {@code s}: 0 none, 1 active, 2 invalidated} */
    int status(SimStream s, String op) {
        if (s.kind == SimStream.Kind.LEGACY) {
            for (Capture c : live) {
                if (c.anyBlocking()) {
                    throw err(CudaError.STREAM_CAPTURE_IMPLICIT, op, "stream=" + s + ": asking about the legacy stream while "
                            + c + " is live on a blocking stream");
                }
            }
            return 0;
        }
        return s.capture == null ? 0 : s.capture.invalidated ? 2 : 1;
    }

    /** Forgets every capture, at close. */
    void clear() {
        live.clear();
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static int[] union(int[] a, int[] b) {
        TreeSet<Integer> all = new TreeSet<>();
        for (int x : a) {
            all.add(x);
        }
        for (int x : b) {
            all.add(x);
        }
        return all.stream().mapToInt(Integer::intValue).toArray();
    }
}
