// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static metrale.gpu.cuda.internal.CudaLib.MEMORYTYPE_DEVICE;
import static metrale.gpu.cuda.internal.CudaLib.SUCCESS;
import static metrale.gpu.cuda.internal.CudaLib.check;
import static metrale.gpu.cuda.internal.CudaLib.outInt;
import static metrale.gpu.cuda.internal.CudaLib.outLong;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import metrale.gpu.CudaError;

/** Graphs and executable graphs: instantiate, launch, inspect, update in place, destroy. */
final class CuGraph {

    /** {@code CUDA_KERNEL_NODE_PARAMS_v2}: {@code kern} and {@code ctx} are ignored while {@code func} is set. */
    static final StructLayout CUDA_KERNEL_NODE_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("func"),
            JAVA_INT.withName("gridDimX"),
            JAVA_INT.withName("gridDimY"),
            JAVA_INT.withName("gridDimZ"),
            JAVA_INT.withName("blockDimX"),
            JAVA_INT.withName("blockDimY"),
            JAVA_INT.withName("blockDimZ"),
            JAVA_INT.withName("sharedMemBytes"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("kernelParams"),
            ADDRESS.withName("extra"),
            JAVA_LONG.withName("kern"),
            JAVA_LONG.withName("ctx")).withName("CUDA_KERNEL_NODE_PARAMS_v2");

