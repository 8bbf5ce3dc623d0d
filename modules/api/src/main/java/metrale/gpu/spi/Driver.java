// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;

/**
 * The raw device operations of one device context, one method per CUDA driver API call.
 *
 * <p><b>Errors.</b> Every method reports a non-success status as a {@link metrale.gpu.GpuException}
 * carrying the {@link CudaError} the CUDA driver would return, the driver function's name as its
 * operation (for example {@code cuMemAlloc_v2}) and the arguments. A driver never latches faults,
 * never logs and never keeps a ledger: the runtime core does.
 *
 * <p><b>Host memory.</b> Host segments passed in have been checked by the core: they are alive and
 * at least {@code bytes} long. Blocking copies may receive heap segments; async copies receive
 * native segments only.
 *
 * <p><b>Handles.</b> Device pointers, streams, events, graphs, modules and functions are
 * {@code long}s. Stream {@code 0} and {@code 1} are the legacy default stream, {@code 2} the
 * per-thread default stream.
 *
 * <p><b>Threads.</b> Every method may be called from any thread; a driver makes its context
 * current on the calling thread as needed.
 */
public interface Driver extends AutoCloseable {

    /** {@return the backend's name, {@code cuda} or {@code sim}} */
    String name();

    /** {@return the device's name, memory, SM count and compute capability} */
    DeviceInfo deviceInfo();

    /** Makes this driver's context current on the calling thread ({@code cuCtxSetCurrent}). */
    void bindToThread();

    // ---- memory ---------------------------------------------------------------------------

    /**
     * {@code cuMemAlloc_v2}: size 0 is {@code INVALID_VALUE}; too much is {@code OUT_OF_MEMORY}.
     *
     * @param bytes the size
     * @return the device address, 256-byte aligned
     */
    long memAlloc(long bytes);

    /**
     * {@code cuMemAllocManaged}.
     *
     * @param bytes the size
     * @param flags {@code CU_MEM_ATTACH_GLOBAL} (1) or {@code CU_MEM_ATTACH_HOST} (2)
     * @return the address, valid on host and device
     */
    long memAllocManaged(long bytes, int flags);

    /**
     * {@code cuMemFree_v2}: 0 is a no-op; interior, freed or unknown pointers are {@code INVALID_VALUE}.
     *
     * @param ptr a base pointer from {@link #memAlloc} or {@link #memAllocManaged}
     */
    void memFree(long ptr);

    /** {@return {@code cuMemGetInfo_v2}: free and total device memory} */
    MemInfo memGetInfo();

    /**
     * {@code cuMemHostAlloc}: page-locked host memory.
     *
     * @param bytes the size; 0 gives a {@code NULL} segment
     * @param flags {@code PORTABLE} 1, {@code DEVICEMAP} 2, {@code WRITECOMBINED} 4; other bits are {@code INVALID_VALUE}
     * @return the memory, exactly {@code bytes} long, in a shared scope of its own that
     *         {@link #memFreeHost} ends: an access after the free throws {@link IllegalStateException}
     *         instead of touching freed page-locked memory
     */
    MemorySegment memHostAlloc(long bytes, int flags);

    /**
     * {@code cuMemFreeHost}: NULL is a no-op; anything but a base address from {@link #memHostAlloc} is {@code INVALID_VALUE}.
     * Ends the segment's scope before the memory is freed.
     *
     * @param host the segment {@link #memHostAlloc} returned
     * @throws IllegalStateException if the scope cannot end because a downcall holds it; nothing is freed
     */
    void memFreeHost(MemorySegment host);

    /**
     * {@code cuMemHostGetDevicePointer_v2}: under unified addressing the device pointer equals the host pointer.
     *
     * @param host page-locked memory from {@link #memHostAlloc}, or a slice of it
     * @return the device address of its first byte
     */
    long memHostGetDevicePointer(MemorySegment host);

    // ---- stream-ordered allocation (CUDA's memory pools) ------------------------------------

    /** {@code CU_MEMPOOL_ATTR_RELEASE_THRESHOLD}: bytes the pool keeps at a synchronization (64-bit). */
    int MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
    /** {@code CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT}: bytes of backing memory the pool holds (64-bit). */
    int MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5;
    /** {@code CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH}: the high-water mark of the reserved bytes (64-bit). */
    int MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6;
    /** {@code CU_MEMPOOL_ATTR_USED_MEM_CURRENT}: bytes in allocations the application holds (64-bit). */
    int MEMPOOL_ATTR_USED_MEM_CURRENT = 7;
    /** {@code CU_MEMPOOL_ATTR_USED_MEM_HIGH}: the high-water mark of the used bytes (64-bit). */
    int MEMPOOL_ATTR_USED_MEM_HIGH = 8;

