package metrale.gpu.sim.internal;

/**
 * An executable graph, the graph it was instantiated from, and its last launch, which the next
 * launch waits for. {@code run} is replaced, never changed, by a node update, so a launch already
 * enqueued runs the values it was launched with, as CUDA's does.
 */
final class SimExec {

    final long graph;
    Works.GraphRun run;
    Op lastLaunch;

    SimExec(long graph, Works.GraphRun run) {
        this.graph = graph;
        this.run = run;
    }
}
