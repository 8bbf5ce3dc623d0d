// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import metrale.gpu.CapturedStep;
import metrale.gpu.Event;
import metrale.gpu.GraphHandle;
import metrale.gpu.LeakDetection;
import metrale.gpu.LiveResource;
import metrale.gpu.LiveResource.Kind;
import metrale.gpu.Stream;

/**
 * The resources of one runtime besides device memory (which the {@link Ledger} holds), each with
 * its creation site, for {@link metrale.gpu.Gpu#liveResources()}. Recorded at creation and removed
 * at release; launches and copies never touch it. At close the runtime {@linkplain #close() takes
 * a final inventory}, which stays readable.
 *
 * <p>Thread-safe.
 */
final class Resources {

    /** A tracked resource: a handle value of one kind, or an object (a step, a communicator's token). */
    private record Key(Kind kind, long value) {
    }

    /** A recorded resource; {@code seq} orders the report by creation. */
    record Entry(long seq, LiveResource resource) {
    }

    private final Supplier<String> sites;
    // The policy when the sites come from one, for the report's sentence on what went unsampled.
    private final AllocSites policy;
    private final ConcurrentHashMap<Object, Entry> live = new ConcurrentHashMap<>();
    private final AtomicLong seq = new AtomicLong();
    private volatile List<LiveResource> atClose;

    Resources(Supplier<String> sites) {
        this.sites = sites;
        this.policy = sites instanceof AllocSites a ? a : null;
    }

    Stream stream(Stream s) {
        add(new Key(Kind.STREAM, s.handle()), Kind.STREAM, s.toString());
        return s;
    }

    Event event(Event e) {
        add(new Key(Kind.EVENT, e.handle()), Kind.EVENT, e.toString());
        return e;
    }

    GraphHandle graph(GraphHandle g) {
        add(new Key(Kind.GRAPH, g.handle()), Kind.GRAPH, g.toString());
        return g;
    }

    void pinned(MemorySegment seg) {
        add(new Key(Kind.PINNED_HOST, seg.address()), Kind.PINNED_HOST, pinnedText(seg));
    }

    CapturedStep step(CapturedStep step, String name) {
        add(step, Kind.CAPTURED_STEP, "'" + name + "'");
        return step;
    }

    /** Records a resource another module of this project made over the runtime; {@return what forgets it when run} */
    Runnable other(Kind kind, String handle) {
        Object token = new Object();
        add(token, kind, handle);
        return () -> gone(token);
    }

    /** Forgets a handle value of {@code kind}; {@return what was recorded, or {@code null}} */
    Entry gone(Kind kind, long value) {
        return live.remove(new Key(kind, value));
    }

    /** Forgets a step or token. */
    void gone(Object stepOrToken) {
        live.remove(stepOrToken);
    }

    /** Records again what {@link #gone(Kind, long)} returned, for a release that did not happen. */
    void restore(Kind kind, long value, Entry removed) {
        if (removed != null && atClose == null) {
            live.put(new Key(kind, value), removed);
        }
    }

    private void add(Object key, Kind kind, String handle) {
        String site = sites.get();
        live.put(key, new Entry(seq.getAndIncrement(), new LiveResource(kind, handle, site)));
    }

    /** {@return the live resources, oldest first; after {@link #close()}, those it found} */
    List<LiveResource> list() {
        List<LiveResource> closed = atClose;
        return closed != null ? closed : snapshot();
    }

    private List<LiveResource> snapshot() {
        List<Entry> entries = new ArrayList<>(live.values());
        entries.sort(Comparator.comparingLong(Entry::seq));
        List<LiveResource> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            out.add(e.resource());
        }
        return List.copyOf(out);
    }

    /**
     * Takes the final inventory and forgets everything: what close releases is then no longer live,
     * and later releases (a step closed after its runtime) find nothing. {@return the inventory}
     */
    List<LiveResource> close() {
        synchronized (this) {
            if (atClose == null) {
                atClose = snapshot();
                live.clear();
            }
            return atClose;
        }
    }

    /** Logs what close found still live, at INFO: close releases it all. */
    void logAtClose(List<LiveResource> found) {
        if (found.isEmpty()) {
            return;
        }
        System.Logger log = System.getLogger("metrale.gpu");
        String coverage = coverage(found, "unreleased resources");
        log.log(System.Logger.Level.INFO, "metrale-gpu: close: " + found.size()
                + " resource(s) were never released; releasing them" + (coverage.isEmpty() ? "" : "; " + coverage));
        for (LiveResource r : found) {
            log.log(System.Logger.Level.INFO, "metrale-gpu: unreleased: " + r);
        }
    }

    /** {@return the call-site policy the sites come from, or {@code null} when they come from elsewhere} */
    AllocSites policy() {
        return policy;
    }

    /**
     * {@return the sentence on how many of {@code resources} have their site, or empty when all do}
     *
     * @param resources resources this recorded
     * @param things    what they are, plural
     */
    String coverage(List<LiveResource> resources, String things) {
        if (policy == null) {
            return "";
        }
        long named = resources.stream().filter(r -> LeakDetection.hasSite(r.site())).count();
        return policy.coverage(named, resources.size(), things);
    }

    static String pinnedText(MemorySegment seg) {
        Objects.requireNonNull(seg, "seg");
        return "0x" + Long.toHexString(seg.address()) + " (" + seg.byteSize() + " B)";
    }
}