    /** {@return whether the stream-ordered allocator ({@code cuMemAllocAsync}, CUDA 11.2+) is available} */
    default boolean supportsMemPools() {
        return false;
    }

    /**
     * {@code cuMemAllocAsync} from the device's default memory pool: usable by work queued on
     * {@code stream} after this call, and by other streams once ordered after it.
     *
     * @param bytes  the size; 0 is {@code INVALID_VALUE}
     * @param stream the stream
     * @return the device address
     */
    default long memAllocAsync(long bytes, long stream) {
        throw unsupported("cuMemAllocAsync");
    }

    /**
     * {@code cuMemFreeAsync}: the memory is released when the work queued on {@code stream}
     * before this call has completed.
     *
     * @param ptr    an address from {@link #memAllocAsync}
     * @param stream the stream
     */
    default void memFreeAsync(long ptr, long stream) {
        throw unsupported("cuMemFreeAsync");
    }

    /**
     * {@code cuMemPoolTrimTo} on the device's default pool: releases backing memory of completed frees.
     *
     * @param minBytesToKeep bytes the pool may keep
     */
    default void memPoolTrimTo(long minBytesToKeep) {
        throw unsupported("cuMemPoolTrimTo");
    }

    /**
     * {@code cuMemPoolGetAttribute} of a 64-bit attribute ({@code MEMPOOL_ATTR_*}) of the device's default pool.
     *
     * @param attr the attribute, 4 to 8
     * @return its value, unsigned
     */
    default long memPoolGetAttribute(int attr) {
        throw unsupported("cuMemPoolGetAttribute");
    }

    /**
     * {@code cuMemPoolSetAttribute} of a 64-bit attribute of the device's default pool.
     *
     * @param attr  {@link #MEMPOOL_ATTR_RELEASE_THRESHOLD}, or a high-water mark to reset (value 0)
     * @param value the value, unsigned
     */
    default void memPoolSetAttribute(int attr, long value) {
        throw unsupported("cuMemPoolSetAttribute");
    }

    /**
     * Checks the stream order of memory the runtime's pool hands out again: whether work still
     * pending on the device uses {@code [ptr, ptr + bytes)} and is not ordered before the next
     * work of {@code stream}. Only a driver that sees its pending work can tell (the simulator);
     * CUDA cannot, and answers {@code null}.
     *
     * @param ptr    the block's base
     * @param bytes  its size
     * @param stream the stream it is handed to
     * @return a description of the unordered pending work, or {@code null} when none is known
     */
    default String streamOrderViolation(long ptr, long bytes, long stream) {
        return null;
    }

    /** {@return whether {@link #streamOrderViolation} can find anything; when false the runtime skips the checks} */
    default boolean detectsStreamOrderViolations() {
        return false;
    }

    /**
     * Tells a driver that checks stream order ({@link #detectsStreamOrderViolations()}) which
     * allocation an address lies in, as the runtime knows it, its pool's blocks included: a kernel
     * then counts as touching the whole allocation each pointer argument lies in at launch, since
     * it may reach any byte of it, not only the address passed. Other drivers ignore it.
     *
     * @param extents the runtime's answer, asked at each launch while the driver holds its own lock;
     *                it must not call back into the driver
     */
    default void allocationExtents(Extents extents) {
    }

    /**
     * Tells a driver that checks bounds that the runtime now hands out {@code [ptr, ptr + bytes)},
     * inside one of this driver's allocations, as a block of its own: a block of the runtime's
     * caching pool, its red zone included. From the first such block on, the enclosing allocation
     * is the pool's: an access past a block's end faults as one past a {@code cuMemAlloc}'s end
     * would, and so does one into the allocation's bytes no block holds. Other drivers ignore it.
     *
     * @param ptr   the block's first byte, inside a live allocation of this driver
     * @param bytes the block's bytes, exactly what the runtime hands out (not its rounded size)
     */
    default void poolBlockCarved(long ptr, long bytes) {
    }

