// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lifetimes across threads and runtimes: {@code close()}, frees, module replacement and destroys
 * racing other calls, pinned segments after their free, handles and pointers of another runtime,
 * and freed or overlong ranges. Whatever the interleaving, a call either works, or throws
 * {@link IllegalStateException} because the runtime was closed first, or throws the CUDA error its
 * own arguments deserve ({@code INVALID_HANDLE}, {@code INVALID_VALUE}); it never crashes the JVM,
 * never reports an error the caller did not make, and never acts on another object.
 *
 * <p>Loops are bounded by operation counts; nothing asserts a timing. Tagged {@code lifetime} so the
 * GPU bundle runs each method in a JVM of its own: a failure here on CUDA is a crash.
 */
@Tag("lifetime")
public abstract class LifetimeContract extends GpuContract {

    /** Operations each worker makes at most, so a test ends even if close never comes. */
    private static final int MAX_OPS = 4_000;

    /** Creates the contract; subclasses are instantiated by JUnit. */
    protected LifetimeContract() {
    }

    // ---- close racing calls ---------------------------------------------------------------------

    @Test
    void closeWhileOtherThreadsLaunchCopyAllocateAndFree() throws Exception {
        closeAgainst(4, (id, started, ops) -> {
            try (KernelArgs a = new KernelArgs(); Arena arena = Arena.ofConfined()) {
                MemorySegment host = arena.allocate(256);
                KernelHandle add = gpu.kernel(MODULE, "add_i32");
                started.countDown();
                for (int i = 0; i < MAX_OPS; i++) {
                    DevicePtr p = gpu.alloc(256);
                    gpu.memsetAsync(p, 0, 256, Stream.DEFAULT);
                    gpu.launch(add, LaunchConfig.forElements(64, 64), Stream.DEFAULT, a.clear().ptr(p).i32(1).i32(64));
                    gpu.copyD2H(p, host);
                    gpu.free(p);
                    ops.incrementAndGet();
                }
            }
        });
        assertThat(gpu.isClosed()).isTrue();
    }

    /**
     * Eight threads, platform and virtual, copy Java arrays to and from the device, staged through
     * the runtime's staging buffers and (past 256 KiB) not, while close comes: every copy either
     * completes with the right bytes or is refused as closed, and close frees every staging buffer
     * (the backend holds nothing once it returns).
     */
    @Test
    void closeWhileOtherThreadsCopyHeapArrays() throws Exception {
        int threads = 8;
        int span = 300 << 10;
        DevicePtr p = gpu.alloc((long) threads * span);
        closeAgainst(threads, (id, started, ops) -> {
            DevicePtr mine = p.plus((long) id * span);
            int[] sizes = {4 << 10, 64 << 10, 100 << 10, span};
            started.countDown();
            for (int i = 0; i < MAX_OPS; i++) {
                int n = sizes[(i + id) % sizes.length];
                byte[] src = new byte[n];
                Arrays.fill(src, (byte) (id * 31 + i));
                int[] back = new int[n / 4];
                gpu.copyH2D(src, mine);
                gpu.copyD2H(mine, back);
                byte[] got = MemorySegment.ofArray(back).toArray(ValueLayout.JAVA_BYTE);
                if (!Arrays.equals(got, src)) {
                    throw new AssertionError("worker " + id + " op " + i + " (" + n + " B) read back other bytes");
                }
                ops.incrementAndGet();
            }
        });
    }

    /** One worker of {@link #closeAgainst}: counts {@code started} down once ready, {@code ops} up per round. */
    @FunctionalInterface
    private interface Worker {
        void run(int id, CountDownLatch started, AtomicInteger ops) throws Exception;
    }

