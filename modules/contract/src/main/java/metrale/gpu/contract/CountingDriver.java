// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.MemInfo;

/**
 * A {@link Driver} decorator for tests: passes every call to the backend's own driver, counts the
 * calls, and keeps the handles the runtime obtained and has not released (allocations, page-locked
 * host memory, streams, events, modules, graphs and graph execs).
 *
 * <p>It is opened as backend {@value #BACKEND} with option {@value #INNER} naming the backend it
 * wraps; {@link #over(GpuBuilder)} does both. With it a test can prove that the runtime refused a
 * call before the driver ({@link #calls()} did not move), and that {@link Gpu#close()} released
 * everything before closing the driver ({@link #leftAtClose()}).
 *
 * <p>Thread-safe: the runtime may call it from any thread.
 */
public final class CountingDriver implements Driver {

    /** The backend name the decorator is opened by. */
    public static final String BACKEND = "counting";

    /** The backend option naming the wrapped backend. */
    public static final String INNER = "counting.inner";

    private final Driver inner;
    private final CallLedger ledger = new CallLedger();

    /**
     * Wraps a driver.
     *
     * @param inner the backend's driver, owned by this decorator from now on
     */
    public CountingDriver(Driver inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    /**
     * {@return {@code builder} changed to open the backend it names through this decorator}
     *
     * @param builder a builder that names its backend
     * @throws IllegalArgumentException if the builder names no backend
     */
    public static GpuBuilder over(GpuBuilder builder) {
        String name = builder.options().backend();
        if (BACKEND.equalsIgnoreCase(name)) {
            return builder;
        }
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("the builder names no backend to count the calls of");
        }
        return builder.backend(BACKEND).backendOption(INNER, name);
    }

    /**
     * {@return the decorator under an open runtime}
     *
     * @param gpu a runtime opened through {@link #over(GpuBuilder)}
     * @throws IllegalStateException if the runtime's driver is not a counting one
     */
    public static CountingDriver of(Gpu gpu) {
        return gpu.unwrap(CountingDriver.class)
                .orElseThrow(() -> new IllegalStateException("the runtime was not opened through CountingDriver.over"));
    }

    /** {@return this decorator when asked for it (tests reach it through {@code Gpu.unwrap}), else the wrapped driver's controls} */
    @Override
    public <T> java.util.Optional<T> controls(Class<T> type) {
        return type.isInstance(this) ? java.util.Optional.of(type.cast(this)) : inner.controls(type);
    }

    /** {@return the wrapped driver} */
    public Driver inner() {
        return inner;
    }

    /** {@return how many driver calls the runtime made so far} */
    public long calls() {
        return ledger.calls();
    }

    /**
     * {@return how many times the runtime called one driver method}
     *
     * @param method the {@link Driver} method's name, e.g. {@code memFree}
     */
    public long calls(String method) {
        return ledger.calls(method);
    }

    /**
     * {@return what the runtime still held when it closed the driver, one line per handle it had
     * obtained and never asked the driver to release} Empty before {@link #close()}.
     */
    public List<String> leftAtClose() {
        return ledger.leftAtClose();
    }

    /** {@return whether the runtime closed this driver} */
    public boolean closed() {
        return ledger.closed();
    }

    /** {@return the release calls the driver refused, with its error} */
    public List<String> failedReleases() {
        return ledger.failedReleases();
    }

    /** {@return the byte counts of every {@code memAlloc} the runtime made, in order} */
    public List<Long> allocSizes() {
        return ledger.allocSizes();
    }

    /** {@return how many times the runtime called each driver method so far, by method name} */
    public Map<String, Long> callsByMethod() {
        return ledger.callsByMethod();
    }

    /**
     * Makes the next call of a driver method fail with {@code error}, as the backend would report
     * it: for the runtime's clean-up paths. A call that obtains something fails before it reaches
     * the backend; a release (free, destroy, unload) is carried out by the backend and then reported
     * failed, so nothing leaks.
     *
     * @param method the {@link Driver} method's name, e.g. {@code graphInstantiate}
     * @param error  the error it reports; choose one that is not sticky unless the test wants a fault
     */
    public void failNext(String method, CudaError error) {
        ledger.failNext(method, error);
    }

    /**
     * Makes the next call of a driver method stop inside this decorator, before it reaches the
     * backend, until the test lets it go: a runtime call held there is in flight for as long as the
     * test wants, so the test can observe what other threads (a {@code close()}) do meanwhile.
     *
     * @param method the {@link Driver} method's name, e.g. {@code memsetD8}
     * @return the hold, to wait for the call and to let it go
     */
    public HeldCall holdNext(String method) {
        return ledger.holdNext(method);
    }