    /**
     * Tells a driver that took {@link #poolBlockCarved} that the block at {@code ptr} went back to
     * the pool on {@code stream}: work already enqueued there may still use it, so it stops being a
     * block only once that work has run (a driver may wait for more: the simulator waits for all
     * work enqueued before the release, on every stream). A block carved again at an overlapping range before then
     * takes its place at once. An address that is no carved block is ignored.
     *
     * @param ptr    the block's first byte, as given to {@link #poolBlockCarved}
     * @param stream the stream whose order the release follows
     */
    default void poolBlockReleased(long ptr, long stream) {
    }

    /**
     * Tells a driver that checks bounds that the application freed the allocation or pool block
     * based at {@code ptr} and the runtime's quarantine now holds it: it is neither freed nor
     * released yet, so nothing can reuse it, but a kernel that touches it once the work enqueued
     * before this call has run is touching freed memory, and faults as it would after a
     * {@code cuMemFree}. Copies still reach it (the quarantine reads its red zone back). The hold
     * ends with the memory's {@link #memFree} or {@link #poolBlockReleased}. Other drivers ignore it.
     *
     * @param ptr the allocation's or block's first byte
     */
    default void memoryHeld(long ptr) {
    }

    /**
     * Tells a driver that checks bounds that the allocation or pool block based at {@code ptr} is a
     * buffer of {@code bytes} followed by the runtime's red zone of {@code pad} bytes: the pad is
     * memory of the allocation (copies and memsets reach it, so the runtime fills and scans it) but
     * not of the buffer, so a kernel the driver runs from its own code faults at an access into it,
     * as one past a buffer without a red zone would. Other drivers ignore it.
     *
     * @param ptr   the allocation's or block's first byte
     * @param bytes the buffer's bytes, as the application asked
     * @param pad   the red zone's bytes after them
     */
    default void redZone(long ptr, long bytes, long pad) {
    }

    /** Which allocation an address lies in: see {@link #allocationExtents}. */
    @FunctionalInterface
    interface Extents {
        /**
         * {@return {@code {base, bytes}} of the live allocation holding {@code addr}, or {@code null} when none}
         *
         * @param addr a device address
         */
        long[] of(long addr);
    }

    private metrale.gpu.GpuException unsupported(String function) {
        return new metrale.gpu.GpuException(CudaError.NOT_SUPPORTED, function,
                "the " + name() + " driver has no stream-ordered allocator");
    }

    // ---- copies and memset ----------------------------------------------------------------

    /**
     * {@code cuMemcpyHtoD_v2}: blocking, on the legacy default stream.
     *
     * @param dst   device address
     * @param src   host memory, at least {@code bytes} long
     * @param bytes the count; 0 is a no-op
     */
    void memcpyHtoD(long dst, MemorySegment src, long bytes);

    /**
     * {@code cuMemcpyDtoH_v2}: blocking, on the legacy default stream.
     *
     * @param dst   host memory, at least {@code bytes} long
     * @param src   device address
     * @param bytes the count
     */
    void memcpyDtoH(MemorySegment dst, long src, long bytes);

    /**
     * {@code cuMemcpyDtoD_v2}: ordered on the legacy default stream, no host synchronization.
     *
     * @param dst   device address
     * @param src   device address
     * @param bytes the count
     */
    void memcpyDtoD(long dst, long src, long bytes);

