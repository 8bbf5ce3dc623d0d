// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.Event;
import metrale.gpu.GpuException;
import metrale.gpu.GpuOptions;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.OpCache;
import metrale.gpu.Stream;
import metrale.gpu.spi.Driver;
import metrale.telemetry.Counters;
import metrale.telemetry.KernelTiming;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.Telemetry;

/**
 * What the parts of one runtime share ({@link MemoryPart}, {@link CopyPart}, {@link KernelPart},
 * {@link StreamPart}, {@link GraphPart}, {@link StepPart}, {@link PeerPart}, {@link Teardown}):
 * the driver, the gate, the bookkeeping tables, the pool and telemetry, and the checks every part
 * makes before the driver sees a call (live handles, live ranges) and after it fails (the fault
 * latch). A part holds this and nothing of another part. Every method here runs inside the
 * caller's gate frame.
 *
 * @param reportedLeaks indices of the ledger entries a caller has reported as leaks itself
 *                      ({@code markLeaksReported})
 * @param functions     the kernel handles {@code kernel(module, func)} returned, to the driver's functions
 * @param graphs        the executable graphs {@code endCapture} made; each slot's extra is the
 *                      captured {@code CUgraph} it was instantiated from
 * @param sites         the call site of the current allocation or free
 * @param pooled        whether {@code alloc(bytes)} allocates from the pool
 * @param timingOn      whether each launch is a timing span
 * @param debugSync     whether each launch is followed by a sync of its stream
 * @param checkPointers whether kernel pointer arguments are checked against live memory
 * @param staging       the page-locked buffers the blocking copies to the host stage Java heap memory through
 * @param uploads       the pageable native buffers the blocking copies to the device stage Java heap memory through
 */