    /**
     * Makes the next call of a graph node update ({@code graphExecKernelNodeSetParams},
     * {@code graphExecMemsetNodeSetParams} or {@code graphExecCopyNodeSetParams}) report success
     * without reaching the backend: a driver whose update went wrong silently, so the graph keeps
     * what it held, for tests of what notices that.
     *
     * @param method one of those method names
     */
    public void dropNext(String method) {
        ledger.dropNext(method);
    }

    /** {@return the names of the driver methods the runtime called, in the order it called them} */
    public List<String> callsInOrder() {
        return ledger.callsInOrder();
    }

    @Override
    public String name() {
        ledger.count("name");
        return inner.name();
    }

    @Override
    public DeviceInfo deviceInfo() {
        ledger.count("deviceInfo");
        return inner.deviceInfo();
    }

    @Override
    public void bindToThread() {
        ledger.count("bindToThread");
        inner.bindToThread();
    }

    @Override
    public long memAlloc(long bytes) {
        ledger.count("memAlloc");
        ledger.allocated(bytes);
        long p = inner.memAlloc(bytes);
        ledger.hold("device memory", p, bytes + " bytes");
        return p;
    }

    @Override
    public long memAllocManaged(long bytes, int flags) {
        ledger.count("memAllocManaged");
        long p = inner.memAllocManaged(bytes, flags);
        ledger.hold("device memory", p, bytes + " managed bytes");
        return p;
    }

    @Override
    public void memFree(long ptr) {
        ledger.release("memFree", "device memory", ptr, () -> inner.memFree(ptr));
    }

    @Override
    public MemInfo memGetInfo() {
        ledger.count("memGetInfo");
        return inner.memGetInfo();
    }

    @Override
    public MemorySegment memHostAlloc(long bytes, int flags) {
        ledger.count("memHostAlloc");
        MemorySegment s = inner.memHostAlloc(bytes, flags);
        ledger.hold("page-locked host memory", s.address(), bytes + " bytes");
        return s;
    }

    @Override
    public void memFreeHost(MemorySegment host) {
        ledger.release("memFreeHost", "page-locked host memory", host.address(), () -> inner.memFreeHost(host));
    }

    @Override
    public long memHostGetDevicePointer(MemorySegment host) {
        ledger.count("memHostGetDevicePointer");
        return inner.memHostGetDevicePointer(host);
    }

