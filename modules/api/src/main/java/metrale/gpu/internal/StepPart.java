// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.TreeMap;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StepOptions;
import metrale.gpu.Stream;
import metrale.gpu.spi.Driver;

/**
 * The runtime's doors for {@link CapturedStepImpl}: updating an executable graph (in place, node
 * by node, or from a new capture), and the replay check's reads and writes of device memory,
 * which are neither counted nor traced. Not {@code Gpu} methods, so each method that touches the
 * driver or a handle enters the gate itself.
 */
final class StepPart {

    private final Core c;

    StepPart(Core c) {
        this.c = c;
    }

    /** {@return a new captured step over {@code rt}, listed among the live resources} Inside the caller's gate frame. */
    CapturedStep open(GpuRuntime rt, String name, CapturedStep.Region region, StepOptions options) {
        return c.resources().step(new CapturedStepImpl(rt, this, Objects.requireNonNull(name, "name"),
                Objects.requireNonNull(region, "region"), Objects.requireNonNull(options, "options")), name);
    }

    /** Takes a closed step off the live resources. */
    void gone(CapturedStep step) {
        c.resources().gone(step);
    }

    /** See {@link Tracing#beginStep}. */
    StepRecorder beginTrace(StepRecorder r) {
        return c.tracing().beginStep(r);
    }

    /** See {@link Tracing#endStep}. */
    void endTrace(StepRecorder outer) {
        c.tracing().endStep(outer);
    }

    /**
     * {@return the nodes of a graph made by {@code endCapture}, their {@code CUgraphNodeType}s and
     * edges, as {@code {nodes, types, from, to}}}
     *
     * @throws GpuException {@code NOT_SUPPORTED} where the driver has no node access
     */
    long[][] graphNodes(GraphHandle graph) {
        String op = "graphNodes";
        try (var _ = c.gate().enter(op)) {
            HandleTable.Slot g = c.liveGraph(graph, op);
            Driver d = c.driver();
            return c.get(() -> {
                long[][] edges = d.graphGetEdges((Long) g.extra());
                long[] nodes = d.graphGetNodes((Long) g.extra());
                long[] types = new long[nodes.length];
                for (int i = 0; i < nodes.length; i++) {
                    types[i] = d.graphNodeType(nodes[i]);
                }
                return new long[][] {nodes, types, edges[0], edges[1]};
            }, () -> op + " " + graph);
        }
    }

    /**
     * Sets a kernel node of an instantiated graph in place ({@code cuGraphExecKernelNodeSetParams}),
     * for replays launched after this call.
     */
    void setKernelNode(GraphHandle graph, long node, long kernelId, LaunchConfig config, KernelArgs args) {
        String op = "setKernelNode";
        try (var _ = c.gate().enter(op)) {
            HandleTable.Slot g = c.liveGraph(graph, op);
            long raw = c.liveFunction(new KernelHandle(kernelId), op);
            if (c.checkPointers()) {
                c.checkPointerArgs(kernelId, args);
            }
            c.run(() -> c.driver().graphExecKernelNodeSetParams(g.raw(), node, raw, config, args),
                    () -> op + " " + c.trace().nameOf(kernelId) + " in " + graph);
        }
    }

    /**
     * Sets a memset node of an instantiated graph in place ({@code cuGraphExecMemsetNodeSetParams}),
     * for replays launched after this call.
     */
    void setMemsetNode(GraphHandle graph, long node, long ptr, int value, long bytes) {
        String op = "setMemsetNode";
        try (var _ = c.gate().enter(op)) {
            HandleTable.Slot g = c.liveGraph(graph, op);
            c.checkRange(ptr, bytes, op, "ptr");
            c.run(() -> c.driver().graphExecMemsetNodeSetParams(g.raw(), node, ptr, value, bytes),
                    () -> op + " " + bytes + " B at 0x" + Long.toHexString(ptr) + " in " + graph);
        }
    }

    /**
     * Sets a device-to-device copy node of an instantiated graph in place
     * ({@code cuGraphExecMemcpyNodeSetParams}), for replays launched after this call.
     */
    void setCopyNode(GraphHandle graph, long node, long src, long dst, long bytes) {
        String op = "setCopyNode";
        try (var _ = c.gate().enter(op)) {
            HandleTable.Slot g = c.liveGraph(graph, op);
            c.checkRange(src, bytes, op, "src");
            c.checkRange(dst, bytes, op, "dst");
            c.run(() -> c.driver().graphExecCopyNodeSetParams(g.raw(), node, src, dst, bytes),
                    () -> op + " " + bytes + " B 0x" + Long.toHexString(src) + " -> 0x" + Long.toHexString(dst) + " in " + graph);
        }
    }