record Core(Driver driver, DeviceInfo info, Telemetry telemetry, LaunchTrace trace, Counters counters,
            KernelTiming timing, Tracing tracing, Gate gate, Failures failures, Ledger ledger, Set<Long> reportedLeaks,
            RedZones redZones, Quarantine quarantine, ArenaTable arenas, Adoptions adoptions, PinnedRegistry pinned,
            HandleTable streams, HandleTable events, HandleTable functions, HandleTable graphs, Modules modules,
            OpCache opCache, PoolFront pool, AllocSites sites, Resources resources,
            boolean pooled, boolean timingOn, boolean debugSync, boolean checkPointers, StagingBuffers staging,
            StagingBuffers uploads) {

    /** {@return the shared state of a runtime over {@code driver}, configured by {@code options}} */
    static Core of(GpuOptions options, Driver driver) {
        DeviceInfo info = driver.deviceInfo();
        Telemetry telemetry = options.telemetry();
        Gate gate = new Gate();
        Ledger ledger = new Ledger();
        Failures failures = new Failures(driver, gate, ledger);
        HandleTable streams = new HandleTable();
        AllocSites sites = new AllocSites(options.leakDetection(), options.leakDetectionSample());
        RedZones redZones = new RedZones(options.redZoneBytes(), options.redZoneMinIndex());
        Quarantine quarantine = new Quarantine(driver, redZones, options.quarantineBytes());
        PoolFront pool = new PoolFront(options.allocator(), driver, ledger, redZones, quarantine, gate, sites,
                (s, op) -> liveStream(streams, s, op), failures::fail);
        if (options.d2hTrace()) {
            telemetry.counters().setD2hSiteTrace(true);
        }
        if (options.timing()) {
            telemetry.timing().setEnabled(true);
        }
        // Its own policy, so the allocations' walk count is the allocations' alone.
        Resources resources = new Resources(new AllocSites(options.leakDetection(), options.leakDetectionSample()));
        return new Core(driver, info, telemetry, telemetry.trace(), telemetry.counters(),
                telemetry.timing(), new Tracing(telemetry.trace()), gate, failures, ledger, ConcurrentHashMap.newKeySet(),
                redZones, quarantine, new ArenaTable(), new Adoptions(), new PinnedRegistry(),
                streams, new HandleTable(), new HandleTable(), new HandleTable(), new Modules(),
                new OpCache(), pool, sites, resources,
                !"driver".equals(options.allocator()), options.timing(), options.debugSync(), options.checkPointers(),
                new StagingBuffers(driver, pool::capturing, true), new StagingBuffers(driver, pool::capturing, false));
    }

    // ---- driver calls --------------------------------------------------------------------------

    /** {@return what a failed driver call during runtime call {@code call} throws} See {@link Failures#fail}. */
    RuntimeException fail(GpuException e, String call) {
        return failures.fail(e, call);
    }

    /**
     * Makes a driver call; a failure goes through the fault latch as the runtime call
     * {@code what} names, which is built only then.
     */
    void run(Runnable driverCall, Supplier<String> what) {
        try {
            driverCall.run();
        } catch (GpuException e) {
            throw fail(e, what.get());
        }
    }

    /** {@return the result of a driver call} A failure goes through the fault latch, as in {@link #run}. */
    <T> T get(Supplier<T> driverCall, Supplier<String> what) {
        try {
            return driverCall.get();
        } catch (GpuException e) {
            throw fail(e, what.get());
        }
    }

    /** Makes a driver call that destroys or frees something: a teardown status (4, 201, 709) is no error. */
    void release(Runnable driverCall, Supplier<String> what) {
        try {
            driverCall.run();
        } catch (GpuException e) {
            if (!e.error().isTeardown()) {
                throw fail(e, what.get());
            }
        }
    }

    /** The capture query for the runtime's own waits: throws nothing, and a failed query counts as capturing. */
    boolean capturingRaw(long s) {
        if (!driver.supportsCaptureQuery()) {
            return false;
        }
        try {
            return driver.streamIsCapturing(s) != 0;
        } catch (GpuException e) {
            return true;
        }
    }

    /**
     * Ends the capture on {@code s}. {@return the captured graph}
     *
     * @throws RuntimeException the failure, through the fault latch as {@code endCapture stream}
     */
    long endCapture(long s, Stream stream) {
        long graph;
        try {
            graph = driver.streamEndCapture(s);
        } catch (GpuException e) {
            // A failed end may still end the capture (901, 904, or 908 from another thread).
            if (e.error() == CudaError.STREAM_CAPTURE_INVALIDATED || e.error() == CudaError.STREAM_CAPTURE_UNJOINED
                    || !capturingRaw(s)) {
                pool.captureEnded(s);
            }
            throw fail(e, "endCapture " + stream);
        }
        pool.captureEnded(s);
        return graph;
    }

    /** {@return the executable graph of a captured one, listed} A failed instantiation destroys the graph. */
    GraphHandle instantiate(long graph, Stream stream) {
        long exec;
        try {
            exec = driver.graphInstantiate(graph);
        } catch (GpuException e) {
            RuntimeException r = fail(e, "endCapture " + stream + " (instantiate)");
            destroyGraphQuietly(graph, r);
            throw r;
        }
        return resources.graph(new GraphHandle(graphs.add(exec, graph)));
    }

    /** Destroys a captured graph; a failure is added to {@code into} as suppressed, or dropped if it is null. */
    void destroyGraphQuietly(long graph, RuntimeException into) {
        try {
            driver.graphDestroy(graph);
        } catch (RuntimeException suppressed) {
            if (into != null) {
                into.addSuppressed(suppressed);
            }
        }
    }

    /** Traces and counts a device-to-device copy the driver accepted; a peer copy is one too. */
    void d2dDone(long s, long d, long bytes) {
        if (tracing.on()) {
            tracing.d2d(s, d, bytes);
        }
        counters.d2dCopy(bytes);
    }

    /** Scans the pads freed during a capture and evicts down to the limit, once no capture is in flight. */
    void settleQuarantine(String call) {
        run(() -> quarantine.settle(pool.quarantineWaits()), () -> call + " (quarantine)");
    }

    // ---- range checks ----------------------------------------------------------------------------

    /**
     * Refuses a device range that is not inside live memory of this runtime before the driver sees
     * it: the driver does not check every case (an async copy from a freed pointer is accepted
     * silently on the H200), and the simulator's memory of another runtime must not be touched.
     */
    void checkRange(long p, long bytes, String call, String param) {
        if (bytes != 0 && !inLiveMemory(p, bytes)) {
            throw new GpuException(CudaError.INVALID_VALUE, call, param + ": " + explainRange(p, bytes)
                    + "; nothing was copied or set");
        }
    }

    /** The {@code checkPointers} mode: every pointer argument must lie in live memory of this runtime (null passes). */
    void checkPointerArgs(long func, KernelArgs args) {
        for (int i = 0, n = args.count(); i < n; i++) {
            if (args.kind(i) != KernelArgs.Kind.PTR) {
                continue;
            }
            long p = args.getLong(i);
            if (p != 0 && !inLiveMemory(p, 1)) {
                throw new GpuException(CudaError.INVALID_VALUE, "launch", trace.nameOf(func) + ": argument " + i
                        + " (pointer 0x" + Long.toHexString(p) + ") is not in live memory: " + explainRange(p, 1)
                        + "; nothing was launched (checkPointers is on)");
            }
        }
    }

    /** {@return whether {@code [p, p + bytes)} lies in one ledger allocation, arena chunk, mapped pinned range or adopted range} */
    private boolean inLiveMemory(long p, long bytes) {
        return ledger.covers(p, bytes) || arenas.covers(p, bytes) || pinned.coversAddress(p, bytes)
                || adoptions.covers(p, bytes);
    }

    private String explainRange(long p, long bytes) {
        if (arenas.covers(p, 1)) {
            return "[0x" + Long.toHexString(p) + ", +" + bytes + ") runs past the end of its arena chunk";
        }
        if (pinned.coversAddress(p, 1)) {
            return "[0x" + Long.toHexString(p) + ", +" + bytes + ") runs past the end of its page-locked range";
        }
        String held = quarantine.explain(p, bytes);
        if (held != null) {
            return held;
        }
        String adopted = adoptions.explainPast(p, bytes);
        return adopted != null ? adopted : ledger.explainRange(p, bytes);
    }

    // ---- handle checks -----------------------------------------------------------------------------

    /**
     * {@return the driver's handle of the stream} A destroyed stream, or one of another runtime,
     * is refused before the driver, which could crash on it. O(1) and allocation-free.
     */
    long liveStream(Stream stream, String op) {
        return liveStream(streams, stream, op);
    }

    private static long liveStream(HandleTable streams, Stream stream, String op) {
        long s = Objects.requireNonNull(stream, "stream").handle();
        if (s >= 0 && s <= 2) {
            return s;
        }
        HandleTable.Slot slot = streams.get(s);
        if (slot == null) {
            throw deadHandle(op, stream + " is not a default stream nor one this runtime created and has not destroyed");
        }
        return slot.raw();
    }

    /** {@return the driver's handle of the event} A destroyed or foreign event is refused before the driver. */
    long liveEvent(Event event, String name, String op) {
        HandleTable.Slot slot = events.get(Objects.requireNonNull(event, name).handle());
        if (slot == null) {
            throw deadHandle(op, name + " " + event + " was not created by this runtime or is already destroyed");
        }
        return slot.raw();
    }

    /** {@return the driver's function handle} A handle no lookup returned, or of a replaced module, is refused. */
    long liveFunction(KernelHandle kernel, String op) {
        HandleTable.Slot slot = functions.get(Objects.requireNonNull(kernel, "kernel").value());
        if (slot == null) {
            throw deadHandle(op, kernel + " was not returned by kernel(module, func) on this runtime, "
                    + "or its module was replaced or unloaded since");
        }
        return slot.raw();
    }

    /** {@return the graph's slot: its exec, and its captured graph as the extra} */
    HandleTable.Slot liveGraph(GraphHandle graph, String op) {
        HandleTable.Slot g = graphs.get(Objects.requireNonNull(graph, "graph").handle());
        if (g == null) {
            throw deadHandle(op, graph + " was not made by this runtime's endCapture or is already destroyed");
        }
        return g;
    }

    private static GpuException deadHandle(String op, String why) {
        return new GpuException(CudaError.INVALID_HANDLE, op, why);
    }
}