    @Override
    public void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        ledger.count("memcpyHtoD");
        inner.memcpyHtoD(dst, src, bytes);
    }

    @Override
    public void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        ledger.count("memcpyDtoH");
        inner.memcpyDtoH(dst, src, bytes);
    }

    @Override
    public void memcpyDtoD(long dst, long src, long bytes) {
        ledger.count("memcpyDtoD");
        inner.memcpyDtoD(dst, src, bytes);
    }

    @Override
    public void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        ledger.count("memcpyHtoDAsync");
        inner.memcpyHtoDAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        ledger.count("memcpyDtoHAsync");
        inner.memcpyDtoHAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        ledger.count("memcpyDtoDAsync");
        inner.memcpyDtoDAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream) {
        ledger.count("memcpy2DAsync");
        inner.memcpy2DAsync(dst, dstPitch, src, srcPitch, widthBytes, height, stream);
    }

    @Override
    public void memsetD8(long ptr, int value, long bytes) {
        ledger.count("memsetD8");
        inner.memsetD8(ptr, value, bytes);
    }

    @Override
    public void memsetD8Async(long ptr, int value, long bytes, long stream) {
        ledger.count("memsetD8Async");
        inner.memsetD8Async(ptr, value, bytes, stream);
    }

    @Override
    public long streamCreate(int flags) {
        ledger.count("streamCreate");
        long s = inner.streamCreate(flags);
        ledger.hold("stream", s, "flags " + flags);
        return s;
    }

    @Override
    public void streamDestroy(long stream) {
        ledger.release("streamDestroy", "stream", stream, () -> inner.streamDestroy(stream));
    }

    @Override
    public void streamSynchronize(long stream) {
        ledger.count("streamSynchronize");
        inner.streamSynchronize(stream);
    }

    @Override
    public boolean streamQuery(long stream) {
        ledger.count("streamQuery");
        return inner.streamQuery(stream);
    }

    @Override
    public void ctxSynchronize() {
        ledger.count("ctxSynchronize");
        inner.ctxSynchronize();
    }

    @Override
    public long eventCreate(int flags) {
        ledger.count("eventCreate");
        long e = inner.eventCreate(flags);
        ledger.hold("event", e, "flags " + flags);
        return e;
    }

    @Override
    public void eventRecord(long event, long stream) {
        ledger.count("eventRecord");
        inner.eventRecord(event, stream);
    }

    @Override
    public void streamWaitEvent(long stream, long event, int flags) {
        ledger.count("streamWaitEvent");
        inner.streamWaitEvent(stream, event, flags);
    }

    @Override
    public void eventSynchronize(long event) {
        ledger.count("eventSynchronize");
        inner.eventSynchronize(event);
    }

    @Override
    public boolean eventQuery(long event) {
        ledger.count("eventQuery");
        return inner.eventQuery(event);
    }

    @Override
    public float eventElapsedTime(long start, long end) {
        ledger.count("eventElapsedTime");
        return inner.eventElapsedTime(start, end);
    }

    @Override
    public void eventDestroy(long event) {
        ledger.release("eventDestroy", "event", event, () -> inner.eventDestroy(event));
    }

    @Override
    public boolean supportsCaptureQuery() {
        ledger.count("supportsCaptureQuery");
        return inner.supportsCaptureQuery();
    }

    @Override
    public void streamBeginCapture(long stream, int mode) {
        ledger.count("streamBeginCapture");
        inner.streamBeginCapture(stream, mode);
    }

    @Override
    public long streamEndCapture(long stream) {
        ledger.count("streamEndCapture");
        long g = inner.streamEndCapture(stream);
        ledger.hold("graph", g, "captured on stream 0x" + Long.toHexString(stream));
        return g;
    }

    @Override
    public int streamIsCapturing(long stream) {
        ledger.count("streamIsCapturing");
        return inner.streamIsCapturing(stream);
    }

    @Override
    public long graphInstantiate(long graph) {
        ledger.count("graphInstantiate");
        long x = inner.graphInstantiate(graph);
        ledger.hold("graph exec", x, "of graph 0x" + Long.toHexString(graph));
        return x;
    }

    @Override
    public void graphLaunch(long exec, long stream) {
        ledger.count("graphLaunch");
        inner.graphLaunch(exec, stream);
    }

    @Override
    public void graphExecDestroy(long exec) {
        ledger.release("graphExecDestroy", "graph exec", exec, () -> inner.graphExecDestroy(exec));
    }

    @Override
    public void graphDestroy(long graph) {
        ledger.release("graphDestroy", "graph", graph, () -> inner.graphDestroy(graph));
    }

    @Override
    public long moduleLoadData(String name, byte[] image) {
        ledger.count("moduleLoadData");
        long m = inner.moduleLoadData(name, image);
        ledger.hold("module", m, name);
        return m;
    }

    @Override
    public void moduleUnload(long module) {
        ledger.release("moduleUnload", "module", module, () -> inner.moduleUnload(module));
    }

    @Override
    public long moduleGetFunction(long module, String func) {
        ledger.count("moduleGetFunction");
        return inner.moduleGetFunction(module, func);
    }

    @Override
    public void funcSetMaxDynamicSharedMemory(long func, int bytes) {
        ledger.count("funcSetMaxDynamicSharedMemory");
        inner.funcSetMaxDynamicSharedMemory(func, bytes);
    }

    @Override
    public void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args) {
        ledger.count("launchKernel");
        inner.launchKernel(func, config, stream, args);
    }

    @Override
    public byte[] compileToPtx(String name, String source, String... options) {
        ledger.count("compileToPtx");
        return inner.compileToPtx(name, source, options);
    }

    @Override
    public CudaError probe() {
        ledger.count("probe");
        return inner.probe();
    }

    @Override
    public void close() {
        ledger.count("close");
        ledger.closing();
        inner.close();
    }

    @Override
    public String toString() {
        return "CountingDriver[" + inner + "]";
    }

    // ---- the SPI's optional methods: counted and delegated, so the runtime sees the wrapped driver's answers

    /** A peer given as a decorator is the driver it wraps. */
    private static Driver unwrap(Driver d) {
        return d instanceof CountingDriver c ? c.inner : d;
    }

    @Override
    public boolean supportsMemPools() {
        ledger.count("supportsMemPools");
        return inner.supportsMemPools();
    }

    @Override
    public long memAllocAsync(long bytes, long stream) {
        ledger.count("memAllocAsync");
        return inner.memAllocAsync(bytes, stream);
    }

    @Override
    public void memFreeAsync(long ptr, long stream) {
        ledger.count("memFreeAsync");
        inner.memFreeAsync(ptr, stream);
    }

    @Override
    public void memPoolTrimTo(long minBytesToKeep) {
        ledger.count("memPoolTrimTo");
        inner.memPoolTrimTo(minBytesToKeep);
    }

    @Override
    public long memPoolGetAttribute(int attr) {
        ledger.count("memPoolGetAttribute");
        return inner.memPoolGetAttribute(attr);
    }

    @Override
    public void memPoolSetAttribute(int attr, long value) {
        ledger.count("memPoolSetAttribute");
        inner.memPoolSetAttribute(attr, value);
    }

    @Override
    public String streamOrderViolation(long ptr, long bytes, long stream) {
        ledger.count("streamOrderViolation");
        return inner.streamOrderViolation(ptr, bytes, stream);
    }

    @Override
    public boolean detectsStreamOrderViolations() {
        ledger.count("detectsStreamOrderViolations");
        return inner.detectsStreamOrderViolations();
    }

    @Override
    public void allocationExtents(Extents extents) {
        ledger.count("allocationExtents");
        inner.allocationExtents(extents);
    }

    @Override
    public void poolBlockCarved(long ptr, long bytes) {
        ledger.count("poolBlockCarved");
        inner.poolBlockCarved(ptr, bytes);
    }

    @Override
    public void redZone(long ptr, long bytes, long pad) {
        ledger.count("redZone");
        inner.redZone(ptr, bytes, pad);
    }

    @Override
    public void memoryHeld(long ptr) {
        ledger.count("memoryHeld");
        inner.memoryHeld(ptr);
    }

    @Override
    public void poolBlockReleased(long ptr, long stream) {
        ledger.count("poolBlockReleased");
        inner.poolBlockReleased(ptr, stream);
    }

    @Override
    public long[] graphGetNodes(long graph) {
        ledger.count("graphGetNodes");
        return inner.graphGetNodes(graph);
    }

    @Override
    public long[][] graphGetEdges(long graph) {
        ledger.count("graphGetEdges");
        return inner.graphGetEdges(graph);
    }

    @Override
    public int graphNodeType(long node) {
        ledger.count("graphNodeType");
        return inner.graphNodeType(node);
    }

    @Override
    public void graphExecKernelNodeSetParams(long exec, long node, long func, LaunchConfig config, KernelArgs args) {
        ledger.count("graphExecKernelNodeSetParams");
        if (!ledger.dropped("graphExecKernelNodeSetParams")) {
            inner.graphExecKernelNodeSetParams(exec, node, func, config, args);
        }
    }

    @Override
    public void graphExecCopyNodeSetParams(long exec, long node, long src, long dst, long bytes) {
        ledger.count("graphExecCopyNodeSetParams");
        if (!ledger.dropped("graphExecCopyNodeSetParams")) {
            inner.graphExecCopyNodeSetParams(exec, node, src, dst, bytes);
        }
    }

    @Override
    public int graphExecUpdate(long exec, long graph) {
        ledger.count("graphExecUpdate");
        return inner.graphExecUpdate(exec, graph);
    }

    @Override
    public void graphExecMemsetNodeSetParams(long exec, long node, long ptr, int value, long bytes) {
        ledger.count("graphExecMemsetNodeSetParams");
        if (!ledger.dropped("graphExecMemsetNodeSetParams")) {
            inner.graphExecMemsetNodeSetParams(exec, node, ptr, value, bytes);
        }
    }

    @Override
    public int ordinal() {
        ledger.count("ordinal");
        return inner.ordinal();
    }

    @Override
    public boolean canAccessPeer(Driver peer) {
        ledger.count("canAccessPeer");
        return inner.canAccessPeer(unwrap(peer));
    }

    @Override
    public void enablePeerAccess(Driver peer) {
        ledger.count("enablePeerAccess");
        inner.enablePeerAccess(unwrap(peer));
    }

    @Override
    public void memcpyPeer(long dst, Driver dstDriver, long src, long bytes) {
        ledger.count("memcpyPeer");
        inner.memcpyPeer(dst, unwrap(dstDriver), src, bytes);
    }

    @Override
    public void memcpyPeerAsync(long dst, Driver dstDriver, long src, long bytes, long stream) {
        ledger.count("memcpyPeerAsync");
        inner.memcpyPeerAsync(dst, unwrap(dstDriver), src, bytes, stream);
    }

    @Override
    public void streamWaitPeerEvent(long stream, Driver eventDriver, long event) {
        ledger.count("streamWaitPeerEvent");
        inner.streamWaitPeerEvent(stream, unwrap(eventDriver), event);
    }
}