    /**
     * Ends a capture and, when {@code old} is given, first tries to apply the new graph to
     * {@code old}'s executable graph ({@code cuGraphExecUpdate}), which is cheaper than
     * instantiating. {@code result[0]} receives the update's {@code CUgraphExecUpdateResult} (-1
     * when none was tried or the driver cannot). Without {@code old} it is {@code endCapture}.
     *
     * @return {@code old} when it was updated, else a new instantiated graph
     */
    GraphHandle endCaptureInto(Stream stream, GraphHandle old, int[] result) {
        result[0] = -1;
        String op = old == null ? "endCapture" : "endCaptureInto";
        try (var _ = c.gate().enter(op)) {
            long s = c.liveStream(stream, op);
            if (old == null) {
                return c.instantiate(c.endCapture(s, stream), stream);
            }
            HandleTable.Slot o = c.liveGraph(old, op);
            long graph = c.endCapture(s, stream);
            try {
                result[0] = c.driver().graphExecUpdate(o.raw(), graph);
            } catch (GpuException e) {
                if (e.error() != CudaError.NOT_SUPPORTED) {
                    RuntimeException r = c.fail(e, op + " " + old + " (cuGraphExecUpdate)");
                    c.destroyGraphQuietly(graph, r);
                    throw r;
                }
            }
            if (result[0] == Driver.UPDATE_SUCCESS) {
                // The exec copied the parameters; the graph it was updated from is no longer needed.
                c.destroyGraphQuietly(graph, null);
                return old;
            }
            return c.instantiate(graph, stream);
        }
    }

    // ---- the replay check ------------------------------------------------------------------------

    /**
     * {@return the live allocations of the ledger that hold any of {@code addrs}, as
     * {@code {base, bytes}} pairs, distinct, in address order} Sets {@code unsaveable[0]} when an
     * address lies in an arena chunk or a mapped page-locked range instead, memory the check does
     * not save.
     */
    long[][] stepBuffers(long[] addrs, boolean[] unsaveable) {
        c.gate().check("stepBuffers");
        TreeMap<Long, Long> found = new TreeMap<>(Long::compareUnsigned);
        for (long a : addrs) {
            Ledger.Entry e = c.ledger().nearest(a);
            if (e != null && Long.compareUnsigned(a - e.base(), e.allocation().bytes()) < 0) {
                found.put(e.base(), e.allocation().bytes());
            } else if (c.arenas().covers(a, 1) || c.pinned().coversAddress(a, 1)) {
                unsaveable[0] = true;
            }
        }
        long[][] out = new long[found.size()][];
        int i = 0;
        for (var f : found.entrySet()) {
            out[i++] = new long[] {f.getKey(), f.getValue()};
        }
        return out;
    }

    /** Waits for the device ({@code cuCtxSynchronize}), then reads each {@code {base, bytes}} range with a blocking copy. */
    byte[][] stepRead(long[][] ranges) {
        String op = "stepRead";
        try (var _ = c.gate().enter(op); Arena arena = Arena.ofConfined()) {
            return c.get(() -> {
                c.driver().ctxSynchronize();
                byte[][] out = new byte[ranges.length][];
                for (int i = 0; i < ranges.length; i++) {
                    MemorySegment seg = arena.allocate(ranges[i][1]);
                    c.driver().memcpyDtoH(seg, ranges[i][0], ranges[i][1]);
                    out[i] = seg.toArray(ValueLayout.JAVA_BYTE);
                }
                return out;
            }, () -> op);
        }
    }

    /** Writes each {@code {base, bytes}} range back, then waits for the device, so work on any stream after it sees the bytes. */
    void stepWrite(long[][] ranges, byte[][] data) {
        String op = "stepWrite";
        try (var _ = c.gate().enter(op); Arena arena = Arena.ofConfined()) {
            c.run(() -> {
                for (int i = 0; i < ranges.length; i++) {
                    MemorySegment seg = arena.allocate(ranges[i][1]);
                    MemorySegment.copy(data[i], 0, seg, ValueLayout.JAVA_BYTE, 0, data[i].length);
                    c.driver().memcpyHtoD(ranges[i][0], seg, ranges[i][1]);
                }
                c.driver().ctxSynchronize();
            }, () -> op);
        }
    }

    /** Launches the graph, neither counted as a replay nor traced. */
    void stepReplay(GraphHandle graph, Stream stream) {
        String op = "stepReplay";
        try (var _ = c.gate().enter(op)) {
            HandleTable.Slot g = c.liveGraph(graph, op);
            long st = c.liveStream(stream, op);
            c.run(() -> c.driver().graphLaunch(g.raw(), st), () -> op + " " + graph);
        }
    }
}
