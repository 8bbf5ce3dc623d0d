// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Sticky faults: a kernel storing to an illegal address latches ILLEGAL_ADDRESS; every later
 * device call fails fast with a {@link StickyFaultException} naming the original; {@link Gpu#close()}
 * still completes, and a fresh runtime works where the backend can recover in-process.
 *
 * <p>On CUDA a sticky error poisons the whole process (CUDA_SEMANTICS section 4: no in-process
 * recovery), so a CUDA runner of this class runs in a JVM fork of its own and answers
 * {@link #runtimesAreIsolated()} with {@code false}.
 */
public abstract class FaultContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected FaultContract() {
    }

    /**
     * {@return whether runtimes in one process are independent, so a sticky fault in one leaves
     * the others, and runtimes opened after it, usable} True for the simulator; false for CUDA,
     * whose driver refuses new work in the process after a sticky error.
     */
    protected boolean runtimesAreIsolated() {
        return true;
    }

    private void storeIllegal(Stream s) {
        gpu.launch(kernel("store_illegal"), LaunchConfig.of(1, 1), s, args.clear().ptr(DevicePtr.NULL));
    }

    /** Launches the faulting kernel and synchronizes; the sync reports ILLEGAL_ADDRESS and the fault is latched. */
    private GpuException fault(Stream s) {
        assertThat(gpu.fault()).isEmpty();
        storeIllegal(s);
        Throwable t = catchThrowable(() -> gpu.synchronize(s));
        assertThat(t).as("the sync after the faulting kernel").isInstanceOf(GpuException.class);
        GpuException e = (GpuException) t;
        assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        assertThat(e.getMessage()).contains("CUDA_ERROR_ILLEGAL_ADDRESS").contains("700");
        assertThat(gpu.fault()).as("the latched fault").isPresent();
        assertThat(gpu.fault().orElseThrow().error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        return e;
    }

    private static void assertSticky(String what, ThrowingCallable call) {
        Throwable t = catchThrowable(call);
        assertThat(t).as("%s after the fault", what).isInstanceOf(StickyFaultException.class);
        StickyFaultException s = (StickyFaultException) t;
        assertThat(s.error()).as(what).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        assertThat(s.original()).as(what).isNotNull();
        assertThat(s.original().error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        assertThat(s.faultCall()).as(what).isNotBlank();
        assertThat(s.getMessage()).as(what).contains("CUDA_ERROR_ILLEGAL_ADDRESS");
    }

    /** The faulting launch itself returns; the next sync reports the fault and latches it. */
    @Test
    public void illegalStoreLatchesAStickyFault() {
        Stream s = gpu.createStream();
        fault(s);
    }

    /**
     * After the fault every device call fails fast with StickyFaultException naming the original,
     * refused by the runtime before the driver: the driver sees no call at all.
     */
    @Test
    public void everyLaterCallFailsFastNamingTheFault() {
        CountingDriver driver = counted();
        DevicePtr p = gpu.alloc(256);
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        Event e2 = gpu.createEvent();
        var noop = kernel("noop");
        DevicePtr chunk = gpu.allocArena(4096);
        MemorySegment pinned = gpu.allocHostPinned(4096);
        Stream cs = gpu.createStream();
        gpu.beginCapture(cs);
        noop(cs);
        GraphHandle g = gpu.endCapture(cs);
        fault(Stream.DEFAULT);
        Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
        calls.put("backendName", () -> gpu.backendName());
        calls.put("device", () -> gpu.device());
        calls.put("unwrap", () -> gpu.unwrap(Object.class));
        calls.put("allocArena", () -> gpu.allocArena(4096));
        calls.put("freeArena", () -> gpu.freeArena(chunk));
        calls.put("noteArenaUse", () -> gpu.noteArenaUse(chunk, 16));
        calls.put("chunkSlackBytes", () -> gpu.chunkSlackBytes());
        calls.put("liveBytes", () -> gpu.liveBytes());
        calls.put("liveAllocCount", () -> gpu.liveAllocCount());
        calls.put("liveAllocations", () -> gpu.liveAllocations());
        calls.put("allocReport", () -> gpu.allocReport(5, 0));
        calls.put("sweepUnreleased", () -> gpu.sweepUnreleased());
        calls.put("poisonRedzones", () -> gpu.poisonRedzones(0, Long.MAX_VALUE));
        calls.put("scanRedzones", () -> gpu.scanRedzones());
        calls.put("findRedzoneViolations", () -> gpu.findRedzoneViolations());
        calls.put("copyD2HOnStream", () -> gpu.copyD2HOnStream(p, pinned.asSlice(0, 64), s));
        calls.put("copyD2HAsync", () -> gpu.copyD2HAsync(p, pinned.asSlice(0, 64), s));
        calls.put("copyH2DAsync", () -> gpu.copyH2DAsync(pinned.asSlice(0, 64), p, s));
        calls.put("copyH2DAsyncRetained", () -> gpu.copyH2DAsyncRetained(pinned.asSlice(0, 64), p, s));
        calls.put("copyD2DAsync", () -> gpu.copyD2DAsync(p, p.plus(128), 64, s));
        calls.put("copyD2D2DAsync", () -> gpu.copyD2D2DAsync(p, 64, p.plus(128), 64, 32, 2, s));
        calls.put("hasModule", () -> gpu.hasModule(MODULE));
        calls.put("kernelRegistry", () -> gpu.kernelRegistry());
        calls.put("opCache", () -> gpu.opCache());
        calls.put("compileCuda", () -> gpu.compileCuda("k", "extern \"C\" __global__ void k() {}"));
        calls.put("setMaxDynamicSharedMemory", () -> gpu.setMaxDynamicSharedMemory(noop, 1024));
        calls.put("defaultStream", () -> gpu.defaultStream());
        calls.put("destroyStream", () -> gpu.destroyStream(s));
        calls.put("eventQuery", () -> gpu.eventQuery(e));
        calls.put("streamWaitEvent", () -> gpu.streamWaitEvent(s, e));
        calls.put("elapsedMillis", () -> gpu.elapsedMillis(e, e2));
        calls.put("destroyEvent", () -> gpu.destroyEvent(e2));
        calls.put("abortCaptureIfActive", () -> gpu.abortCaptureIfActive(cs));
        calls.put("endCapture", () -> gpu.endCapture(cs));
        calls.put("streamIsCapturing", () -> gpu.streamIsCapturing(cs));
        calls.put("captureStatus", () -> gpu.captureStatus(cs));
        calls.put("launchGraph", () -> gpu.launchGraph(g, s));
        calls.put("destroyGraph", () -> gpu.destroyGraph(g));
        calls.put("totalMemory", () -> gpu.totalMemory());
        calls.put("freeMemory", () -> gpu.freeMemory());
        calls.put("deviceFreeMemory", () -> gpu.deviceFreeMemory());
        calls.put("smCount", () -> gpu.smCount());
        calls.put("bindToThread", () -> gpu.bindToThread());
        calls.put("debugSyncKernels", () -> gpu.debugSyncKernels());
        calls.put("freeHostPinned", () -> gpu.freeHostPinned(pinned));
        calls.put("hostPtrToDevice", () -> gpu.hostPtrToDevice(pinned));
        calls.put("isPinned", () -> gpu.isPinned(pinned));
        calls.put("alloc", () -> gpu.alloc(64));
        calls.put("allocManaged", () -> gpu.allocManaged(64));
        calls.put("free", () -> gpu.free(p));
        calls.put("copyH2D", () -> gpu.copyH2D(new int[4], p));
        calls.put("copyD2H", () -> gpu.copyD2H(p, new int[4]));
        calls.put("copyD2D", () -> gpu.copyD2D(p, p.plus(128), 64));
        calls.put("memset", () -> gpu.memset(p, 0, 64));
        calls.put("memsetAsync", () -> gpu.memsetAsync(p, 0, 64, s));
        calls.put("launch", () -> gpu.launch(noop, LaunchConfig.of(1, 1), s, args.clear()));
        calls.put("synchronize()", () -> gpu.synchronize());
        calls.put("synchronize(s)", () -> gpu.synchronize(s));
        calls.put("streamQuery", () -> gpu.streamQuery(s));
        calls.put("createStream", () -> gpu.createStream());
        calls.put("createEvent", () -> gpu.createEvent());
        calls.put("recordEvent", () -> gpu.recordEvent(e, s));
        calls.put("eventSynchronize", () -> gpu.eventSynchronize(e));
        calls.put("loadModule", () -> loadContractModule(gpu));
        calls.put("kernel", () -> gpu.kernel(MODULE, "fill_f32"));
        calls.put("beginCapture", () -> gpu.beginCapture(s));
        calls.put("allocHostPinned", () -> gpu.allocHostPinned(64));
        Map<String, Long> before = driver.callsByMethod();
        for (var c : calls.entrySet()) {
            assertSticky(c.getKey(), c.getValue());
            assertThat(driver.callsByMethod()).as("driver calls made by the refused %s", c.getKey()).isEqualTo(before);
        }
        assertSticky("synchronize() again", () -> gpu.synchronize());
        assertThat(driver.callsByMethod()).as("driver calls made by the refused synchronize()").isEqualTo(before);
    }

    /**
     * The fault is latched for every thread, not only the one that saw it.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void otherThreadsSeeTheFaultToo() throws Exception {
        fault(Stream.DEFAULT);
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> seen.set(catchThrowable(() -> gpu.alloc(64))));
        t.join();
        assertThat(seen.get()).isInstanceOf(StickyFaultException.class);
    }

    /** close() completes after a fault, freeing what it can; a fresh runtime then works. */
    @Test
    public void closeCompletesAndAFreshRuntimeWorks() {
        gpu.alloc(1024);
        gpu.createStream();
        gpu.allocHostPinned(128);
        fault(Stream.DEFAULT);
        gpu.close();
        assertThat(gpu.isClosed()).isTrue();
        gpu.close();
        if (!runtimesAreIsolated()) {
            return;
        }
        try (Gpu fresh = open(b -> b)) {
            assertThat(fresh.fault()).isEmpty();
            DevicePtr p = fresh.alloc(256);
            try (var a = new metrale.gpu.KernelArgs()) {
                fresh.launch(fresh.kernel(MODULE, "fill_f32"), LaunchConfig.of(1, 64), Stream.DEFAULT, a.ptr(p).f32(7f).i32(64));
            }
            float[] out = new float[64];
            fresh.copyD2H(p, out);
            assertThat(out).containsOnly(7f);
            fresh.free(p);
            assertThat(fresh.liveAllocCount()).isZero();
        }
    }

    /** A fault in one runtime leaves another runtime open at the same time alone. */
    @Test
    public void aFaultStaysInItsRuntime() {
        org.junit.jupiter.api.Assumptions.assumeTrue(runtimesAreIsolated(), "runtimes of this backend share the process's fault state");
        try (Gpu other = open(b -> b)) {
            DevicePtr q = other.alloc(64);
            fault(Stream.DEFAULT);
            assertThat(other.fault()).isEmpty();
            other.copyH2D(new int[] {1, 2, 3, 4}, q);
            int[] out = new int[4];
            other.copyD2H(q, out);
            assertThat(out).containsExactly(1, 2, 3, 4);
            other.free(q);
        }
    }

    /** With debug sync on, the faulting launch itself reports the fault and names its kernel. */
    @Test
    public void debugSyncNamesTheFaultingKernel() {
        reopen(b -> b.debugSync(true));
        Throwable t = catchThrowable(() -> storeIllegal(Stream.DEFAULT));
        assertThat(t).isInstanceOf(GpuException.class);
        GpuException e = (GpuException) t;
        assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        assertThat(e.getMessage()).contains("contract::store_illegal");
        assertThat(gpu.fault()).isPresent();
        assertSticky("alloc", () -> gpu.alloc(16));
    }

    /** A fault on a non-blocking stream surfaces at that stream's sync and latches all the same. */
    @Test
    public void faultOnAnotherStreamLatchesTheRuntime() {
        Stream nb = gpu.createStream(true);
        Event e = gpu.createEvent();
        fault(nb);
        assertSticky("synchronize(DEFAULT)", () -> gpu.synchronize(Stream.DEFAULT));
        assertSticky("eventQuery", () -> gpu.eventQuery(e));
    }

    /** Argument errors are not sticky: after INVALID_VALUE and NOT_FOUND the runtime works and no fault is latched. */
    @Test
    public void argumentErrorsAreNotSticky() {
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.alloc(0));
        assertCuda(CudaError.NOT_FOUND, () -> gpu.kernel(MODULE, "nope"));
        assertCuda(CudaError.OUT_OF_MEMORY, () -> gpu.alloc(1L << 50));
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }
}
