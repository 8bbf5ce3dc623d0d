// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Driver;

/**
 * A device's graphs, their nodes and their executable graphs, and every rule of changing an
 * executable graph after instantiation (CUDA_SEMANTICS section 2, Graphs): {@code cuGraphExecUpdate} and
 * the per-node {@code cuGraphExec*NodeSetParams}. An update replaces {@link SimExec#run}, never
 * changes it, so a launch already enqueued runs the values it was launched with. The device calls
 * these doors under its lock, after its own checks; not thread-safe on its own.
 */
final class SimGraphs {

    /** A graph: its captured nodes and their handles, both in capture order. */
    private record Graph(List<Works.Node> nodes, long[] ids) {
    }

    /** Where a node handle points: its graph and its index there. */
    private record NodeRef(long graph, int index) {
    }

    /** The exec and the node index a node update applies to, and the call's operands for messages. */
    private record Target(SimExec exec, int index, String d) {
    }

    private final DeviceMemory memory;
    private final Map<Long, Graph> graphs = new HashMap<>();
    private final Map<Long, NodeRef> nodes = new HashMap<>();
    private final Map<Long, SimExec> execs = new HashMap<>();

    SimGraphs(DeviceMemory memory) {
        this.memory = memory;
    }

    /** {@return the handle of a new graph of the {@code captured} nodes, each node given a handle} */
    long add(List<Works.Node> captured) {
        long g = Ids.handle();
        long[] ids = new long[captured.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = Ids.handle();
            nodes.put(ids[i], new NodeRef(g, i));
        }
        graphs.put(g, new Graph(captured, ids));
        return g;
    }

    /** {@code cuGraphInstantiate}: {@return the new exec's handle} It remembers the memory kind of each memset's destination. */
    long instantiate(long graph, String op) {
        List<Works.Node> ns = graph(graph, op, "graph=").nodes();
        long x = Ids.handle();
        Alloc.Kind[] kinds = new Alloc.Kind[ns.size()];
        for (int i = 0; i < kinds.length; i++) {
            if (ns.get(i).work() instanceof Works.Memset m) {
                Alloc a = memory.find(m.ptr());
                kinds[i] = a == null ? null : a.kind;
            }
        }
        execs.put(x, new SimExec(graph, new Works.GraphRun(ns, "graph exec " + hex(x)), kinds));
        return x;
    }

    /** {@return the live exec {@code exec}, else {@code INVALID_VALUE} naming it as {@code name}, e.g. {@code "exec="}} */
    SimExec exec(long exec, String op, String name) {
        SimExec x = execs.get(exec);
        if (x == null) {
            throw err(CudaError.INVALID_VALUE, op, name + hex(exec) + ": not a live executable graph");
        }
        return x;
    }

    void destroyExec(long exec, String op) {
        if (execs.remove(exec) == null) {
            throw err(CudaError.INVALID_VALUE, op, "exec=" + hex(exec) + ": not a live executable graph");
        }
    }

    void destroy(long graph, String op) {
        Graph g = graphs.remove(graph);
        if (g == null) {
            throw err(CudaError.INVALID_VALUE, op, "graph=" + hex(graph) + ": not a live graph");
        }
        for (long n : g.ids()) {
            nodes.remove(n);
        }
    }

    /** {@code cuGraphGetNodes}: {@return the node handles in capture order, a copy} */
    long[] nodes(long graph, String op) {
        return graph(graph, op, "hGraph=").ids().clone();
    }

    /** {@code cuGraphGetEdges}: {@return the edges as the Driver SPI has them, {@code {from[], to[]}}} */
    long[][] edges(long graph, String op) {
        Graph g = graph(graph, op, "hGraph=");
        int n = 0;
        for (Works.Node node : g.nodes()) {
            n += node.deps().length;
        }
        long[] from = new long[n];
        long[] to = new long[n];
        int k = 0;
        for (int i = 0; i < g.nodes().size(); i++) {
            for (int dep : g.nodes().get(i).deps()) {
                from[k] = g.ids()[dep];
                to[k++] = g.ids()[i];
            }
        }
        return new long[][] {from, to};
    }

    /** {@code cuGraphNodeGetType}: {@return the node's {@code CUgraphNodeType}} */
    int nodeType(long node, String op) {
        NodeRef ref = node(node, op);
        return Works.GraphRun.nodeType(graphs.get(ref.graph()).nodes().get(ref.index()).work());
    }