    /**
     * {@code cuMemcpyHtoDAsync_v2}: the source is read when the copy executes.
     *
     * @param dst    device address
     * @param src    native host memory
     * @param bytes  the count
     * @param stream the stream
     */
    void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream);

    /**
     * {@code cuMemcpyDtoHAsync_v2}: the destination is written when the copy executes.
     *
     * @param dst    native host memory
     * @param src    device address
     * @param bytes  the count
     * @param stream the stream
     */
    void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream);

    /**
     * {@code cuMemcpyDtoDAsync_v2}.
     *
     * @param dst    device address
     * @param src    device address
     * @param bytes  the count
     * @param stream the stream
     */
    void memcpyDtoDAsync(long dst, long src, long bytes, long stream);

    /**
     * {@code cuMemcpy2DAsync_v2}, device to device: rows of {@code widthBytes} from
     * {@code src + row * srcPitch} to {@code dst + row * dstPitch}. A pitch below the width is
     * {@code INVALID_VALUE}; a width or height of 0 is a no-op.
     *
     * @param dst        destination base
     * @param dstPitch   destination row pitch in bytes
     * @param src        source base
     * @param srcPitch   source row pitch in bytes
     * @param widthBytes bytes per row
     * @param height     rows
     * @param stream     the stream
     */
    void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream);

    /**
     * {@code cuMemsetD8_v2}: no host synchronization.
     *
     * @param ptr   device address
     * @param value the byte, 0 to 255
     * @param bytes the count
     */
    void memsetD8(long ptr, int value, long bytes);

    /**
     * {@code cuMemsetD8Async}.
     *
     * @param ptr    device address
     * @param value  the byte, 0 to 255
     * @param bytes  the count
     * @param stream the stream
     */
    void memsetD8Async(long ptr, int value, long bytes, long stream);

    // ---- streams, events, context ------------------------------------------------------------

    /**
     * {@code cuStreamCreate}.
     *
     * @param flags 0 (blocking) or 1 ({@code CU_STREAM_NON_BLOCKING}); anything else is {@code INVALID_VALUE}
     * @return the stream
     */
    long streamCreate(int flags);

    /**
     * {@code cuStreamDestroy_v2}: returns at once; pending work still completes. NULL is {@code INVALID_HANDLE}.
     *
     * @param stream the stream
     */
    void streamDestroy(long stream);

    /**
     * {@code cuStreamSynchronize}: blocks until the stream's work is done; reports sticky errors.
     *
     * @param stream the stream
     */
    void streamSynchronize(long stream);

    /**
     * {@code cuStreamQuery}.
     *
     * @param stream the stream
     * @return {@code true} when all its work is done, {@code false} for {@code NOT_READY}
     */
    boolean streamQuery(long stream);

    /** {@code cuCtxSynchronize}: blocks until all work of the context is done. */
    void ctxSynchronize();

    /**
     * {@code cuEventCreate}.
     *
     * @param flags {@code BLOCKING_SYNC} 1, {@code DISABLE_TIMING} 2, {@code INTERPROCESS} 4 (requires 2)
     * @return the event
     */
    long eventCreate(int flags);

    /**
     * {@code cuEventRecord}: re-recording overwrites.
     *
     * @param event  the event
     * @param stream the stream
     */
    void eventRecord(long event, long stream);

    /**
     * {@code cuStreamWaitEvent}: later work on {@code stream} waits for the event's work; a never-recorded event is a no-op.
     *
     * @param stream the waiting stream
     * @param event  the event
     * @param flags  0, or {@code CU_EVENT_WAIT_EXTERNAL} (1) inside a capture
     */
    void streamWaitEvent(long stream, long event, int flags);

    /**
     * {@code cuEventSynchronize}: a never-recorded event returns at once.
     *
     * @param event the event
     */
    void eventSynchronize(long event);

    /**
     * {@code cuEventQuery}.
     *
     * @param event the event
     * @return {@code true} when the work before its record is done, {@code false} for {@code NOT_READY}
     */
    boolean eventQuery(long event);

    /**
     * {@code cuEventElapsedTime}: unrecorded or {@code DISABLE_TIMING} events are {@code INVALID_HANDLE}, incomplete ones {@code NOT_READY}.
     *
     * @param start the start event
     * @param end   the end event
     * @return milliseconds from start to end; negative when reversed
     */
    float eventElapsedTime(long start, long end);

    /**
     * {@code cuEventDestroy_v2}: does not block.
     *
     * @param event the event
     */
    void eventDestroy(long event);

    // ---- capture and graphs -----------------------------------------------------------------

    /** {@return whether {@link #streamIsCapturing} is backed by the driver; {@code false} under drivers that lack {@code cuStreamIsCapturing} (SCALE)} */
    boolean supportsCaptureQuery();

    /**
     * {@code cuStreamBeginCapture_v2}: the legacy stream is {@code STREAM_CAPTURE_UNSUPPORTED}, a second begin {@code ILLEGAL_STATE}.
     *
     * @param stream the stream
     * @param mode   {@code CUstreamCaptureMode}: 0 global, 1 thread-local, 2 relaxed
     */
    void streamBeginCapture(long stream, int mode);

    /**
     * {@code cuStreamEndCapture}: an invalidated capture is {@code STREAM_CAPTURE_INVALIDATED}
     * and the stream goes back to not capturing; a stream not capturing is {@code ILLEGAL_STATE}.
     *
     * @param stream the stream
     * @return the captured graph ({@code CUgraph})
     */
    long streamEndCapture(long stream);

    /**
     * {@code cuStreamIsCapturing}.
     *
     * @param stream the stream
     * @return 0 none, 1 active, 2 invalidated
     */
    int streamIsCapturing(long stream);

    /**
     * {@code cuGraphInstantiateWithFlags(exec, graph, 0)}.
     *
     * @param graph the graph
     * @return the executable graph ({@code CUgraphExec})
     */
    long graphInstantiate(long graph);

    /**
     * {@code cuGraphLaunch}: ordered after earlier work on {@code stream} and earlier launches of the same exec.
     *
     * @param exec   the executable graph
     * @param stream the stream
     */
    void graphLaunch(long exec, long stream);

    /**
     * {@code cuGraphExecDestroy}: a running exec still completes.
     *
     * @param exec the executable graph
     */
    void graphExecDestroy(long exec);

    /**
     * {@code cuGraphDestroy}: execs made from it stay usable.
     *
     * @param graph the graph
     */
    void graphDestroy(long graph);

    /** {@code CUgraphNodeType} of a kernel node. */
    int NODE_KERNEL = 0;
    /** {@code CUgraphNodeType} of a memcpy node. */
    int NODE_MEMCPY = 1;
    /** {@code CUgraphNodeType} of a memset node. */
    int NODE_MEMSET = 2;
    /** {@code CUgraphNodeType} of a child-graph node. */
    int NODE_GRAPH = 4;
    /** {@code CUgraphNodeType} of an empty node. */
    int NODE_EMPTY = 5;

    /**
     * {@code cuGraphGetNodes}: the graph's nodes, in no documented order (see {@link #graphGetEdges}).
     * A driver without it throws {@code NOT_SUPPORTED}.
     *
     * @param graph the graph (not the executable graph)
     * @return the node handles ({@code CUgraphNode})
     */
    default long[] graphGetNodes(long graph) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphGetNodes", "the " + name() + " driver has no graph node access");
    }

    /**
     * {@code cuGraphGetEdges}: the graph's dependency edges; {@code to[i]} depends on {@code from[i]}.
     * A driver without it throws {@code NOT_SUPPORTED}.
     *
     * @param graph the graph
     * @return {@code {from, to}}, of equal length
     */
    default long[][] graphGetEdges(long graph) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphGetEdges", "the " + name() + " driver has no graph node access");
    }

    /**
     * {@code cuGraphNodeGetType}.
     *
     * @param node a node of a live graph
     * @return its {@code CUgraphNodeType}, for example {@link #NODE_KERNEL}
     */
    default int graphNodeType(long node) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphNodeGetType", "the " + name() + " driver has no graph node access");
    }

    /**
     * {@code cuGraphExecKernelNodeSetParams_v2}: sets a kernel node's function, grid, block,
     * shared memory and arguments in an executable graph, for launches made after this call
     * (launches already made run the old values). The node must belong to the graph the exec
     * was instantiated from and be a kernel node, and the function must be of this context;
     * otherwise {@code INVALID_VALUE}. The arguments are copied.
     *
     * @param exec   the executable graph
     * @param node   the kernel node of the exec's graph
     * @param func   the function ({@code CUfunction})
     * @param config grid, block and dynamic shared memory
     * @param args   the arguments
     */
    default void graphExecKernelNodeSetParams(long exec, long node, long func, LaunchConfig config, KernelArgs args) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphExecKernelNodeSetParams_v2",
                "the " + name() + " driver cannot update graph nodes in place");
    }

    /**
     * {@code cuGraphExecMemcpyNodeSetParams} for a one-dimensional device-to-device copy: sets the
     * node's source, destination and byte count in an executable graph, for launches made after
     * this call. The node must be a device-to-device memcpy node of the graph the exec was
     * instantiated from, the size non-zero, both ranges live memory of this context; otherwise
     * {@code INVALID_VALUE}.
     *
     * @param exec  the executable graph
     * @param node  the memcpy node of the exec's graph
     * @param src   the source
     * @param dst   the destination
     * @param bytes the byte count
     */
    default void graphExecCopyNodeSetParams(long exec, long node, long src, long dst, long bytes) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphExecMemcpyNodeSetParams",
                "the " + name() + " driver cannot update graph nodes in place");
    }

    /** {@code CUgraphExecUpdateResult}: the update succeeded. */
    int UPDATE_SUCCESS = 0;
    /** {@code CUgraphExecUpdateResult}: an invalid value. */
    int UPDATE_ERROR = 1;
    /** {@code CUgraphExecUpdateResult}: the node count or a node's dependencies differ. */
    int UPDATE_TOPOLOGY_CHANGED = 2;
    /** {@code CUgraphExecUpdateResult}: a node's type differs. */
    int UPDATE_NODE_TYPE_CHANGED = 3;
    /** {@code CUgraphExecUpdateResult}: a node's parameters changed in a way an update cannot apply. */
    int UPDATE_PARAMETERS_CHANGED = 5;
    /** {@code CUgraphExecUpdateResult}: something about a node is not supported. */
    int UPDATE_NOT_SUPPORTED = 6;
    /** {@code CUgraphExecUpdateResult}: a kernel node's function changed in an unsupported way (another context's). */
    int UPDATE_UNSUPPORTED_FUNCTION_CHANGE = 7;

    /**
     * {@code cuGraphExecUpdate_v2}: sets every node of {@code exec} from the paired node of a
     * topologically identical {@code graph}, for launches made after this call; the exec's nodes
     * stay those of the graph it was instantiated from. A refused update
     * ({@code CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE}) changes nothing and is not thrown: its
     * {@code CUgraphExecUpdateResult} is returned, for example {@link #UPDATE_TOPOLOGY_CHANGED}.
     *
     * @param exec  the executable graph
     * @param graph the graph with the new parameters
     * @return {@link #UPDATE_SUCCESS}, or why the update was refused
     */
    default int graphExecUpdate(long exec, long graph) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphExecUpdate_v2",
                "the " + name() + " driver cannot update executable graphs");
    }

    /**
     * {@code cuGraphExecMemsetNodeSetParams} for a one-dimensional byte memset: sets the node's
     * destination, value and byte count in an executable graph, for launches made after this call.
     * The node must be a memset node of the graph the exec was instantiated from, the size non-zero,
     * the destination memory of the same kind (device, managed, page-locked) and context as the
     * original's; CUDA may also refuse a changed size. Otherwise {@code INVALID_VALUE}.
     *
     * @param exec  the executable graph
     * @param node  the memset node of the exec's graph
     * @param ptr   the destination
     * @param value the byte value (low 8 bits)
     * @param bytes the byte count
     */
    default void graphExecMemsetNodeSetParams(long exec, long node, long ptr, int value, long bytes) {
        throw new GpuException(CudaError.NOT_SUPPORTED, "cuGraphExecMemsetNodeSetParams",
                "the " + name() + " driver cannot update graph nodes in place");
    }

    // ---- modules and launches -----------------------------------------------------------------

    /**
     * {@code cuModuleLoadData}: PTX, cubin or fatbin. A garbage image is {@code INVALID_IMAGE}, bad PTX {@code INVALID_PTX}.
     * The simulator binds the module by {@code name} to the {@code SimKernel}s registered for it.
     *
     * @param name  the module's name, as {@code Gpu.kernel(module, func)} will ask for it
     * @param image the image bytes (PTX text need not be NUL-terminated)
     * @return the module ({@code CUmodule})
     */
    long moduleLoadData(String name, byte[] image);

    /**
     * {@code cuModuleUnload}.
     *
     * @param module the module
     */
    void moduleUnload(long module);

    /**
     * {@code cuModuleGetFunction}: an unknown name is {@code NOT_FOUND}, an unloaded module {@code INVALID_HANDLE}.
     *
     * @param module the module
     * @param func   the function's (mangled) name
     * @return the function ({@code CUfunction}), never 0
     */
    long moduleGetFunction(long module, String func);

    /**
     * {@code cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)}: the opt-in above 48 KiB of dynamic shared memory.
     *
     * @param func  the function
     * @param bytes the opt-in; above the device's limit is {@code INVALID_VALUE}
     */
    void funcSetMaxDynamicSharedMemory(long func, int bytes);

    /**
     * {@code cuLaunchKernel} with {@code kernelParams = args.table()}: asynchronous; checks the
     * configuration as CUDA does. On a capturing stream the launch is recorded, not run. The
     * argument values are copied before this returns.
     *
     * @param func   the function
     * @param config grid, block and dynamic shared memory
     * @param stream the stream
     * @param args   the arguments
     */
    void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args);

    /**
     * Compiles CUDA C source to PTX at run time (NVRTC).
     *
     * @param name    the program's name, used in the log
     * @param source  CUDA C source
     * @param options compiler options, e.g. {@code --gpu-architecture=compute_90}
     * @return the PTX, NUL-free
     * @throws metrale.gpu.GpuException with {@code NOT_SUPPORTED} where the backend cannot compile,
     *         or {@code INVALID_SOURCE} holding the compiler log when compilation fails
     */
    byte[] compileToPtx(String name, String source, String... options);

    // ---- several devices ------------------------------------------------------------------------

    /** {@return the ordinal of this driver's device among {@link BackendProvider#devices}; 0 by default} */
    default int ordinal() {
        return 0;
    }

    /**
     * {@code cuDeviceCanAccessPeer}: whether this device can access {@code peer}'s memory directly.
     *
     * @param peer a driver of the same backend on another device
     * @return the answer; {@code false} for the same device and by default
     */
    default boolean canAccessPeer(Driver peer) {
        return false;
    }

    /**
     * {@code cuCtxEnablePeerAccess(peerContext, 0)} with this context current: kernels and copies
     * of this context may then address {@code peer}'s memory. A second enable of the same peer is
     * {@code PEER_ACCESS_ALREADY_ENABLED}; a peer that cannot be accessed {@code PEER_ACCESS_UNSUPPORTED}
     * or {@code INVALID_DEVICE}.
     *
     * @param peer a driver of the same backend on another device
     */
    default void enablePeerAccess(Driver peer) {
        throw new metrale.gpu.GpuException(CudaError.NOT_SUPPORTED, "cuCtxEnablePeerAccess", "the " + name()
                + " backend has no peer access");
    }

    /**
     * {@code cuMemcpyPeer}: copies from this context's memory to {@code dstDriver}'s; synchronous
     * with respect to the host like {@code cuMemcpy}, and needs no peer access (the driver stages the
     * copy when the devices cannot reach each other). {@code dstDriver} may be this driver.
     *
     * @param dst       device address in {@code dstDriver}'s context
     * @param dstDriver the destination's driver, of the same backend
     * @param src       device address in this context
     * @param bytes     the count
     */
    default void memcpyPeer(long dst, Driver dstDriver, long src, long bytes) {
        throw new metrale.gpu.GpuException(CudaError.NOT_SUPPORTED, "cuMemcpyPeer", "the " + name()
                + " backend has no peer copies");
    }

    /**
     * {@code cuMemcpyPeerAsync}: as {@link #memcpyPeer}, ordered on {@code stream}, a stream of this
     * context.
     *
     * @param dst       device address in {@code dstDriver}'s context
     * @param dstDriver the destination's driver, of the same backend
     * @param src       device address in this context
     * @param bytes     the count
     * @param stream    a stream of this context
     */
    default void memcpyPeerAsync(long dst, Driver dstDriver, long src, long bytes, long stream) {
        throw new metrale.gpu.GpuException(CudaError.NOT_SUPPORTED, "cuMemcpyPeerAsync", "the " + name()
                + " backend has no peer copies");
    }

    /**
     * {@code cuStreamWaitEvent} with an event of another context: later work on {@code stream} (of
     * this context) waits for the work before the event's record on {@code eventDriver}'s device.
     *
     * @param stream      a stream of this context
     * @param eventDriver the driver that created the event (may be this one)
     * @param event       the event
     */
    default void streamWaitPeerEvent(long stream, Driver eventDriver, long event) {
        if (eventDriver == this) {
            streamWaitEvent(stream, event, 0);
            return;
        }
        throw new metrale.gpu.GpuException(CudaError.NOT_SUPPORTED, "cuStreamWaitEvent", "the " + name()
                + " backend cannot wait for another device's event");
    }

    // ---- faults and teardown ------------------------------------------------------------------

    /**
     * Probes the context after a failed call, without waiting for work.
     *
     * @return the sticky error the context is in, or {@link CudaError#SUCCESS} when it is healthy
     */
    CudaError probe();

    /**
     * {@return the backend's controls for applications, if it has controls of the given type}
     * {@code Gpu.unwrap} answers with this, never with the driver itself, so an application cannot
     * allocate or free behind the runtime's ledger. The default has none.
     *
     * @param type the controls' type, for example {@code metrale.gpu.sim.SimControls}
     * @param <T>  the type
     */
    default <T> Optional<T> controls(Class<T> type) {
        return Optional.empty();
    }

    /**
     * Releases the context. Idempotent; never throws. Memory still allocated is released with it.
     */
    @Override
    void close();
}
