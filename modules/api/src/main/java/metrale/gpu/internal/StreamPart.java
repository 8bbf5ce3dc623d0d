// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.Objects;
import java.util.function.LongConsumer;
import metrale.gpu.CudaError;
import metrale.gpu.Event;
import metrale.gpu.GpuException;
import metrale.gpu.LiveResource;
import metrale.gpu.Stream;

/**
 * The rules of streams and events: handles the runtime made and has not destroyed, destruction
 * only after the calls that hold a handle, and the stream-sync counter, which counts the syncs an
 * app asks for ({@link #synchronize(Stream)}, {@link #synchronize()}, {@link #eventSynchronize})
 * and none the runtime adds itself (debug sync, timing spans, the pinned-source rule). Each method
 * runs inside the caller's gate frame.
 */
final class StreamPart {

    private final Core c;

    StreamPart(Core c) {
        this.c = c;
    }

    Stream createStream(boolean nonBlocking) {
        long s = c.get(() -> c.driver().streamCreate(nonBlocking ? 1 : 0), () -> "createStream");
        return c.resources().stream(new Stream(c.streams().add(s, null)));
    }

    /** Inside a releaser's frame: calls that found the stream live before it left the table finish first. */
    void destroyStream(Stream stream) {
        long id = Objects.requireNonNull(stream, "stream").handle();
        HandleTable.Slot slot = c.streams().remove(id);
        if (slot == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "destroyStream", stream
                    + (id == 0 || id == 1 || id == 2 ? " is a default stream, which cannot be destroyed"
                    : " was not created by this runtime or is already destroyed"));
        }
        c.resources().gone(LiveResource.Kind.STREAM, id);
        c.gate().awaitGrace();
        c.pool().streamDestroyed(slot.raw());
        c.release(() -> c.driver().streamDestroy(slot.raw()), () -> "destroyStream " + stream);
    }

    void synchronize(Stream stream) {
        long s = c.liveStream(stream, "synchronize");
        c.counters().streamSync();
        var jfr = Jfr.beginSync();
        c.run(() -> c.driver().streamSynchronize(s), () -> "synchronize " + stream);
        c.pool().streamSynchronized(s);
        c.settleQuarantine("synchronize");
        Jfr.sync(jfr, "stream", s);
    }

    void synchronize() {
        c.counters().streamSync();
        var jfr = Jfr.beginSync();
        c.run(() -> c.driver().ctxSynchronize(), () -> "synchronize (context)");
        c.pool().deviceSynchronized();
        c.settleQuarantine("synchronize");
        Jfr.sync(jfr, "context", 0);
    }

    boolean streamQuery(Stream stream) {
        long s = c.liveStream(stream, "streamQuery");
        return c.get(() -> c.driver().streamQuery(s), () -> "streamQuery " + stream);
    }

    Event createEvent(int flags) {
        long ev = c.get(() -> c.driver().eventCreate(flags), () -> "createEvent flags=" + flags);
        return c.resources().event(new Event(c.events().add(ev, null)));
    }

    void recordEvent(Event event, Stream stream) {
        long ev = c.liveEvent(event, "event", "recordEvent");
        long s = c.liveStream(stream, "recordEvent");
        c.run(() -> c.driver().eventRecord(ev, s), () -> "recordEvent " + event + " on " + stream);
    }

    void streamWaitEvent(Stream stream, Event event) {
        long s = c.liveStream(stream, "streamWaitEvent");
        long ev = c.liveEvent(event, "event", "streamWaitEvent");
        c.run(() -> c.driver().streamWaitEvent(s, ev, 0), () -> "streamWaitEvent " + stream + " on " + event);
    }

    void eventSynchronize(Event event) {
        long ev = c.liveEvent(event, "event", "eventSynchronize");
        c.counters().streamSync();
        var jfr = Jfr.beginSync();
        c.run(() -> c.driver().eventSynchronize(ev), () -> "eventSynchronize " + event);
        Jfr.sync(jfr, "event", ev);
    }

    boolean eventQuery(Event event) {
        long ev = c.liveEvent(event, "event", "eventQuery");
        return c.get(() -> c.driver().eventQuery(ev), () -> "eventQuery " + event);
    }

    float elapsedMillis(Event start, Event end) {
        long a = c.liveEvent(start, "start", "elapsedMillis");
        long b = c.liveEvent(end, "end", "elapsedMillis");
        return c.get(() -> c.driver().eventElapsedTime(a, b), () -> "elapsedMillis " + start + " -> " + end);
    }

    /** Inside a releaser's frame: calls that found the event live before it left the table finish first. */
    void destroyEvent(Event event) {
        HandleTable.Slot slot = c.events().remove(Objects.requireNonNull(event, "event").handle());
        if (slot == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "destroyEvent",
                    event + " was not created by this runtime or is already destroyed");
        }
        c.resources().gone(LiveResource.Kind.EVENT, event.handle());
        c.gate().awaitGrace();
        c.release(() -> c.driver().eventDestroy(slot.raw()), () -> "destroyEvent " + event);
    }

    /** See {@link metrale.gpu.internal.access.RuntimeAccess#onDriverStream}. */
    void onDriverStream(Stream stream, String call, long[] ranges, LongConsumer body) {
        for (int i = 0; i + 1 < ranges.length; i += 2) {
            c.checkRange(ranges[i], ranges[i + 1], call, "buffer " + (i / 2));
        }
        long st = c.liveStream(stream, call);
        c.driver().bindToThread();
        body.accept(st);
    }

    void bindToThread() {
        c.run(() -> c.driver().bindToThread(), () -> "bindToThread");
    }
}
