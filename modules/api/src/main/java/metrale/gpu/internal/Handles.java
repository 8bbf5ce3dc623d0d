package metrale.gpu.internal;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The streams, events and graphs this runtime created and still holds, so destroying an unknown
 * or destroyed handle is a clear error and {@code close()} releases the rest. Thread-safe.
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

    private final Set<Long> streams = ConcurrentHashMap.newKeySet();
    private final Set<Long> events = ConcurrentHashMap.newKeySet();
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
    List<Long> drainEvents() {
        List<Long> out = List.copyOf(events);
        events.removeAll(out);
        return out;
    }

    /** Forgets every stream. {@return them} */
    List<Long> drainStreams() {
        List<Long> out = List.copyOf(streams);
        streams.removeAll(out);
        return out;
    }
}