    /** {@code CUDA_MEMSET_NODE_PARAMS}: a one-dimensional memset has height 1 and an unused pitch. */
    static final StructLayout CUDA_MEMSET_NODE_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("dst"),
            JAVA_LONG.withName("pitch"),
            JAVA_INT.withName("value"),
            JAVA_INT.withName("elementSize"),
            JAVA_LONG.withName("width"),
            JAVA_LONG.withName("height")).withName("CUDA_MEMSET_NODE_PARAMS");

    /** Bytes of {@code CUDA_MEMCPY3D} ({@code cuda.h}: 25 eight-byte fields, the two {@code CUmemorytype}s padded). */
    private static final long MEMCPY3D_BYTES = 200;

    /** One params struct per thread, so a node update (once per step in a steady loop) allocates nothing. */
    private static final ThreadLocal<MemorySegment> KERNEL_NODE_PARAMS =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CUDA_KERNEL_NODE_PARAMS));

    private CuGraph() {
    }

    /** {@return the executable graph}; flags 0 for none */
    static long instantiate(long graph, long flags) {
        return outLong(out -> LibCuda.cuGraphInstantiateWithFlags(out, graph, flags), "cuGraphInstantiateWithFlags",
                "hGraph=%#x, flags=%d", graph, flags);
    }

    static void launch(long exec, long stream) {
        check(LibCuda.cuGraphLaunch(exec, stream), "cuGraphLaunch", "hGraphExec=%#x, hStream=%#x", exec, stream);
    }

    static void execDestroy(long exec) {
        check(LibCuda.cuGraphExecDestroy(exec), "cuGraphExecDestroy", "hGraphExec=%#x", exec);
    }

    static void destroy(long graph) {
        check(LibCuda.cuGraphDestroy(graph), "cuGraphDestroy", "hGraph=%#x", graph);
    }

    /** {@return the graph's nodes}: asked twice, once for the count, once for the nodes */
    static long[] getNodes(long graph) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_LONG);
            check(LibCuda.cuGraphGetNodes(graph, MemorySegment.NULL, count), "cuGraphGetNodes", "hGraph=%#x, nodes=NULL", graph);
            long n = count.get(JAVA_LONG, 0);
            if (n == 0) {
                return new long[0];
            }
            MemorySegment out = arena.allocate(JAVA_LONG, n);
            check(LibCuda.cuGraphGetNodes(graph, out, count), "cuGraphGetNodes", "hGraph=%#x, numNodes=%d", graph, n);
            return out.asSlice(0, count.get(JAVA_LONG, 0) * JAVA_LONG.byteSize()).toArray(JAVA_LONG);
        }
    }

    /**
     * The graph's edges, by {@code cuGraphGetEdges_v2} where the driver has it, with
     * {@code edgeData} NULL (a captured graph's edges carry default data, so the query is not
     * lossy), else by {@code cuGraphGetEdges}. Asked twice: once for the count, once for the edges.
     *
     * @return {@code {from, to}}: {@code to[i]} depends on {@code from[i]}
     */
    static long[][] getEdges(long graph) {
        String name = LibCuda.cuGraphGetEdges_v2$PRESENT ? "cuGraphGetEdges_v2" : "cuGraphGetEdges";
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_LONG);
            check(edges(graph, MemorySegment.NULL, MemorySegment.NULL, count), name, "hGraph=%#x, from=NULL, to=NULL", graph);
            long n = count.get(JAVA_LONG, 0);
            if (n == 0) {
                return new long[][] {new long[0], new long[0]};
            }
            MemorySegment from = arena.allocate(JAVA_LONG, n);
            MemorySegment to = arena.allocate(JAVA_LONG, n);
            check(edges(graph, from, to, count), name, "hGraph=%#x, numEdges=%d", graph, n);
            long bytes = count.get(JAVA_LONG, 0) * JAVA_LONG.byteSize();
            return new long[][] {from.asSlice(0, bytes).toArray(JAVA_LONG), to.asSlice(0, bytes).toArray(JAVA_LONG)};
        }
    }

    private static int edges(long graph, MemorySegment from, MemorySegment to, MemorySegment count) {
        return LibCuda.cuGraphGetEdges_v2$PRESENT
                ? LibCuda.cuGraphGetEdges_v2(graph, from, to, MemorySegment.NULL, count)
                : LibCuda.cuGraphGetEdges(graph, from, to, count);
    }

    /** {@return the node's {@code CUgraphNodeType}} */
    static int nodeGetType(long node) {
        return outInt(out -> LibCuda.cuGraphNodeGetType(node, out), "cuGraphNodeGetType", "hNode=%#x", node);
    }

    /**
     * Sets a kernel node's launch in an executable graph, by {@link CudaLib#EXEC_KERNEL_NODE_SET_PARAMS}.
     * The driver copies the parameters, so {@code params} may be refilled once this returns.
     * Allocates nothing unless it fails.
     */
    static void execKernelNodeSetParams(long exec, long node, long func, int gx, int gy, int gz,
                                        int bx, int by, int bz, int smem, MemorySegment params) {
        MemorySegment p = KERNEL_NODE_PARAMS.get();
        p.set(JAVA_LONG, 0, func);
        p.set(JAVA_INT, 8, gx);
        p.set(JAVA_INT, 12, gy);
        p.set(JAVA_INT, 16, gz);
        p.set(JAVA_INT, 20, bx);
        p.set(JAVA_INT, 24, by);
        p.set(JAVA_INT, 28, bz);
        p.set(JAVA_INT, 32, smem);
        p.set(ADDRESS, 40, params);
        p.set(ADDRESS, 48, MemorySegment.NULL);
        p.set(JAVA_LONG, 56, 0L);
        p.set(JAVA_LONG, 64, 0L);
        int st = LibCuda.cuGraphExecKernelNodeSetParams_v2(exec, node, p);
        if (st != SUCCESS) {
            throw CudaLib.error(st, CudaLib.EXEC_KERNEL_NODE_SET_PARAMS, "hGraphExec=" + CudaLib.hex(exec) + ", hNode="
                    + CudaLib.hex(node) + ", func=" + CudaLib.hex(func) + ", grid=[" + gx + ", " + gy + ", " + gz
                    + "], block=[" + bx + ", " + by + ", " + bz + "], smem=" + smem);
        }
    }

    /** A one-dimensional byte memset ({@code elementSize} 1, {@code height} 1), as {@code cuMemsetD8Async} captures. */
    static void execMemsetNodeSetParams(long exec, long node, long dst, int value, long bytes, long ctx) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(CUDA_MEMSET_NODE_PARAMS);
            p.set(JAVA_LONG, 0, dst);
            p.set(JAVA_LONG, 8, 0L);
            p.set(JAVA_INT, 16, value & 0xff);
            p.set(JAVA_INT, 20, 1);
            p.set(JAVA_LONG, 24, bytes);
            p.set(JAVA_LONG, 32, 1L);
            check(LibCuda.cuGraphExecMemsetNodeSetParams(exec, node, p, ctx), "cuGraphExecMemsetNodeSetParams",
                    "hGraphExec=%#x, hNode=%#x, dst=%#x, value=%d, width=%d", exec, node, dst, value & 0xff, bytes);
        }
    }

    /** A one-dimensional device-to-device copy ({@code CU_MEMORYTYPE_DEVICE} both ways, height and depth 1). */
    static void execMemcpyNodeSetParams(long exec, long node, long src, long dst, long bytes, long ctx) {
        try (Arena arena = Arena.ofConfined()) {
            // Offsets of CUDA_MEMCPY3D: srcMemoryType 32, srcDevice 48, srcPitch 72, srcHeight 80,
            // dstMemoryType 120, dstDevice 136, dstPitch 160, dstHeight 168, WidthInBytes 176, Height 184, Depth 192.
            MemorySegment p = arena.allocate(MEMCPY3D_BYTES, 8);
            p.set(JAVA_INT, 32, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, 48, src);
            p.set(JAVA_LONG, 72, bytes);
            p.set(JAVA_LONG, 80, 1L);
            p.set(JAVA_INT, 120, MEMORYTYPE_DEVICE);
            p.set(JAVA_LONG, 136, dst);
            p.set(JAVA_LONG, 160, bytes);
            p.set(JAVA_LONG, 168, 1L);
            p.set(JAVA_LONG, 176, bytes);
            p.set(JAVA_LONG, 184, 1L);
            p.set(JAVA_LONG, 192, 1L);
            check(LibCuda.cuGraphExecMemcpyNodeSetParams(exec, node, p, ctx), "cuGraphExecMemcpyNodeSetParams",
                    "hGraphExec=%#x, hNode=%#x, srcDevice=%#x, dstDevice=%#x, WidthInBytes=%d", exec, node, src, dst, bytes);
        }
    }

    /**
     * Updates an executable graph in place. {@code CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE} is a refused
     * update, not an error: its result is returned.
     *
     * @return the {@code CUgraphExecUpdateResult}, 0 when the update was made
     */
    static int execUpdate(long exec, long graph) {
        try (Arena arena = Arena.ofConfined()) {
            // CUgraphExecUpdateResultInfo: the result (a 4-byte enum, padded), errorNode, errorFromNode.
            MemorySegment info = arena.allocate(24, 8);
            int st = LibCuda.cuGraphExecUpdate_v2(exec, graph, info);
            check(st == CudaError.GRAPH_EXEC_UPDATE_FAILURE.code() ? SUCCESS : st, "cuGraphExecUpdate_v2",
                    "hGraphExec=%#x, hGraph=%#x", exec, graph);
            return st == SUCCESS ? 0 : info.get(JAVA_INT, 0);
        }
    }
}
