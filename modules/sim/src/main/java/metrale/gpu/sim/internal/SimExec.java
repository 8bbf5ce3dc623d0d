// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

/**
 * An executable graph, the graph it was instantiated from, and its last launch, which the next
 * launch waits for. {@code run} is replaced, never changed, by a node update, so a launch already
 * enqueued runs the values it was launched with, as CUDA's does.
 */
final class SimExec {

    final long graph;
    /** Per node, the kind of memory a memset node's destination was at instantiation, else {@code null}. */
    final Alloc.Kind[] memsetKinds;
    Works.GraphRun run;
    Op lastLaunch;

    SimExec(long graph, Works.GraphRun run, Alloc.Kind[] memsetKinds) {
        this.graph = graph;
        this.run = run;
        this.memsetKinds = memsetKinds;
    }
}