    int graphCount() {
        return graphs.size();
    }

    int execCount() {
        return execs.size();
    }

    void clear() {
        graphs.clear();
        nodes.clear();
        execs.clear();
    }

    // ---- updates of an executable graph ---------------------------------------------------------

    /**
     * {@code cuGraphExecKernelNodeSetParams}: {@code f} is {@code func} looked up in this context's
     * functions ({@code null} when it is none), {@code work} checks the launch and makes its work.
     */
    void setKernel(long exec, long node, long func, SimFunction f, Function<SimFunction, Works.Kernel> work, String op) {
        Target t = target(exec, node, op, "");
        Work old = t.exec().run.work(t.index());
        if (!(old instanceof Works.Kernel)) {
            throw err(CudaError.INVALID_VALUE, op, t.d() + ": not a kernel node (" + old.describe() + ")");
        }
        // A function of another context (another runtime's) is not in this table: the owning
        // context of a kernel node's function cannot change.
        if (f == null || !f.module.loaded) {
            throw err(CudaError.INVALID_VALUE, op, t.d() + ": func=" + hex(func)
                    + (f == null ? " is not a live function of this context" : ": its module was unloaded"));
        }
        replace(t, work.apply(f));
    }

    /** {@code cuGraphExecMemsetNodeSetParams}. */
    void setMemset(long exec, long node, long ptr, int value, long bytes, String op) {
        Target t = target(exec, node, op, ", dst=" + hex(ptr) + ", bytes=" + bytes);
        String d = t.d();
        SimExec x = t.exec();
        int i = t.index();
        if (!(x.run.work(i) instanceof Works.Memset old)) {
            throw err(CudaError.INVALID_VALUE, op, d + ": not a memset node (" + x.run.work(i).describe() + ")");
        }
        // CUDA: zero-sized operations are not supported; the new destination must be the same
        // kind of allocation, of the same context, as the original; a changed size may be
        // refused (the simulator always refuses it, the strictest reading).
        if (bytes <= 0) {
            throw err(CudaError.INVALID_VALUE, op, d + ": zero-sized (or negative) memset nodes are not supported");
        }
        if (bytes != old.bytes()) {
            throw err(CudaError.INVALID_VALUE, op, d + ": the width changed (" + old.bytes() + " -> " + bytes
                    + " bytes); only the destination and the value of a memset node may change");
        }
        Alloc to = memory.find(ptr, bytes);
        if (to == null) {
            throw err(CudaError.INVALID_VALUE, op, d + ": the destination " + memory.explain(ptr, bytes));
        }
        Alloc.Kind was = x.memsetKinds[i];
        if (was != null && was != to.kind) {
            throw err(CudaError.INVALID_VALUE, op, d + ": the destination is " + to.kind.label + " memory where the node's was "
                    + was.label + " memory at instantiation; it must be the same kind of allocation");
        }
        replace(t, new Works.Memset(old.op(), ptr, (byte) value, bytes));
    }

    /** {@code cuGraphExecMemcpyNodeSetParams}, for device-to-device copy nodes. */
    void setCopy(long exec, long node, long src, long dst, long bytes, String op) {
        Target t = target(exec, node, op, ", src=" + hex(src) + ", dst=" + hex(dst) + ", bytes=" + bytes);
        String d = t.d();
        Work w = t.exec().run.work(t.index());
        // CUDA: a copy's memory types cannot change; here a node's type is its direction.
        if (!(w instanceof Works.CopyD2D old)) {
            throw err(CudaError.INVALID_VALUE, op, d + ": not a device-to-device memcpy node (" + w.describe() + ")");
        }
        if (bytes <= 0) {
            throw err(CudaError.INVALID_VALUE, op, d + ": zero-sized (or negative) memcpy nodes are not supported");
        }
        memory.checkRange(src, bytes, op, d, "source");
        memory.checkRange(dst, bytes, op, d, "destination");
        replace(t, new Works.CopyD2D(old.op(), dst, src, bytes));
    }