    /**
     * Runs {@code threads} workers, platform and virtual in turn, closes the runtime once they have
     * made 40 rounds between them (or all ended), and asserts that close released the backend before
     * it returned and that no worker ended with anything but "Gpu is closed".
     */
    private void closeAgainst(int threads, Worker worker) throws Exception {
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger ops = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(threads);
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            int id = w;
            Runnable body = () -> {
                try {
                    worker.run(id, started, ops);
                } catch (IllegalStateException e) {
                    if (!e.getMessage().startsWith("Gpu is closed")) {
                        wrong.add(e);
                    }
                } catch (Throwable t) {
                    wrong.add(t);
                }
            };
            workers.add(w % 2 == 0 ? Thread.ofPlatform().start(body) : Thread.ofVirtual().start(body));
        }
        assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
        while (ops.get() < 40 && workers.stream().anyMatch(Thread::isAlive)) {
            Thread.onSpinWait();
        }
        gpu.close();
        // close() waited for the calls in flight and released before returning, workers or not.
        assertBackendReleased(gpu);
        for (Thread t : workers) {
            t.join();
        }
        assertThat(wrong).as("errors no caller made: only 'Gpu is closed' may end a worker").isEmpty();
    }

    @Test
    void closeWhileAnotherThreadCapturesAndReplays() throws Exception {
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger rounds = new AtomicInteger();
        DevicePtr p = gpu.alloc(256);
        Thread worker = Thread.ofPlatform().start(() -> {
            try (KernelArgs a = new KernelArgs()) {
                Stream s = gpu.createStream(true);
                KernelHandle add = gpu.kernel(MODULE, "add_i32");
                for (int i = 0; i < MAX_OPS / 10; i++) {
                    gpu.beginCapture(s);
                    gpu.launch(add, LaunchConfig.forElements(64, 64), s, a.clear().ptr(p).i32(1).i32(64));
                    GraphHandle g = gpu.endCapture(s);
                    gpu.launchGraph(g, s);
                    gpu.synchronize(s);
                    gpu.destroyGraph(g);
                    rounds.incrementAndGet();
                }
            } catch (IllegalStateException e) {
                if (!e.getMessage().startsWith("Gpu is closed")) {
                    wrong.add(e);
                }
            } catch (Throwable t) {
                wrong.add(t);
            }
        });
        while (rounds.get() < 5 && worker.isAlive()) {
            Thread.onSpinWait();
        }
        gpu.close();
        assertBackendReleased(gpu);
        worker.join();
        assertThat(wrong).as("errors no caller made").isEmpty();
    }

    /**
     * {@code close()} waits for a call in flight inside the driver, and the backend is released by
     * the time it returns: the call is held in the {@link CountingDriver} until the closing thread
     * is seen waiting, then let go. The driver sees no call while the held one is in flight (a close
     * that released under it would show here), the held call completes normally, and when
     * {@code close()} returns the driver is closed with nothing left (a close that returned at once,
     * leaving the release to the last call out, would show here).
     */
    @Test
    void closeWaitsForACallInFlightAndHasReleasedTheBackendWhenItReturns() throws Exception {
        CountingDriver driver = counted();
        DevicePtr p = gpu.alloc(256);
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        HeldCall held = driver.holdNext("memsetD8");
        Queue<Throwable> callerErrors = new ConcurrentLinkedQueue<>();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                gpu.memset(p, 7, 256);
            } catch (Throwable t) {
                callerErrors.add(t);
            }
        });
        assertThat(held.awaitEntered(60)).as("the memset reached the driver").isTrue();
        AtomicBoolean closedAtReturn = new AtomicBoolean();
        List<String> leftAtReturn = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread closer = Thread.ofPlatform().start(() -> {
            gpu.close();
            closedAtReturn.set(driver.closed());
            leftAtReturn.addAll(driver.leftAtClose());
        });
        // A close that waits parks in its back-off; one that does not is done.
        assertThat(pollUntil(() -> gpu.isClosed() && (closer.getState() == Thread.State.TIMED_WAITING
                || closer.getState() == Thread.State.WAITING || closer.getState() == Thread.State.TERMINATED)))
                .as("close began").isTrue();
        held.proceed();
        caller.join();
        closer.join();
        assertThat(held.callsWhileHeld()).as("driver calls made while a call was in flight inside the driver").isZero();
        assertThat(callerErrors).as("the call in flight when close came completes").isEmpty();
        assertThat(closedAtReturn.get()).as("the driver was closed when close() returned").isTrue();
        assertThat(leftAtReturn).as("handles still held when close() returned").isEmpty();
        assertThat(driver.calls("streamDestroy")).as("the stream released").isEqualTo(1);
        assertThat(driver.calls("eventDestroy")).as("the event released").isEqualTo(1);
        assertThatThrownBy(() -> gpu.eventQuery(e)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> gpu.synchronize(s)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCallAfterCloseNamesTheClose() {
        gpu.close();
        assertThatThrownBy(() -> gpu.alloc(16)).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("Gpu is closed: alloc refused")
                .hasMessageContaining("close() was called at LifetimeContract.java:");
        assertThatThrownBy(() -> gpu.createStream()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("createStream refused");
    }

    // ---- handles destroyed or replaced while in use ---------------------------------------------

    @Test
    void moduleReplacementUnderConcurrentLookupsAndLaunches() throws Exception {
        int n = 64;
        DevicePtr p = gpu.alloc(4L * n);
        gpu.memset(p, 0, 4L * n);
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger launched = new AtomicInteger();
        AtomicInteger stale = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            Runnable body = () -> {
                try (KernelArgs a = new KernelArgs()) {
                    for (int i = 0; i < MAX_OPS && !stop.get(); i++) {
                        try {
                            KernelHandle add = gpu.kernel(MODULE, "add_i32");
                            gpu.launch(add, LaunchConfig.forElements(n, 64), Stream.DEFAULT, a.clear().ptr(p).i32(1).i32(n));
                            launched.incrementAndGet();
                        } catch (GpuException e) {
                            if (e.error() != CudaError.INVALID_HANDLE) {
                                throw e;
                            }
                            // The handle's module was replaced between lookup and launch.
                            stale.incrementAndGet();
                        }
                    }
                } catch (Throwable t) {
                    wrong.add(t);
                }
            };
            workers.add(w % 2 == 0 ? Thread.ofPlatform().start(body) : Thread.ofVirtual().start(body));
        }
        byte[] image = contractPtx();
        for (int r = 0; r < 20; r++) {
            gpu.loadModule(MODULE, image);
        }
        stop.set(true);
        for (Thread t : workers) {
            t.join();
        }
        gpu.synchronize();
        assertThat(wrong).as("errors other than a stale handle").isEmpty();
        // Every launch that was accepted ran, once, on a live module.
        assertThat(readInts(p, n)).containsOnly(launched.get());
        gpu.free(p);
    }

    @Test
    void aKernelHandleOfAReplacedModuleIsInvalidHandle() {
        KernelHandle old = kernel("add_i32");
        gpu.loadModule(MODULE, contractPtx());
        DevicePtr p = gpu.alloc(256);
        GpuException e = assertCuda(CudaError.INVALID_HANDLE,
                () -> gpu.launch(old, LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().ptr(p).i32(1).i32(1)));
        assertThat(e.getMessage()).contains("replaced or unloaded");
        KernelHandle fresh = gpu.kernel(MODULE, "add_i32");
        assertThat(fresh).isNotEqualTo(old);
        gpu.launch(fresh, LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear().ptr(p).i32(1).i32(1));
        gpu.synchronize();
        gpu.free(p);
    }

    @Test
    void destroyingAStreamAnotherThreadLaunchesOn() throws Exception {
        int n = 64;
        DevicePtr p = gpu.alloc(4L * n);
        gpu.memset(p, 0, 4L * n);
        Stream s = gpu.createStream();
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger launched = new AtomicInteger();
        Thread worker = Thread.ofPlatform().start(() -> {
            try (KernelArgs a = new KernelArgs()) {
                KernelHandle add = gpu.kernel(MODULE, "add_i32");
                for (int i = 0; i < MAX_OPS; i++) {
                    gpu.launch(add, LaunchConfig.forElements(n, 64), s, a.clear().ptr(p).i32(1).i32(n));
                    launched.incrementAndGet();
                }
            } catch (GpuException e) {
                if (e.error() != CudaError.INVALID_HANDLE) {
                    wrong.add(e);
                }
            } catch (Throwable t) {
                wrong.add(t);
            }
        });
        while (launched.get() < 20 && worker.isAlive()) {
            Thread.onSpinWait();
        }
        gpu.destroyStream(s);
        worker.join();
        gpu.synchronize();
        assertThat(wrong).as("errors other than the destroyed stream's INVALID_HANDLE").isEmpty();
        assertThat(readInts(p, n)).containsOnly(launched.get());
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.synchronize(s));
        gpu.free(p);
    }

    @Test
    void destroyingAnEventAnotherThreadRecordsAndQueries() throws Exception {
        Event e = gpu.createEvent();
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger done = new AtomicInteger();
        Thread worker = Thread.ofVirtual().start(() -> {
            try {
                for (int i = 0; i < MAX_OPS; i++) {
                    gpu.recordEvent(e, Stream.DEFAULT);
                    gpu.eventQuery(e);
                    done.incrementAndGet();
                }
            } catch (GpuException x) {
                if (x.error() != CudaError.INVALID_HANDLE) {
                    wrong.add(x);
                }
            } catch (Throwable t) {
                wrong.add(t);
            }
        });
        while (done.get() < 20 && worker.isAlive()) {
            Thread.onSpinWait();
        }
        gpu.destroyEvent(e);
        worker.join();
        assertThat(wrong).isEmpty();
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.eventQuery(e));
    }

    // ---- pinned host segments --------------------------------------------------------------------

    @Test
    void aPinnedSegmentAfterItsFreeThrowsInsteadOfTouchingFreedMemory() {
        MemorySegment seg = gpu.allocHostPinned(4096);
        seg.set(ValueLayout.JAVA_INT, 0, 7);
        gpu.freeHostPinned(seg);
        assertThatThrownBy(() -> seg.set(ValueLayout.JAVA_INT, 0, 8)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> seg.get(ValueLayout.JAVA_INT, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> seg.fill((byte) 1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aPinnedSegmentAfterCloseThrows() {
        Gpu other = open(b -> b);
        MemorySegment seg = other.allocHostPinned(4096);
        seg.set(ValueLayout.JAVA_INT, 0, 7);
        other.close();
        assertThatThrownBy(() -> seg.get(ValueLayout.JAVA_INT, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void freeingAPinnedSegmentAnotherThreadWrites() throws Exception {
        MemorySegment seg = gpu.allocHostPinned(1 << 16);
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger writes = new AtomicInteger();
        Thread writer = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; i < MAX_OPS * 10; i++) {
                    seg.fill((byte) i);
                    writes.incrementAndGet();
                }
            } catch (IllegalStateException e) {
                // The scope ended under the writer: what must happen instead of a crash.
            } catch (Throwable t) {
                wrong.add(t);
            }
        });
        while (writes.get() < 10 && writer.isAlive()) {
            Thread.onSpinWait();
        }
        gpu.freeHostPinned(seg);
        writer.join();
        assertThat(wrong).isEmpty();
        assertThatThrownBy(() -> seg.get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aPinnedCopyDuringCaptureIsCapturedAndReadsTheSourceAtEachReplay() {
        Stream s = gpu.createStream();
        MemorySegment src = gpu.allocHostPinned(64);
        DevicePtr p = gpu.alloc(64);
        src.fill((byte) 1);
        gpu.beginCapture(s);
        gpu.copyH2DAsync(src, p, s);
        GraphHandle g = gpu.endCapture(s);
        src.fill((byte) 5);
        gpu.launchGraph(g, s);
        gpu.synchronize(s);
        assertThat(readBytes(p, 64)).containsOnly((byte) 5);
        gpu.destroyGraph(g);
        gpu.freeHostPinned(src);
        gpu.free(p);
    }

    // ---- handles and pointers of another runtime ------------------------------------------------

    @Test
    void handlesOfASecondRuntimeAreRefusedAndTouchNothingHere() {
        CountingDriver driver = counted();
        // This runtime's own objects first, so per-runtime numbering would make the other's alias them.
        DevicePtr mine = gpu.alloc(256);
        gpu.memset(mine, 3, 256);
        Stream myStream = gpu.createStream();
        Event myEvent = gpu.createEvent();
        gpu.beginCapture(myStream);
        gpu.memsetAsync(mine, 9, 256, myStream);
        GraphHandle myGraph = gpu.endCapture(myStream);
        try (Gpu other = open(b -> b); KernelArgs a = new KernelArgs()) {
            DevicePtr theirs = other.alloc(256);
            Stream theirStream = other.createStream();
            Event theirEvent = other.createEvent();
            KernelHandle theirKernel = other.kernel(MODULE, "add_i32");
            other.beginCapture(theirStream);
            other.memsetAsync(theirs, 1, 256, theirStream);
            GraphHandle theirGraph = other.endCapture(theirStream);

            assertThat(theirs).isNotEqualTo(mine);
            assertThat(theirStream).isNotEqualTo(myStream);
            assertThat(theirEvent).isNotEqualTo(myEvent);
            assertThat(theirGraph).isNotEqualTo(myGraph);
            assertThat(theirKernel).isNotEqualTo(kernel("add_i32"));

            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.launchGraph(theirGraph, Stream.DEFAULT));
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.destroyGraph(theirGraph));
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.synchronize(theirStream));
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.destroyStream(theirStream));
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.recordEvent(theirEvent, Stream.DEFAULT));
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.destroyEvent(theirEvent));
            assertCuda(CudaError.INVALID_HANDLE, () -> gpu.launch(theirKernel, LaunchConfig.of(1, 1), Stream.DEFAULT,
                    a.clear().ptr(mine).i32(1).i32(1)));
            // The pointer of another runtime, and one no runtime issued, are refused by this runtime
            // itself: a backend may refuse them with the same code, which must not hide a runtime
            // that passed them on.
            DevicePtr unknown = new DevicePtr(0x7ead_0000_0000L);
            for (DevicePtr foreign : new DevicePtr[] {theirs, unknown}) {
                java.util.Map<String, Long> before = driver.callsByMethod();
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(foreign));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(foreign, 7, 256));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.memsetAsync(foreign, 7, 256, myStream));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2D(foreign, mine, 256));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2D(mine, foreign, 256));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2DAsync(foreign, mine, 256, myStream));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2H(foreign, new byte[256]));
                assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[256], foreign));
                assertThat(driver.callsByMethod()).as("driver calls made for the pointer %s", foreign).isEqualTo(before);
            }

            // Nothing of this runtime was touched: its graph, buffer and handles still work.
            assertThat(gpu.liveAllocCount()).isEqualTo(1);
            assertThat(readBytes(mine, 256)).containsOnly((byte) 3);
            gpu.launchGraph(myGraph, myStream);
            gpu.recordEvent(myEvent, myStream);
            gpu.eventSynchronize(myEvent);
            assertThat(readBytes(mine, 256)).containsOnly((byte) 9);
            // Nor the other's: its memory kept what it holds.
            other.launchGraph(theirGraph, theirStream);
            other.synchronize(theirStream);
            byte[] back = new byte[256];
            other.copyD2H(theirs, MemorySegment.ofArray(back));
            assertThat(back).containsOnly((byte) 1);
            other.destroyGraph(theirGraph);
            other.free(theirs);
        }
        gpu.destroyGraph(myGraph);
        gpu.free(mine);
    }

    // ---- ranges ------------------------------------------------------------------------------------

    /** Where a refusal says a buffer was freed: its line where the free walked for it, else the call. */
    private static final String FREED_AT = "freed at (Gpu\\.free \\(line not recorded|LifetimeContract\\.java:\\d+)";

    @Test
    void freedAndOverlongRangesAreRefusedInEveryCopyAndMemset() {
        DevicePtr p = gpu.alloc(256);
        DevicePtr freed = gpu.alloc(256);
        gpu.free(freed);
        Stream s = gpu.createStream();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment big = arena.allocate(257);
            MemorySegment small = arena.allocate(64);
            MemorySegment pinned = gpu.allocHostPinned(257);
            List<Runnable> calls = List.of(
                    () -> gpu.copyH2D(big, p),
                    () -> gpu.copyD2H(p, big),
                    () -> gpu.copyD2HOnStream(p, big, s),
                    () -> gpu.copyD2HAsync(p, big, s),
                    () -> gpu.copyH2DAsync(pinned, p, s),
                    () -> gpu.copyH2DAsyncRetained(big, p, s),
                    () -> gpu.copyD2D(p, p.plus(128), 256),
                    () -> gpu.copyD2DAsync(p.plus(1), p, 256, s),
                    () -> gpu.copyD2D2DAsync(p, 64, p, 64, 64, 5, s),
                    () -> gpu.memset(p.plus(200), 0, 100),
                    () -> gpu.memsetAsync(p, 0, 257, s));
            for (Runnable call : calls) {
                GpuException e = assertCuda(CudaError.INVALID_VALUE, call::run);
                assertThat(e.getMessage()).contains("past its end").contains("allocated at LifetimeContract.java:");
            }
            List<Runnable> fromFreed = List.of(
                    () -> gpu.copyD2H(freed, small),
                    () -> gpu.copyD2DAsync(freed, p, 64, s),
                    () -> gpu.copyH2D(small, freed),
                    () -> gpu.memsetAsync(freed, 0, 64, s));
            // Without red zones, a quarantine or the pool's race check (the simulator's) a free walks for
            // no line: the refusal names the allocation's.
            for (Runnable call : fromFreed) {
                GpuException e = assertCuda(CudaError.INVALID_VALUE, call::run);
                assertThat(e.getMessage()).contains("freed memory").contains("allocated at LifetimeContract.java:")
                        .containsPattern(FREED_AT);
            }
            gpu.freeHostPinned(pinned);
        }
        // Refusals are argument errors: nothing is sticky and the runtime still works.
        gpu.synchronize();
        assertThat(gpu.fault()).isEmpty();
        gpu.memset(p, 1, 256);
        assertThat(readBytes(p, 256)).containsOnly((byte) 1);
        gpu.free(p);
    }

    @Test
    void checkPointersNamesTheArgumentThatIsNotLiveMemory() {
        reopen(b -> b.checkPointers(true));
        DevicePtr p = gpu.alloc(256);
        DevicePtr freed = gpu.alloc(256);
        gpu.free(freed);
        KernelHandle add = kernel("add_i32");
        GpuException e = assertCuda(CudaError.INVALID_VALUE,
                () -> gpu.launch(add, LaunchConfig.of(1, 64), Stream.DEFAULT, args.clear().ptr(freed).i32(1).i32(64)));
        assertThat(e.getMessage()).contains("argument 0").contains("allocated at LifetimeContract.java:")
                .containsPattern(FREED_AT);
        gpu.launch(add, LaunchConfig.of(1, 64), Stream.DEFAULT, args.clear().ptr(p.plus(4)).i32(1).i32(60));
        gpu.synchronize();
        gpu.free(p);
    }
}
