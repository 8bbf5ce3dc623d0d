package metrale.gpu.internal;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The streams, events, functions and graphs this runtime created and still holds. Every call that
 * takes a handle checks it here first: CUDA cannot tell a destroyed stream or event, or a function
 * of an unloaded module, from a live one, and using one can crash the process. {@code close()}
 * releases the rest. Thread-safe.
 */
final class Handles {

    /**
     * A captured graph and its instantiation.
     *
     * @param graph the {@code CUgraph}
     * @param exec  the {@code CUgraphExec}
     */
    record Graph(long graph, long exec) {
    }

    private final LongSet streams = new LongSet();
    private final LongSet events = new LongSet();
    private final LongSet functions = new LongSet();
    private final ConcurrentHashMap<Long, Graph> graphs = new ConcurrentHashMap<>();
    // Graph handles are runtime-issued, from 1, never reused, so a stale handle cannot alias a new graph.
    private final AtomicLong graphIds = new AtomicLong(1);

    void addStream(long s) {
        streams.add(s);
    }

    /** {@return whether the stream was held, and is no longer} */
    boolean removeStream(long s) {
        return streams.remove(s);
    }

    /** {@return whether {@code s} is a default stream (0, legacy 1, per-thread 2) or one this runtime holds} */
    boolean liveStream(long s) {
        return (s >= 0 && s <= 2) || streams.contains(s);
    }

    /** {@return whether this runtime holds the event} */
    boolean liveEvent(long e) {
        return events.contains(e);
    }

    /** Notes a function handle a lookup returned. */
    void addFunction(long f) {
        functions.add(f);
    }

    /** Forgets a function handle of an unloaded module. */
    void removeFunction(long f) {
        functions.remove(f);
    }

    /** {@return whether {@code f} was returned by a lookup in a module still loaded} */
    boolean liveFunction(long f) {
        return functions.contains(f);
    }

    void addEvent(long e) {
        events.add(e);
    }

    /** {@return whether the event was held, and is no longer} */
    boolean removeEvent(long e) {
        return events.remove(e);
    }

    /** {@return the runtime handle of a newly held graph} */
    long addGraph(long graph, long exec) {
        long id = graphIds.getAndIncrement();
        graphs.put(id, new Graph(graph, exec));
        return id;
    }

    /** {@return the graph under {@code id}, or {@code null}} */
    Graph graph(long id) {
        return graphs.get(id);
    }

    /** {@return the graph removed from {@code id}, or {@code null}} */
    Graph removeGraph(long id) {
        return graphs.remove(id);
    }

    /** Forgets every graph. {@return them} */
    List<Graph> drainGraphs() {
        List<Graph> out = List.copyOf(graphs.values());
        graphs.clear();
        return out;
    }

    /** Forgets every event. {@return them} */
    long[] drainEvents() {
        return events.drain();
    }

    /** Forgets every stream. {@return them} */
    long[] drainStreams() {
        return streams.drain();
    }

    /** Forgets every function. */
    void clearFunctions() {
        functions.drain();
    }
}