    /** {@code cuGraphExecUpdate}: {@return a {@code CUgraphExecUpdateResult}; the exec changes only on success} */
    int update(long exec, long graph, String op) {
        SimExec x = exec(exec, op, "hGraphExec=");
        List<Works.Node> to = graph(graph, op, "hGraph=").nodes();
        int n = x.run.size();
        if (to.size() != n) {
            return Driver.UPDATE_TOPOLOGY_CHANGED;
        }
        // Nodes pair by index (capture order) and must have the same dependencies.
        for (int i = 0; i < n; i++) {
            if (!Arrays.equals(x.run.deps(i), to.get(i).deps())) {
                return Driver.UPDATE_TOPOLOGY_CHANGED;
            }
        }
        for (int i = 0; i < n; i++) {
            Work was = x.run.work(i);
            Work now = to.get(i).work();
            if (Works.GraphRun.nodeType(was) != Works.GraphRun.nodeType(now)) {
                return Driver.UPDATE_NODE_TYPE_CHANGED;
            }
            int r = updatable(x, i, was, now);
            if (r != Driver.UPDATE_SUCCESS) {
                return r;
            }
        }
        Works.GraphRun run = x.run;
        for (int i = 0; i < n; i++) {
            run = run.with(i, to.get(i).work());
        }
        x.run = run;
        return Driver.UPDATE_SUCCESS;
    }

    /** CUDA's per-node rules of {@code cuGraphExecUpdate}: {@return a {@code CUgraphExecUpdateResult}} */
    private int updatable(SimExec x, int i, Work was, Work now) {
        return switch (now) {
            // A captured kernel's function is one of this context; CUDA 11.2+ allows another function.
            case Works.Kernel k -> Driver.UPDATE_SUCCESS;
            case Works.Memset m -> {
                Alloc a = memory.find(m.ptr());
                Alloc.Kind kind = x.memsetKinds[i];
                yield a == null || (kind != null && a.kind != kind) ? Driver.UPDATE_PARAMETERS_CHANGED : Driver.UPDATE_SUCCESS;
            }
            // A copy may not change its memory types (host/device): the direction is its type here.
            case Works.CopyD2D c -> was instanceof Works.CopyD2D ? Driver.UPDATE_SUCCESS : Driver.UPDATE_PARAMETERS_CHANGED;
            case Works.CopyH2D c -> was instanceof Works.CopyH2D ? Driver.UPDATE_SUCCESS : Driver.UPDATE_PARAMETERS_CHANGED;
            case Works.CopyD2H c -> was instanceof Works.CopyD2H ? Driver.UPDATE_SUCCESS : Driver.UPDATE_PARAMETERS_CHANGED;
            // 2D copies: only addresses may change.
            case Works.Copy2D c -> was instanceof Works.Copy2D w && w.width() == c.width() && w.height() == c.height()
                    && w.dstPitch() == c.dstPitch() && w.srcPitch() == c.srcPitch()
                    ? Driver.UPDATE_SUCCESS : Driver.UPDATE_PARAMETERS_CHANGED;
            // Child graphs are not paired node by node here: the simulator refuses to update them.
            default -> now instanceof Works.Marker ? Driver.UPDATE_SUCCESS : Driver.UPDATE_NOT_SUPPORTED;
        };
    }

    /**
     * {@return the exec and node index a node update applies to} {@code more} follows the exec and
     * node in the messages.
     */
    private Target target(long exec, long node, String op, String more) {
        SimExec x = exec(exec, op, "hGraphExec=");
        NodeRef ref = node(node, op);
        String d = "hGraphExec=" + hex(exec) + ", hNode=" + hex(node) + more;
        // CUDA: the node must be one of the graph the exec was instantiated from.
        if (ref.graph() != x.graph) {
            throw err(CudaError.INVALID_VALUE, op, d + ": the node belongs to graph " + hex(ref.graph())
                    + ", not to graph " + hex(x.graph) + " the exec was instantiated from");
        }
        return new Target(x, ref.index(), d);
    }

    private static void replace(Target t, Work w) {
        t.exec().run = t.exec().run.with(t.index(), w);
    }

    private Graph graph(long graph, String op, String name) {
        Graph g = graphs.get(graph);
        if (g == null) {
            throw err(CudaError.INVALID_VALUE, op, name + hex(graph) + ": not a live graph");
        }
        return g;
    }

    private NodeRef node(long node, String op) {
        NodeRef ref = nodes.get(node);
        if (ref == null) {
            throw err(CudaError.INVALID_VALUE, op, "hNode=" + hex(node) + ": not a node of a live graph");
        }
        return ref;
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
