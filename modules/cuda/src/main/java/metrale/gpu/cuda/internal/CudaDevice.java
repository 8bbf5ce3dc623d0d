// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.MemInfo;

/**
 * The CUDA {@link Driver}: one device's primary context, retained on open and released on
 * {@link #close()}.
 *
 * <p><b>Threads.</b> A CUDA context is current per OS thread, and a virtual thread may run on a
 * different carrier at each call, so every method makes the context current with an unconditional
 * {@code cuCtxSetCurrent} right before its driver call, with nothing that could unmount a virtual
 * thread in between. Setting the context already current is a cheap driver call (see
 * {@code CtxBindBenchmark} for the measured cost); comparing with {@code cuCtxGetCurrent} first
 * would cost a second downcall plus an out-parameter on every call. Methods may be called from any
 * thread, platform or virtual, concurrently.
 *
 * <p><b>Lifecycle.</b> {@link #close()} is idempotent and never throws; a failure to release is
 * kept in {@link #closeFailure()}. Any call after close is a {@link GpuException}
 * ({@code CONTEXT_IS_DESTROYED}) naming the call, never a crash.
 */
public final class CudaDevice implements Driver {

    private final int ordinal;
    private final int device;
    private final long ctx;
    private final DeviceInfo info;
    private final CudaKernels kernels = new CudaKernels();
    private final CudaHostMemory hostMemory;
    private volatile boolean closed;
    private volatile GpuException closeFailure;

    CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        this.device = CudaLib.deviceGet(ordinal);
        this.ctx = CuCtx.primaryRetain(device);
        this.hostMemory = new CudaHostMemory(ctx);
        try {
            CuCtx.setCurrent(ctx);
            this.info = new DeviceInfo("cuda", CudaLib.deviceGetName(device), CudaLib.deviceTotalMem(device),
                    CudaLib.deviceGetAttribute(CudaLib.ATTR_MULTIPROCESSOR_COUNT, device),
                    CudaLib.deviceGetAttribute(CudaLib.ATTR_COMPUTE_CAPABILITY_MAJOR, device),
                    CudaLib.deviceGetAttribute(CudaLib.ATTR_COMPUTE_CAPABILITY_MINOR, device),
                    CudaLib.deviceGetAttribute(CudaLib.ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device));
        } catch (RuntimeException | Error e) {
            CuCtx.primaryRelease(device);
            throw e;
        }
    }

    /**
     * The context this class last made current on a platform thread, and the {@link #epoch} it did
     * so in. A CUDA context is current per OS thread; a platform thread is one OS thread for its
     * life, so a thread that bound this context needs no second {@code cuCtxSetCurrent} (about 28 ns
     * a call on the H200). A virtual thread moves between carriers, so it binds on every call.
     */
    private static final ThreadLocal<long[]> BOUND = ThreadLocal.withInitial(() -> new long[2]);

    /** Bumped by every close, so no thread trusts a binding made before a context was released. */
    private static volatile long epoch = 1;

    /**
     * Makes the context current on this thread; the first thing every call does. Native code that
     * changes the current context behind this class's back must be followed by
     * {@link #bindToThread()}, which always binds.
     */
    private void bind(String function) {
        if (closed) {
            throw closedError(function);
        }
        if (Thread.currentThread().isVirtual()) {
            CuCtx.setCurrent(ctx);
            return;
        }
        long[] b = BOUND.get();
        long e = epoch;
        if (b[0] != ctx || b[1] != e) {
            CuCtx.setCurrent(ctx);
            b[0] = ctx;
            b[1] = e;
        }
    }

    private GpuException closedError(String function) {
        return new GpuException(CudaError.CONTEXT_IS_DESTROYED, function,
                "the CUDA driver for device " + ordinal + " (" + info.name() + ") is closed");
    }

    static GpuException invalid(String function, String details) {
        return new GpuException(CudaError.INVALID_VALUE, function, details);
    }

    /** {@return the device ordinal} */
    @Override
    public int ordinal() {
        return ordinal;
    }

    /** {@return the primary context's handle} */
    long context() {
        return ctx;
    }

    /** {@return whether the driver can check launches against kernel signatures ({@code cuFuncGetParamInfo})} */
    public boolean checksKernelArguments() {
        return CudaLib.HAS_FUNC_GET_PARAM_INFO;
    }

    /** {@return why {@link #close()} could not release the context, if it could not} */
    public Optional<GpuException> closeFailure() {
        return Optional.ofNullable(closeFailure);
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public DeviceInfo deviceInfo() {
        return info;
    }

    @Override
    public void bindToThread() {
        if (closed) {
            throw closedError("cuCtxSetCurrent");
        }
        CuCtx.setCurrent(ctx);
        if (!Thread.currentThread().isVirtual()) {
            long[] b = BOUND.get();
            b[0] = ctx;
            b[1] = epoch;
        }
    }

    // ---- memory ---------------------------------------------------------------------------

    @Override
    public long memAlloc(long bytes) {
        bind("cuMemAlloc_v2");
        return CuMem.alloc(bytes);
    }

    @Override
    public long memAllocManaged(long bytes, int flags) {
        bind("cuMemAllocManaged");
        return CuMem.allocManaged(bytes, flags);
    }

    // The device's default memory pool, looked up at first use.
    private volatile long memPool;

    private long memPool(String function) {
        bind(function);
        long p = memPool;
        if (p == 0) {
            p = CuMem.defaultPool(device);
            memPool = p;
        }
        return p;
    }

    @Override
    public boolean supportsMemPools() {
        return CudaLib.HAS_MEM_POOLS;
    }

    @Override
    public long memAllocAsync(long bytes, long stream) {
        requirePools("cuMemAllocAsync");
        bind("cuMemAllocAsync");
        return CuMem.allocAsync(bytes, stream);
    }

    @Override
    public void memFreeAsync(long ptr, long stream) {
        requirePools("cuMemFreeAsync");
        bind("cuMemFreeAsync");
        CuMem.freeAsync(ptr, stream);
    }

    @Override
    public void memPoolTrimTo(long minBytesToKeep) {
        requirePools("cuMemPoolTrimTo");
        CuMem.poolTrimTo(memPool("cuMemPoolTrimTo"), minBytesToKeep);
    }

    @Override
    public long memPoolGetAttribute(int attr) {
        requirePools("cuMemPoolGetAttribute");
        return CuMem.poolGetAttribute(memPool("cuMemPoolGetAttribute"), attr);
    }

    @Override
    public void memPoolSetAttribute(int attr, long value) {
        requirePools("cuMemPoolSetAttribute");
        CuMem.poolSetAttribute(memPool("cuMemPoolSetAttribute"), attr, value);
    }

    private static void requirePools(String function) {
        if (!CudaLib.HAS_MEM_POOLS) {
            throw new GpuException(CudaError.NOT_SUPPORTED, function,
                    "this CUDA driver lacks the stream-ordered allocator (cuMemAllocAsync and cuMemPool*, CUDA 11.2+)");
        }
    }

    @Override
    public void memFree(long ptr) {
        bind("cuMemFree_v2");
        CuMem.free(ptr);
    }

    @Override
    public MemInfo memGetInfo() {
        bind("cuMemGetInfo_v2");
        long[] fi = CuMem.getInfo();
        return new MemInfo(fi[0], fi[1]);
    }

    @Override
    public MemorySegment memHostAlloc(long bytes, int flags) {
        bind("cuMemHostAlloc");
        return hostMemory.alloc(bytes, flags);
    }

    @Override
    public void memFreeHost(MemorySegment host) {
        bind("cuMemFreeHost");
        hostMemory.free(host);
    }

    @Override
    public long memHostGetDevicePointer(MemorySegment host) {
        bind("cuMemHostGetDevicePointer_v2");
        return CudaHostMemory.devicePointer(host);
    }

    // ---- copies and memset ----------------------------------------------------------------

    @Override
    public void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        bind("cuMemcpyHtoD_v2");
        hostMemory.copyHtoD(dst, src, bytes);
    }

    @Override
    public void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        bind("cuMemcpyDtoH_v2");
        hostMemory.copyDtoH(dst, src, bytes);
    }

    @Override
    public void memcpyDtoD(long dst, long src, long bytes) {
        bind("cuMemcpyDtoD_v2");
        CuMem.copyDtoD(dst, src, bytes);
    }

    @Override
    public void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        bind("cuMemcpyHtoDAsync_v2");
        CudaHostMemory.checkAsyncHost("cuMemcpyHtoDAsync_v2", src, bytes);
        CuMem.copyHtoDAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        bind("cuMemcpyDtoHAsync_v2");
        CudaHostMemory.checkAsyncHost("cuMemcpyDtoHAsync_v2", dst, bytes);
        CuMem.copyDtoHAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        bind("cuMemcpyDtoDAsync_v2");
        CuMem.copyDtoDAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream) {
        bind("cuMemcpy2DAsync_v2");
        CuMem.copy2DAsyncDtoD(dst, dstPitch, src, srcPitch, widthBytes, height, stream);
    }

    private static byte byteValue(String function, int value) {
        if (value < 0 || value > 255) {
            throw invalid(function, "uc=" + value + " is not a byte value in [0, 255]");
        }
        return (byte) value;
    }

    @Override
    public void memsetD8(long ptr, int value, long bytes) {
        bind("cuMemsetD8_v2");
        CuMem.setD8(ptr, byteValue("cuMemsetD8_v2", value), bytes);
    }

    @Override
    public void memsetD8Async(long ptr, int value, long bytes, long stream) {
        bind("cuMemsetD8Async");
        CuMem.setD8Async(ptr, byteValue("cuMemsetD8Async", value), bytes, stream);
    }

    // ---- streams, events, context ------------------------------------------------------------

    @Override
    public long streamCreate(int flags) {
        bind("cuStreamCreate");
        return CuStream.create(flags);
    }

    @Override
    public void streamDestroy(long stream) {
        bind("cuStreamDestroy_v2");
        CuStream.destroy(stream);
    }

    @Override
    public void streamSynchronize(long stream) {
        bind("cuStreamSynchronize");
        CuStream.synchronize(stream);
    }

    @Override
    public boolean streamQuery(long stream) {
        bind("cuStreamQuery");
        return CuStream.query(stream);
    }

    @Override
    public void ctxSynchronize() {
        bind("cuCtxSynchronize");
        CuCtx.synchronize();
    }

    @Override
    public long eventCreate(int flags) {
        bind("cuEventCreate");
        return CuEvent.create(flags);
    }

    @Override
    public void eventRecord(long event, long stream) {
        bind("cuEventRecord");
        CuEvent.record(event, stream);
    }

    @Override
    public void streamWaitEvent(long stream, long event, int flags) {
        bind("cuStreamWaitEvent");
        CuStream.waitEvent(stream, event, flags);
    }

    // ---- several devices ----------------------------------------------------------------------

    private static CudaDevice peer(Driver d, String function) {
        if (!(d instanceof CudaDevice p)) {
            throw new GpuException(CudaError.INVALID_CONTEXT, function, "the peer is a " + d.getClass().getName()
                    + ", not a CUDA driver");
        }
        if (p.closed) {
            throw p.closedError(function);
        }
        return p;
    }

    @Override
    public boolean canAccessPeer(Driver peer) {
        CudaDevice p = peer(peer, "cuDeviceCanAccessPeer");
        return p.device != device && CudaLib.deviceCanAccessPeer(device, p.device);
    }

    @Override
    public void enablePeerAccess(Driver peer) {
        CudaDevice p = peer(peer, "cuCtxEnablePeerAccess");
        bind("cuCtxEnablePeerAccess");
        CuCtx.enablePeerAccess(p.ctx);
    }

    @Override
    public void memcpyPeer(long dst, Driver dstDriver, long src, long bytes) {
        CudaDevice p = peer(dstDriver, "cuMemcpyPeer");
        bind("cuMemcpyPeer");
        CuMem.copyPeer(dst, p.ctx, src, ctx, bytes);
    }

    @Override
    public void memcpyPeerAsync(long dst, Driver dstDriver, long src, long bytes, long stream) {
        CudaDevice p = peer(dstDriver, "cuMemcpyPeerAsync");
        bind("cuMemcpyPeerAsync");
        CuMem.copyPeerAsync(dst, p.ctx, src, ctx, bytes, stream);
    }

    /** {@inheritDoc} CUDA accepts an event of another context in {@code cuStreamWaitEvent}. */
    @Override
    public void streamWaitPeerEvent(long stream, Driver eventDriver, long event) {
        peer(eventDriver, "cuStreamWaitEvent");
        bind("cuStreamWaitEvent");
        CuStream.waitEvent(stream, event, 0);
    }

    @Override
    public void eventSynchronize(long event) {
        bind("cuEventSynchronize");
        CuEvent.synchronize(event);
    }

    @Override
    public boolean eventQuery(long event) {
        bind("cuEventQuery");
        return CuEvent.query(event);
    }

    @Override
    public float eventElapsedTime(long start, long end) {
        bind(CudaLib.EVENT_ELAPSED_TIME);
        return CuEvent.elapsedTime(start, end);
    }

    @Override
    public void eventDestroy(long event) {
        bind("cuEventDestroy_v2");
        CuEvent.destroy(event);
    }

    // ---- capture and graphs -----------------------------------------------------------------

    @Override
    public boolean supportsCaptureQuery() {
        return CudaLib.HAS_STREAM_IS_CAPTURING;
    }

    @Override
    public void streamBeginCapture(long stream, int mode) {
        bind("cuStreamBeginCapture_v2");
        CuStream.beginCapture(stream, mode);
    }

    @Override
    public long streamEndCapture(long stream) {
        bind("cuStreamEndCapture");
        return CuStream.endCapture(stream);
    }

    @Override
    public int streamIsCapturing(long stream) {
        bind("cuStreamIsCapturing");
        return CuStream.isCapturing(stream);
    }

    @Override
    public long graphInstantiate(long graph) {
        bind("cuGraphInstantiateWithFlags");
        return CuGraph.instantiate(graph, 0);
    }

    @Override
    public void graphLaunch(long exec, long stream) {
        bind("cuGraphLaunch");
        CuGraph.launch(exec, stream);
    }

    @Override
    public void graphExecDestroy(long exec) {
        bind("cuGraphExecDestroy");
        CuGraph.execDestroy(exec);
    }

    @Override
    public void graphDestroy(long graph) {
        bind("cuGraphDestroy");
        CuGraph.destroy(graph);
    }

    @Override
    public long[] graphGetNodes(long graph) {
        bind("cuGraphGetNodes");
        return CuGraph.getNodes(graph);
    }

    @Override
    public void graphExecMemsetNodeSetParams(long exec, long node, long ptr, int value, long bytes) {
        bind("cuGraphExecMemsetNodeSetParams");
        CuGraph.execMemsetNodeSetParams(exec, node, ptr, value, bytes, ctx);
    }

    @Override
    public void graphExecCopyNodeSetParams(long exec, long node, long src, long dst, long bytes) {
        bind("cuGraphExecMemcpyNodeSetParams");
        CuGraph.execMemcpyNodeSetParams(exec, node, src, dst, bytes, ctx);
    }

    @Override
    public int graphExecUpdate(long exec, long graph) {
        bind("cuGraphExecUpdate_v2");
        return CuGraph.execUpdate(exec, graph);
    }

    @Override
    public long[][] graphGetEdges(long graph) {
        bind("cuGraphGetEdges");
        return CuGraph.getEdges(graph);
    }

    @Override
    public int graphNodeType(long node) {
        bind("cuGraphNodeGetType");
        return CuGraph.nodeGetType(node);
    }

    @Override
    public void graphExecKernelNodeSetParams(long exec, long node, long func, LaunchConfig config, KernelArgs args) {
        bind(CudaLib.EXEC_KERNEL_NODE_SET_PARAMS);
        kernels.check(func, args);
        var g = config.grid();
        var b = config.block();
        CuGraph.execKernelNodeSetParams(exec, node, func, g.x(), g.y(), g.z(), b.x(), b.y(), b.z(),
                config.sharedMemBytes(), args.table());
    }

    // ---- modules and launches -----------------------------------------------------------------

    @Override
    public long moduleLoadData(String name, byte[] image) {
        bind("cuModuleLoadData");
        long m = CuModule.loadData(name, image);
        kernels.loaded(m, image);
        return m;
    }

    @Override
    public void moduleUnload(long module) {
        bind("cuModuleUnload");
        CuModule.unload(module);
        kernels.unloaded(module);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Records the kernel's parameter sizes for the launch check. The count comes from
     * {@code cuFuncGetParamCount} (CUDA 13.2+), else from the module's PTX text, and then
     * {@code cuFuncGetParamInfo} is asked for exactly those parameters, so no call fails and
     * compute-sanitizer stays quiet. Only a cubin or fatbin on an older driver falls back to
     * probing until {@code cuFuncGetParamInfo} reports the index past the last.
     */
    @Override
    public long moduleGetFunction(long module, String func) {
        bind("cuModuleGetFunction");
        long f = CuModule.getFunction(module, func);
        kernels.lookedUp(module, func, f);
        return f;
    }

    /** {@return how this driver counts a kernel's parameters: {@code cuFuncGetParamCount}, {@code ptx} (falling back to probing for binaries), or {@code none}} */
    public String paramCountSource() {
        return CudaKernels.paramCountSource();
    }

    @Override
    public void funcSetMaxDynamicSharedMemory(long func, int bytes) {
        bind("cuFuncSetAttribute");
        CuModule.setAttribute(func, CudaLib.FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Where the driver has {@code cuFuncGetParamInfo}, the argument count and each argument's
     * size are checked against the kernel's signature first, so a wrong argument list is
     * {@code INVALID_VALUE} rather than the driver reading past the table. Allocates nothing
     * unless it fails.
     */
    @Override
    public void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args) {
        bind("cuLaunchKernel");
        kernels.check(func, args);
        var g = config.grid();
        var b = config.block();
        CuModule.launchKernel(func, g.x(), g.y(), g.z(), b.x(), b.y(), b.z(), config.sharedMemBytes(), stream, args.table());
    }

    /**
     * {@inheritDoc}
     *
     * <p>Without an architecture option, {@code --gpu-architecture=compute_XY} of this device is
     * added, so the PTX loads here.
     */
    @Override
    public byte[] compileToPtx(String name, String source, String... options) {
        return CudaKernels.compileToPtx(info, name, source, options);
    }

    // ---- faults and teardown ------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>Calls {@code cuMemGetInfo_v2}: it waits for no work, is not one of the calls a stream
     * capture forbids, and returns the sticky error once the context has latched one. Only sticky
     * and teardown codes are reported; anything else (including {@code NOT_READY}) is
     * {@link CudaError#SUCCESS}.
     */
    @Override
    public CudaError probe() {
        if (closed) {
            return CudaError.CONTEXT_IS_DESTROYED;
        }
        CuCtx.setCurrent(ctx);
        CudaError e = CuMem.getInfoStatus();
        return e.isSticky() || e.isTeardown() ? e : CudaError.SUCCESS;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Releases this driver's retain of the primary context (the last release destroys it and
     * everything allocated in it) and unbinds it from the calling thread. After a sticky fault the
     * release still succeeds. A failure is kept in {@link #closeFailure()}.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        epoch++;
        try {
            CudaError e = CuCtx.primaryRelease(device);
            if (e != CudaError.SUCCESS) {
                closeFailure = new GpuException(e, "cuDevicePrimaryCtxRelease_v2", "dev=" + device);
            }
            try {
                CuCtx.setCurrent(0);
            } catch (GpuException ignored) {
                // Unbinding a released context cannot fail in a way that matters: the next bind replaces it.
            }
        } catch (RuntimeException e) {
            closeFailure = e instanceof GpuException g ? g
                    : new GpuException(CudaError.UNKNOWN, CudaError.UNKNOWN.code(), "cuDevicePrimaryCtxRelease_v2", "dev=" + device, e);
        }
    }

    @Override
    public String toString() {
        return "CudaDevice[" + ordinal + ": " + info + (closed ? ", closed" : "") + "]";
    }
}
