// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
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
    private final AtomicLong calls = new AtomicLong();
    private final Map<String, LongAdder> byCall = new ConcurrentHashMap<>();
    private final Map<String, String> held = new LinkedHashMap<>();
    private final List<String> failedReleases = new ArrayList<>();
    private final List<Long> allocSizes = new ArrayList<>();
    private final List<String> inOrder = new ArrayList<>();
    private final Map<String, CudaError> failNext = new java.util.HashMap<>();
    private final Map<String, Hold> holdNext = new java.util.HashMap<>();
    private final java.util.Set<String> dropNext = new java.util.HashSet<>();
    private List<String> leftAtClose;

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
        return calls.get();
    }

    /**
     * {@return how many times the runtime called one driver method}
     *
     * @param method the {@link Driver} method's name, e.g. {@code memFree}
     */
    public long calls(String method) {
        LongAdder n = byCall.get(method);
        return n == null ? 0 : n.sum();
    }

    /**
     * {@return what the runtime still held when it closed the driver, one line per handle it had
     * obtained and never asked the driver to release} Empty before {@link #close()}.
     */
    public synchronized List<String> leftAtClose() {
        return leftAtClose == null ? List.of() : leftAtClose;
    }

    /** {@return whether the runtime closed this driver} */
    public synchronized boolean closed() {
        return leftAtClose != null;
    }

    /** {@return the release calls the driver refused, with its error} */
    public synchronized List<String> failedReleases() {
        return List.copyOf(failedReleases);
    }

    /** {@return the byte counts of every {@code memAlloc} the runtime made, in order} */
    public synchronized List<Long> allocSizes() {
        return List.copyOf(allocSizes);
    }

    /** {@return how many times the runtime called each driver method so far, by method name} */
    public Map<String, Long> callsByMethod() {
        Map<String, Long> out = new java.util.TreeMap<>();
        byCall.forEach((k, v) -> out.put(k, v.sum()));
        return out;
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
    public synchronized void failNext(String method, CudaError error) {
        failNext.put(method, error);
    }

    /**
     * Makes the next call of a driver method stop inside this decorator, before it reaches the
     * backend, until the test lets it go: a runtime call held there is in flight for as long as the
     * test wants, so the test can observe what other threads (a {@code close()}) do meanwhile.
     *
     * @param method the {@link Driver} method's name, e.g. {@code memsetD8}
     * @return the hold, to wait for the call and to let it go
     */
    public synchronized Hold holdNext(String method) {
        Hold h = new Hold(method);
        holdNext.put(method, h);
        return h;
    }

    /**
     * A driver call stopped by {@link #holdNext(String)}. It waits at most a minute, so a test
     * that never lets it go still ends.
     */
    public final class Hold {
        private final String method;
        private final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        private final java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        private volatile long callsAtEntry = -1;
        private volatile long callsAtRelease = -1;

        private Hold(String method) {
            this.method = method;
        }

        /**
         * {@return whether the held call arrived within the time given}
         *
         * @param seconds how long to wait for it
         * @throws InterruptedException if interrupted while waiting
         */
        public boolean awaitEntered(long seconds) throws InterruptedException {
            return entered.await(seconds, java.util.concurrent.TimeUnit.SECONDS);
        }

        /** Lets the held call go on to the backend. */
        public void proceed() {
            go.countDown();
        }

        /**
         * {@return the driver calls any thread made while the held call waited, or -1 before it was
         * let go} The held call itself is not counted.
         */
        public long callsWhileHeld() {
            long at = callsAtRelease;
            return at < 0 ? -1 : at - callsAtEntry;
        }

        private void hold() {
            callsAtEntry = calls.get();
            entered.countDown();
            try {
                if (!go.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IllegalStateException("CountingDriver: the held " + method + " was never let go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("CountingDriver: interrupted while holding " + method, e);
            } finally {
                callsAtRelease = calls.get();
            }
        }
    }

    /**
     * Makes the next call of a graph node update ({@code graphExecKernelNodeSetParams},
     * {@code graphExecMemsetNodeSetParams} or {@code graphExecCopyNodeSetParams}) report success
     * without reaching the backend: a driver whose update went wrong silently, so the graph keeps
     * what it held, for tests of what notices that.
     *
     * @param method one of those method names
     */
    public synchronized void dropNext(String method) {
        dropNext.add(method);
    }

    private synchronized boolean dropped(String method) {
        return dropNext.remove(method);
    }

    /** {@return the names of the driver methods the runtime called, in the order it called them} */
    public synchronized List<String> callsInOrder() {
        return List.copyOf(inOrder);
    }

    private void count(String method) {
        CudaError injected;
        Hold hold;
        synchronized (this) {
            inOrder.add(method);
            injected = failNext.remove(method);
            hold = holdNext.remove(method);
        }
        calls.incrementAndGet();
        byCall.computeIfAbsent(method, k -> new LongAdder()).increment();
        if (hold != null) {
            hold.hold();
        }
        if (injected != null) {
            throw new GpuException(injected, method, "injected by CountingDriver.failNext");
        }
    }

    private synchronized void hold(String kind, long handle, String what) {
        held.put(kind + " 0x" + Long.toHexString(handle), what);
    }

    /**
     * Runs a release: the handle counts as released once asked for, even if the driver refuses
     * after a fault. A refusal that is an argument error (a free during a capture, 900) leaves the
     * handle live, as the driver does, so it is held again and not counted as a failed release.
     */
    private void release(String method, String kind, long handle, Runnable call) {
        CudaError injected;
        synchronized (this) {
            // An injected failure of a release is reported after the backend released the handle.
            injected = failNext.remove(method);
        }
        count(method);
        String key = kind + " 0x" + Long.toHexString(handle);
        String what;
        synchronized (this) {
            what = held.remove(key);
        }
        try {
            call.run();
        } catch (GpuException e) {
            synchronized (this) {
                if (!e.error().isSticky() && !e.error().isTeardown() && what != null) {
                    held.put(key, what);
                } else {
                    failedReleases.add(method + " " + key + ": " + e.error());
                }
            }
            throw e;
        }
        if (injected != null) {
            throw new GpuException(injected, method, "injected by CountingDriver.failNext");
        }
    }

    @Override
    public String name() {
        count("name");
        return inner.name();
    }

    @Override
    public DeviceInfo deviceInfo() {
        count("deviceInfo");
        return inner.deviceInfo();
    }

    @Override
    public void bindToThread() {
        count("bindToThread");
        inner.bindToThread();
    }

    @Override
    public long memAlloc(long bytes) {
        count("memAlloc");
        synchronized (this) {
            allocSizes.add(bytes);
        }
        long p = inner.memAlloc(bytes);
        hold("device memory", p, bytes + " bytes");
        return p;
    }

    @Override
    public long memAllocManaged(long bytes, int flags) {
        count("memAllocManaged");
        long p = inner.memAllocManaged(bytes, flags);
        hold("device memory", p, bytes + " managed bytes");
        return p;
    }

    @Override
    public void memFree(long ptr) {
        release("memFree", "device memory", ptr, () -> inner.memFree(ptr));
    }

    @Override
    public MemInfo memGetInfo() {
        count("memGetInfo");
        return inner.memGetInfo();
    }

    @Override
    public MemorySegment memHostAlloc(long bytes, int flags) {
        count("memHostAlloc");
        MemorySegment s = inner.memHostAlloc(bytes, flags);
        hold("page-locked host memory", s.address(), bytes + " bytes");
        return s;
    }

    @Override
    public void memFreeHost(MemorySegment host) {
        release("memFreeHost", "page-locked host memory", host.address(), () -> inner.memFreeHost(host));
    }

    @Override
    public long memHostGetDevicePointer(MemorySegment host) {
        count("memHostGetDevicePointer");
        return inner.memHostGetDevicePointer(host);
    }

    @Override
    public void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        count("memcpyHtoD");
        inner.memcpyHtoD(dst, src, bytes);
    }

    @Override
    public void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        count("memcpyDtoH");
        inner.memcpyDtoH(dst, src, bytes);
    }

    @Override
    public void memcpyDtoD(long dst, long src, long bytes) {
        count("memcpyDtoD");
        inner.memcpyDtoD(dst, src, bytes);
    }

    @Override
    public void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        count("memcpyHtoDAsync");
        inner.memcpyHtoDAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        count("memcpyDtoHAsync");
        inner.memcpyDtoHAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        count("memcpyDtoDAsync");
        inner.memcpyDtoDAsync(dst, src, bytes, stream);
    }

    @Override
    public void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream) {
        count("memcpy2DAsync");
        inner.memcpy2DAsync(dst, dstPitch, src, srcPitch, widthBytes, height, stream);
    }

    @Override
    public void memsetD8(long ptr, int value, long bytes) {
        count("memsetD8");
        inner.memsetD8(ptr, value, bytes);
    }

    @Override
    public void memsetD8Async(long ptr, int value, long bytes, long stream) {
        count("memsetD8Async");
        inner.memsetD8Async(ptr, value, bytes, stream);
    }

    @Override
    public long streamCreate(int flags) {
        count("streamCreate");
        long s = inner.streamCreate(flags);
        hold("stream", s, "flags " + flags);
        return s;
    }

    @Override
    public void streamDestroy(long stream) {
        release("streamDestroy", "stream", stream, () -> inner.streamDestroy(stream));
    }

    @Override
    public void streamSynchronize(long stream) {
        count("streamSynchronize");
        inner.streamSynchronize(stream);
    }

    @Override
    public boolean streamQuery(long stream) {
        count("streamQuery");
        return inner.streamQuery(stream);
    }

    @Override
    public void ctxSynchronize() {
        count("ctxSynchronize");
        inner.ctxSynchronize();
    }

    @Override
    public long eventCreate(int flags) {
        count("eventCreate");
        long e = inner.eventCreate(flags);
        hold("event", e, "flags " + flags);
        return e;
    }

    @Override
    public void eventRecord(long event, long stream) {
        count("eventRecord");
        inner.eventRecord(event, stream);
    }

    @Override
    public void streamWaitEvent(long stream, long event, int flags) {
        count("streamWaitEvent");
        inner.streamWaitEvent(stream, event, flags);
    }

    @Override
    public void eventSynchronize(long event) {
        count("eventSynchronize");
        inner.eventSynchronize(event);
    }

    @Override
    public boolean eventQuery(long event) {
        count("eventQuery");
        return inner.eventQuery(event);
    }

    @Override
    public float eventElapsedTime(long start, long end) {
        count("eventElapsedTime");
        return inner.eventElapsedTime(start, end);
    }

    @Override
    public void eventDestroy(long event) {
        release("eventDestroy", "event", event, () -> inner.eventDestroy(event));
    }

    @Override
    public boolean supportsCaptureQuery() {
        count("supportsCaptureQuery");
        return inner.supportsCaptureQuery();
    }

    @Override
    public void streamBeginCapture(long stream, int mode) {
        count("streamBeginCapture");
        inner.streamBeginCapture(stream, mode);
    }

    @Override
    public long streamEndCapture(long stream) {
        count("streamEndCapture");
        long g = inner.streamEndCapture(stream);
        hold("graph", g, "captured on stream 0x" + Long.toHexString(stream));
        return g;
    }

    @Override
    public int streamIsCapturing(long stream) {
        count("streamIsCapturing");
        return inner.streamIsCapturing(stream);
    }

    @Override
    public long graphInstantiate(long graph) {
        count("graphInstantiate");
        long x = inner.graphInstantiate(graph);
        hold("graph exec", x, "of graph 0x" + Long.toHexString(graph));
        return x;
    }

    @Override
    public void graphLaunch(long exec, long stream) {
        count("graphLaunch");
        inner.graphLaunch(exec, stream);
    }

    @Override
    public void graphExecDestroy(long exec) {
        release("graphExecDestroy", "graph exec", exec, () -> inner.graphExecDestroy(exec));
    }

    @Override
    public void graphDestroy(long graph) {
        release("graphDestroy", "graph", graph, () -> inner.graphDestroy(graph));
    }

    @Override
    public long moduleLoadData(String name, byte[] image) {
        count("moduleLoadData");
        long m = inner.moduleLoadData(name, image);
        hold("module", m, name);
        return m;
    }

    @Override
    public void moduleUnload(long module) {
        release("moduleUnload", "module", module, () -> inner.moduleUnload(module));
    }

    @Override
    public long moduleGetFunction(long module, String func) {
        count("moduleGetFunction");
        return inner.moduleGetFunction(module, func);
    }

    @Override
    public void funcSetMaxDynamicSharedMemory(long func, int bytes) {
        count("funcSetMaxDynamicSharedMemory");
        inner.funcSetMaxDynamicSharedMemory(func, bytes);
    }

    @Override
    public void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args) {
        count("launchKernel");
        inner.launchKernel(func, config, stream, args);
    }

    @Override
    public byte[] compileToPtx(String name, String source, String... options) {
        count("compileToPtx");
        return inner.compileToPtx(name, source, options);
    }

    @Override
    public CudaError probe() {
        count("probe");
        return inner.probe();
    }

    @Override
    public void close() {
        count("close");
        synchronized (this) {
            if (leftAtClose == null) {
                List<String> left = new ArrayList<>();
                held.forEach((handle, what) -> left.add(handle + " (" + what + ")"));
                leftAtClose = List.copyOf(left);
            }
        }
        inner.close();
    }

    @Override
    public String toString() {
        return "CountingDriver[" + inner + "]";
    }

    /**
     * The provider of backend {@value CountingDriver#BACKEND}, a service of this module
     * ({@code provides} in its descriptor and {@code META-INF/services} for the class path): it opens the backend named by option {@value CountingDriver#INNER}
     * and wraps its driver. Its priority is the lowest, and it is available only where another
     * backend is, so an automatic choice never lands on it.
     */
    public static final class Provider implements BackendProvider {

        /** Created by {@link ServiceLoader}. */
        public Provider() {
        }

        @Override
        public String name() {
            return BACKEND;
        }

        @Override
        public int priority() {
            return Integer.MIN_VALUE;
        }

        @Override
        public Availability availability() {
            for (BackendProvider p : others()) {
                if (p.availability().available()) {
                    return Availability.yes();
                }
            }
            return Availability.no("it wraps another backend, and none is available");
        }

        @Override
        public Driver open(DriverConfig config) {
            String name = config.get(INNER, null);
            if (name == null) {
                throw new IllegalArgumentException("backend " + BACKEND + " needs option " + INNER + " naming the backend it wraps");
            }
            for (BackendProvider p : others()) {
                if (p.name().equalsIgnoreCase(name)) {
                    return new CountingDriver(p.open(config));
                }
            }
            throw new IllegalArgumentException("option " + INNER + "=" + name + " names no backend on the class path");
        }

        private static List<BackendProvider> others() {
            List<BackendProvider> out = new ArrayList<>();
            for (BackendProvider p : ServiceLoader.load(BackendProvider.class, Provider.class.getClassLoader())) {
                if (!(p instanceof Provider)) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    // ---- the SPI's optional methods: counted and delegated, so the runtime sees the wrapped driver's answers

    /** A peer given as a decorator is the driver it wraps. */
    private static Driver unwrap(Driver d) {
        return d instanceof CountingDriver c ? c.inner : d;
    }

    @Override
    public boolean supportsMemPools() {
        count("supportsMemPools");
        return inner.supportsMemPools();
    }

    @Override
    public long memAllocAsync(long bytes, long stream) {
        count("memAllocAsync");
        return inner.memAllocAsync(bytes, stream);
    }

    @Override
    public void memFreeAsync(long ptr, long stream) {
        count("memFreeAsync");
        inner.memFreeAsync(ptr, stream);
    }

    @Override
    public void memPoolTrimTo(long minBytesToKeep) {
        count("memPoolTrimTo");
        inner.memPoolTrimTo(minBytesToKeep);
    }

    @Override
    public long memPoolGetAttribute(int attr) {
        count("memPoolGetAttribute");
        return inner.memPoolGetAttribute(attr);
    }

    @Override
    public void memPoolSetAttribute(int attr, long value) {
        count("memPoolSetAttribute");
        inner.memPoolSetAttribute(attr, value);
    }

    @Override
    public String streamOrderViolation(long ptr, long bytes, long stream) {
        count("streamOrderViolation");
        return inner.streamOrderViolation(ptr, bytes, stream);
    }

    @Override
    public boolean detectsStreamOrderViolations() {
        count("detectsStreamOrderViolations");
        return inner.detectsStreamOrderViolations();
    }

    @Override
    public void allocationExtents(Extents extents) {
        count("allocationExtents");
        inner.allocationExtents(extents);
    }

    @Override
    public long[] graphGetNodes(long graph) {
        count("graphGetNodes");
        return inner.graphGetNodes(graph);
    }

    @Override
    public long[][] graphGetEdges(long graph) {
        count("graphGetEdges");
        return inner.graphGetEdges(graph);
    }

    @Override
    public int graphNodeType(long node) {
        count("graphNodeType");
        return inner.graphNodeType(node);
    }

    @Override
    public void graphExecKernelNodeSetParams(long exec, long node, long func, LaunchConfig config, KernelArgs args) {
        count("graphExecKernelNodeSetParams");
        if (!dropped("graphExecKernelNodeSetParams")) {
            inner.graphExecKernelNodeSetParams(exec, node, func, config, args);
        }
    }

    @Override
    public void graphExecCopyNodeSetParams(long exec, long node, long src, long dst, long bytes) {
        count("graphExecCopyNodeSetParams");
        if (!dropped("graphExecCopyNodeSetParams")) {
            inner.graphExecCopyNodeSetParams(exec, node, src, dst, bytes);
        }
    }

    @Override
    public int graphExecUpdate(long exec, long graph) {
        count("graphExecUpdate");
        return inner.graphExecUpdate(exec, graph);
    }

    @Override
    public void graphExecMemsetNodeSetParams(long exec, long node, long ptr, int value, long bytes) {
        count("graphExecMemsetNodeSetParams");
        if (!dropped("graphExecMemsetNodeSetParams")) {
            inner.graphExecMemsetNodeSetParams(exec, node, ptr, value, bytes);
        }
    }

    @Override
    public int ordinal() {
        count("ordinal");
        return inner.ordinal();
    }

    @Override
    public boolean canAccessPeer(Driver peer) {
        count("canAccessPeer");
        return inner.canAccessPeer(unwrap(peer));
    }

    @Override
    public void enablePeerAccess(Driver peer) {
        count("enablePeerAccess");
        inner.enablePeerAccess(unwrap(peer));
    }

    @Override
    public void memcpyPeer(long dst, Driver dstDriver, long src, long bytes) {
        count("memcpyPeer");
        inner.memcpyPeer(dst, unwrap(dstDriver), src, bytes);
    }

    @Override
    public void memcpyPeerAsync(long dst, Driver dstDriver, long src, long bytes, long stream) {
        count("memcpyPeerAsync");
        inner.memcpyPeerAsync(dst, unwrap(dstDriver), src, bytes, stream);
    }

    @Override
    public void streamWaitPeerEvent(long stream, Driver eventDriver, long event) {
        count("streamWaitPeerEvent");
        inner.streamWaitPeerEvent(stream, unwrap(eventDriver), event);
    }
}
