// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Event;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Bad input from Java: null, freed, unknown and interior pointers, bad sizes, copies past an
 * allocation's end, unknown kernel handles, bad launch configurations, calls after close, and
 * destroyed streams, events and graphs. Each is a clear exception (the CUDA error's name and number
 * where one applies), has no side effect on the ledger or on memory, and leaves the runtime working.
 */
public abstract class BadInputContract extends GpuContract {

    /** An address no allocation is at: page-aligned, far from anything a backend hands out. */
    protected static final long BOGUS = 0x7ead_0000_0000L;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected BadInputContract() {
    }

    private void refused(CudaError error, ThrowingCallable call) {
        assertLedgerUnchanged(() -> assertCuda(error, call));
    }

    /** As {@link #refused}, and the runtime refused it itself: its {@link CountingDriver} saw no call. */
    private void refusedBeforeTheDriver(CudaError error, ThrowingCallable call) {
        CountingDriver driver = CountingDriver.of(gpu);
        Map<String, Long> before = driver.callsByMethod();
        refused(error, call);
        assertThat(driver.callsByMethod()).as("driver calls made by a refused call").isEqualTo(before);
    }

    private static String hex(long address) {
        return Long.toHexString(address).toLowerCase(Locale.ROOT);
    }

    /** Freeing an unknown pointer is INVALID_VALUE naming it; nothing is freed. */
    @Test
    public void freeOfUnknownPointer() {
        CountingDriver driver = counted();
        DevicePtr p = gpu.alloc(64);
        Map<String, Long> before = driver.callsByMethod();
        assertLedgerUnchanged(() -> {
            GpuException e = assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(new DevicePtr(BOGUS)));
            assertThat(e.getMessage().toLowerCase(Locale.ROOT)).contains(hex(BOGUS));
        });
        assertThat(driver.callsByMethod()).as("driver calls made by the refused free").isEqualTo(before);
        gpu.free(p);
        assertStillWorks();
    }

    /** Freeing an interior pointer is INVALID_VALUE; the allocation survives with its data. */
    @Test
    public void freeOfInteriorPointer() {
        counted();
        DevicePtr p = gpu.alloc(256);
        gpu.copyH2D(ints(64, 8), p);
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.free(p.plus(16)));
        assertThat(readInts(p, 64)).containsOnly(8);
        gpu.free(p);
        assertStillWorks();
    }

    /** A null reference (not {@link DevicePtr#NULL}) is a NullPointerException before the device. */
    @Test
    public void nullReferencesAreNullPointerExceptions() {
        DevicePtr p = gpu.alloc(64);
        Stream s = gpu.createStream();
        Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
        calls.put("free(null)", () -> gpu.free(null));
        calls.put("copyH2D(null array)", () -> gpu.copyH2D((int[]) null, p));
        calls.put("copyH2D(null segment)", () -> gpu.copyH2D((MemorySegment) null, p));
        calls.put("copyH2D(.., null ptr)", () -> gpu.copyH2D(new int[4], null));
        calls.put("copyD2H(null ptr, ..)", () -> gpu.copyD2H(null, new int[4]));
        calls.put("copyD2H(.., null array)", () -> gpu.copyD2H(p, (float[]) null));
        calls.put("copyD2D(null, ..)", () -> gpu.copyD2D(null, p, 4));
        calls.put("memset(null)", () -> gpu.memset(null, 0, 4));
        calls.put("memsetAsync(.., null stream)", () -> gpu.memsetAsync(p, 0, 4, null));
        calls.put("launch(null kernel)", () -> gpu.launch(null, LaunchConfig.of(1, 1), s, args.clear()));
        calls.put("launch(null config)", () -> gpu.launch(kernel("noop"), null, s, args.clear()));
        calls.put("launch(null stream)", () -> gpu.launch(kernel("noop"), LaunchConfig.of(1, 1), null, args.clear()));
        calls.put("launch(null args)", () -> gpu.launch(kernel("noop"), LaunchConfig.of(1, 1), s, null));
        calls.put("loadModule(null name)", () -> gpu.loadModule(null, contractPtx()));
        calls.put("loadModule(null image)", () -> gpu.loadModule("x", null));
        calls.put("kernel(null module)", () -> gpu.kernel(null, "noop"));
        calls.put("kernel(.., null func)", () -> gpu.kernel(MODULE, null));
        calls.put("synchronize(null)", () -> gpu.synchronize((Stream) null));
        calls.put("recordEvent(null)", () -> gpu.recordEvent(null, s));
        calls.put("launchGraph(null)", () -> gpu.launchGraph(null, s));
        for (var c : calls.entrySet()) {
            assertLedgerUnchanged(() -> assertThat(catchThrowable(c.getValue())).as(c.getKey())
                    .isInstanceOf(NullPointerException.class));
        }
        gpu.destroyStream(s);
        gpu.free(p);
        assertStillWorks();
    }

    /** alloc: 0 bytes is INVALID_VALUE, a negative count is refused naming it, 2^50 is OUT_OF_MEMORY naming the size. */
    @Test
    public void badAllocationSizes() {
        // A zero size is CUDA's to refuse (cuMemAlloc answers INVALID_VALUE); the runtime passes it on.
        refused(CudaError.INVALID_VALUE, () -> gpu.alloc(0));
        refused(CudaError.INVALID_VALUE, () -> gpu.allocManaged(0));
        refused(CudaError.INVALID_VALUE, () -> gpu.allocArena(0));
        assertLedgerUnchanged(() -> assertBadArgument("-1", () -> gpu.alloc(-1)));
        assertLedgerUnchanged(() -> assertBadArgument("-8", () -> gpu.allocManaged(-8)));
        GpuException oom = assertCuda(CudaError.OUT_OF_MEMORY, () -> gpu.alloc(1L << 50));
        assertThat(oom.getMessage()).as("names the bytes requested").contains(String.valueOf(1L << 50));
        assertThat(gpu.liveAllocCount()).isZero();
        assertStillWorks();
    }

    /** Page-locked memory: size 0 or negative is refused; freeing memory it did not allocate is INVALID_VALUE. */
    @Test
    public void badPinnedMemoryCalls() {
        counted();
        assertBadArgument("-1", () -> gpu.allocHostPinned(-1));
        MemorySegment pinned = gpu.allocHostPinned(256);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment other = arena.allocate(256);
            refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.freeHostPinned(other));
            // Whether host memory is mapped is the driver's to say (cuMemHostGetDevicePointer).
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.hostPtrToDevice(other));
        }
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.freeHostPinned(pinned.asSlice(16)));
        assertThat(gpu.isPinned(pinned)).as("an interior free leaves the memory pinned").isTrue();
        gpu.freeHostPinned(pinned);
        MemorySegment again = MemorySegment.ofAddress(pinned.address());
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.freeHostPinned(again));
        assertStillWorks();
    }

    /** Copies past an allocation's end are INVALID_VALUE and write nothing, not even the part that fits. */
    @Test
    public void copiesPastTheEnd() {
        counted();
        DevicePtr p = gpu.alloc(256);
        DevicePtr q = gpu.alloc(256);
        gpu.memset(p, 0x11, 256);
        gpu.memset(q, 0x22, 256);
        Stream s = gpu.createStream();
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[257], p));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new int[61], p.plus(16)));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2H(p, new byte[257]));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2H(p.plus(200), new long[8]));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D(p, q, 257));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D(p.plus(128), q, 129));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D(p, q.plus(1), 256));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2DAsync(p, q, 300, s));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.memset(p.plus(200), 0, 100));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.memsetAsync(q, 0, 257, s));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment big = arena.allocate(512);
            refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2DAsync(big, p, s));
            refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2DAsyncRetained(big, p, s));
            refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2HAsync(p, big, s));
            refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2HOnStream(p, big, s));
        }
        gpu.synchronize();
        assertThat(readBytes(p, 256)).as("p after refused copies").containsOnly(0x11);
        assertThat(readBytes(q, 256)).as("q after refused copies").containsOnly(0x22);
        gpu.destroyStream(s);
        gpu.free(p);
        gpu.free(q);
        assertStillWorks();
    }

    /** Copies from or to freed and unknown pointers are INVALID_VALUE. */
    @Test
    public void copiesWithFreedOrUnknownPointers() {
        counted();
        DevicePtr live = gpu.alloc(64);
        DevicePtr freed = gpu.alloc(64);
        gpu.free(freed);
        DevicePtr bogus = new DevicePtr(BOGUS);
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2H(freed, new byte[64]));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[64], freed));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2H(bogus, new byte[8]));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[8], bogus));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D(live, freed, 64));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D(bogus, live, 8));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.memset(freed, 0, 8));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2H(DevicePtr.NULL, new byte[8]));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[8], new DevicePtr(0x10)));
        gpu.free(live);
        assertStillWorks();
    }

    /** Negative counts and out-of-range byte values are refused naming the value. */
    @Test
    public void negativeCountsAndBadByteValues() {
        DevicePtr p = gpu.alloc(64);
        DevicePtr q = gpu.alloc(64);
        Stream s = gpu.createStream();
        assertLedgerUnchanged(() -> {
            assertBadArgument("-4", () -> gpu.copyD2D(p, q, -4));
            assertBadArgument("-4", () -> gpu.copyD2DAsync(p, q, -4, s));
            assertBadArgument("-1", () -> gpu.memset(p, 0, -1));
            assertBadArgument("-1", () -> gpu.memsetAsync(p, 0, -1, s));
            assertBadArgument("256", () -> gpu.memset(p, 256, 8));
            assertBadArgument("-1", () -> gpu.memsetAsync(p, -1, 8, s));
        });
        gpu.destroyStream(s);
        gpu.free(p);
        gpu.free(q);
        assertStillWorks();
    }

    /**
     * A negative size, pitch or count, or a byte value out of range, cannot be said to CUDA (its
     * sizes are unsigned): the runtime refuses it before the driver, naming the value, and the
     * driver sees no call.
     */
    @Test
    public void negativeValuesNeverReachTheDriver() {
        CountingDriver driver = counted();
        DevicePtr p = gpu.alloc(256);
        DevicePtr q = gpu.alloc(256);
        DevicePtr chunk = gpu.allocArena(4096);
        Stream s = gpu.createStream();
        var noop = kernel("noop");
        Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
        calls.put("-1", () -> gpu.alloc(-1));
        calls.put("-8", () -> gpu.allocManaged(-8));
        calls.put("-2", () -> gpu.allocArena(-2));
        calls.put("-3", () -> gpu.allocHostPinned(-3));
        calls.put("-4", () -> gpu.copyD2D(p, q, -4));
        calls.put("-5", () -> gpu.copyD2DAsync(p, q, -5, s));
        calls.put("-6", () -> gpu.copyD2D2DAsync(p, -6, q, 64, 32, 2, s));
        calls.put("-7", () -> gpu.copyD2D2DAsync(p, 64, q, -7, 32, 2, s));
        calls.put("-9", () -> gpu.copyD2D2DAsync(p, 64, q, 64, -9, 2, s));
        calls.put("-10", () -> gpu.copyD2D2DAsync(p, 64, q, 64, 32, -10, s));
        calls.put("-11", () -> gpu.memset(p, 0, -11));
        calls.put("-12", () -> gpu.memsetAsync(p, 0, -12, s));
        calls.put("256", () -> gpu.memset(p, 256, 8));
        calls.put("-13", () -> gpu.memsetAsync(p, -13, 8, s));
        calls.put("-14", () -> gpu.setMaxDynamicSharedMemory(noop, -14));
        calls.put("-15", () -> gpu.noteArenaUse(chunk, -15));
        Map<String, Long> before = driver.callsByMethod();
        assertLedgerUnchanged(() -> {
            for (var c : calls.entrySet()) {
                RuntimeException e = assertBadArgument(c.getKey(), c.getValue());
                assertThat(e).as("the refusal of %s", c.getKey())
                        .isInstanceOfAny(IllegalArgumentException.class, IndexOutOfBoundsException.class);
                assertThat(driver.callsByMethod()).as("driver calls made for the bad value %s", c.getKey()).isEqualTo(before);
            }
        });
        gpu.destroyStream(s);
        gpu.freeArena(chunk);
        gpu.free(p);
        gpu.free(q);
    }

    /** 2D copy rules: a pitch smaller than the width, or rows past either allocation's end, are INVALID_VALUE; width or height 0 does nothing (case 11). */
    @Test
    public void bad2DCopies() {
        counted();
        Stream s = gpu.createStream();
        DevicePtr src = gpu.alloc(64 * 8);
        DevicePtr dst = gpu.alloc(128 * 8);
        gpu.memset(dst, 0x33, 128 * 8);
        // The pitch rule is the driver's to refuse; rows past an allocation's end are the runtime's.
        refused(CudaError.INVALID_VALUE, () -> gpu.copyD2D2DAsync(src, 64, dst, 128, 65, 8, s));
        refused(CudaError.INVALID_VALUE, () -> gpu.copyD2D2DAsync(src, 64, dst, 40, 48, 8, s));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D2DAsync(src, 64, dst, 128, 48, 9, s));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.copyD2D2DAsync(src, 32, dst, 128, 32, 17, s));
        gpu.copyD2D2DAsync(src, 64, dst, 128, 48, 0, s);
        gpu.copyD2D2DAsync(src, 64, dst, 128, 0, 8, s);
        gpu.synchronize(s);
        assertThat(readBytes(dst, 128 * 8)).containsOnly(0x33);
        gpu.destroyStream(s);
        gpu.free(src);
        gpu.free(dst);
        assertStillWorks();
    }

    /** Host segments: a closed one is refused before the device, and a heap segment is fine for blocking copies. */
    @Test
    public void closedHostSegmentsAreRefused() {
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0x44, 64);
        MemorySegment closed;
        try (Arena arena = Arena.ofConfined()) {
            closed = arena.allocate(64);
        }
        MemorySegment dead = closed;
        assertLedgerUnchanged(() -> {
            assertThat(catchThrowable(() -> gpu.copyH2D(dead, p))).isInstanceOfAny(IllegalArgumentException.class,
                    IllegalStateException.class);
            assertThat(catchThrowable(() -> gpu.copyD2H(p, dead))).isInstanceOfAny(IllegalArgumentException.class,
                    IllegalStateException.class);
        });
        assertThat(readBytes(p, 64)).containsOnly(0x44);
        gpu.free(p);
        assertStillWorks();
    }

    /** Launching an unknown kernel handle is INVALID_HANDLE, never a crash (case 23: f NULL is 400). */
    @Test
    public void unknownKernelHandles() {
        counted();
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.launch(new KernelHandle(0), LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear()));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.launch(new KernelHandle(BOGUS), LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear()));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.setMaxDynamicSharedMemory(new KernelHandle(BOGUS), 65536));
        gpu.synchronize();
        assertStillWorks();
    }

    /** A handle from a module that was replaced is INVALID_HANDLE: a launch never reaches unloaded code. */
    @Test
    public void handlesOfAReplacedModuleAreRefused() {
        counted();
        KernelHandle old = gpu.kernel(MODULE, "noop");
        prepareKernels(gpu);
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.launch(old, LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear()));
        KernelHandle fresh = gpu.kernel(MODULE, "noop");
        gpu.launch(fresh, LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear());
        gpu.synchronize();
        assertStillWorks();
    }

    /** Bad launch dimensions are INVALID_VALUE each, and the device is fine afterwards (case 23). */
    @Test
    public void badLaunchDimensions() {
        KernelHandle k = kernel("noop");
        Map<String, LaunchConfig> bad = new LinkedHashMap<>();
        bad.put("block 1025", LaunchConfig.of(Dim3.of(1), Dim3.of(1025)));
        bad.put("block 1024x2", LaunchConfig.of(Dim3.of(1), Dim3.of(1024, 2)));
        bad.put("block z 65", LaunchConfig.of(Dim3.of(1), Dim3.of(1, 1, 65)));
        bad.put("block x 0", LaunchConfig.of(Dim3.of(1), Dim3.of(0)));
        bad.put("grid x 0", LaunchConfig.of(Dim3.of(0), Dim3.of(32)));
        bad.put("grid y 65536", LaunchConfig.of(Dim3.of(1, 65536), Dim3.of(32)));
        bad.put("grid z 65536", LaunchConfig.of(Dim3.of(1, 1, 65536), Dim3.of(32)));
        bad.put("grid x 2^31", LaunchConfig.of(Dim3.of(Integer.MIN_VALUE), Dim3.of(32)));
        bad.put("grid x -1", LaunchConfig.of(Dim3.of(-1), Dim3.of(32)));
        bad.put("smem -1", LaunchConfig.of(1, 32).withSharedMem(-1));
        bad.put("smem 49153", LaunchConfig.of(1, 32).withSharedMem(49153));
        for (var c : bad.entrySet()) {
            GpuException e = assertLedgerUnchangedAnd(() -> assertCuda(CudaError.INVALID_VALUE,
                    () -> gpu.launch(k, c.getValue(), Stream.DEFAULT, args.clear())));
            assertThat(e.getMessage()).as(c.getKey()).isNotBlank();
        }
        gpu.synchronize();
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }

    private <T> T assertLedgerUnchangedAnd(java.util.function.Supplier<T> check) {
        Object[] out = new Object[1];
        assertLedgerUnchanged(() -> out[0] = check.get());
        @SuppressWarnings("unchecked")
        T t = (T) out[0];
        return t;
    }

    /** A closed argument buffer is refused before the device. */
    @Test
    public void closedKernelArgsAreRefused() {
        KernelArgs closed = new KernelArgs();
        closed.close();
        assertThatThrownBy(() -> gpu.launch(kernel("noop"), LaunchConfig.of(1, 1), Stream.DEFAULT, closed))
                .isInstanceOf(IllegalStateException.class);
        assertStillWorks();
    }

    /** Unknown streams are INVALID_HANDLE; destroying the legacy stream is INVALID_HANDLE. */
    @Test
    public void unknownStreams() {
        counted();
        kernel("noop");
        Stream bogus = new Stream(BOGUS);
        DevicePtr p = gpu.alloc(64);
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.synchronize(bogus));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.streamQuery(bogus));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.memsetAsync(p, 0, 64, bogus));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> noop(bogus));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.destroyStream(bogus));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.destroyStream(Stream.DEFAULT));
        gpu.free(p);
        assertStillWorks();
    }

    /** A destroyed stream is INVALID_HANDLE for every later use. */
    @Test
    public void destroyedStreams() {
        counted();
        kernel("noop");
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        DevicePtr p = gpu.alloc(64);
        DevicePtr q = gpu.alloc(64);
        gpu.destroyStream(s);
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.synchronize(s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.streamQuery(s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> noop(s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.memsetAsync(p, 0, 64, s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.copyD2DAsync(p, q, 64, s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.recordEvent(e, s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.streamWaitEvent(s, e));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.beginCapture(s));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.destroyStream(s));
        gpu.destroyEvent(e);
        gpu.free(p);
        gpu.free(q);
        assertStillWorks();
    }

    /** A destroyed or unknown event is INVALID_HANDLE for every later use. */
    @Test
    public void destroyedAndUnknownEvents() {
        counted();
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        Event live = gpu.createEvent();
        gpu.recordEvent(e, s);
        gpu.destroyEvent(e);
        for (Event bad : new Event[] {e, new Event(BOGUS)}) {
            refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.recordEvent(bad, s));
            refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.eventQuery(bad));
            refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.eventSynchronize(bad));
            refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.streamWaitEvent(s, bad));
            refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(bad, live));
            refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.destroyEvent(bad));
        }
        gpu.destroyEvent(live);
        gpu.destroyStream(s);
        assertStillWorks();
    }

    /** A destroyed or unknown graph is refused with INVALID_HANDLE or INVALID_VALUE, never run. */
    @Test
    public void destroyedAndUnknownGraphs() {
        CountingDriver driver = counted();
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        gpu.beginCapture(s);
        addI32(p, 1, 16, s);
        GraphHandle g = gpu.endCapture(s);
        gpu.destroyGraph(g);
        Map<String, Long> before = driver.callsByMethod();
        for (GraphHandle bad : new GraphHandle[] {g, new GraphHandle(BOGUS), new GraphHandle(0)}) {
            assertLedgerUnchanged(() -> {
                assertCudaOneOf(() -> gpu.launchGraph(bad, s), CudaError.INVALID_HANDLE, CudaError.INVALID_VALUE);
                assertCudaOneOf(() -> gpu.destroyGraph(bad), CudaError.INVALID_HANDLE, CudaError.INVALID_VALUE);
            });
        }
        assertThat(driver.callsByMethod()).as("driver calls made for dead graphs").isEqualTo(before);
        gpu.synchronize();
        assertThat(readInts(p, 16)).as("the destroyed graph never ran").containsOnly(0);
        gpu.destroyStream(s);
        gpu.free(p);
        assertStillWorks();
    }

    /**
     * A kernel of a module that was never loaded is NOT_FOUND; an empty function name is
     * INVALID_VALUE (as {@code cuModuleGetFunction} answers on an H200); a truncated ELF image is
     * INVALID_IMAGE.
     */
    @Test
    public void badModulesAndNames() {
        counted();
        refusedBeforeTheDriver(CudaError.NOT_FOUND, () -> gpu.kernel("never_loaded", "fill_f32"));
        refused(CudaError.INVALID_VALUE, () -> gpu.kernel(MODULE, ""));
        refused(CudaError.INVALID_IMAGE, () -> gpu.loadModule("junk", new byte[] {0x7f, 'E', 'L', 'F', 0, 0, 0}));
        assertStillWorks();
    }

    /** Arena bookkeeping: unknown chunks are INVALID_VALUE; a use beyond the chunk is refused. */
    @Test
    public void badArenaCalls() {
        counted();
        DevicePtr chunk = gpu.allocArena(1024);
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.freeArena(new DevicePtr(BOGUS)));
        refusedBeforeTheDriver(CudaError.INVALID_VALUE, () -> gpu.freeArena(chunk.plus(256)));
        assertBadArgument(hex(BOGUS), () -> gpu.noteArenaUse(new DevicePtr(BOGUS), 1));
        assertBadArgument("1025", () -> gpu.noteArenaUse(chunk, 1025));
        assertBadArgument("-1", () -> gpu.noteArenaUse(chunk, -1));
        gpu.copyH2D(ints(256, 6), chunk);
        assertThat(readInts(chunk, 256)).containsOnly(6);
        gpu.freeArena(chunk);
        assertStillWorks();
    }

    /**
     * A copy or memset that starts inside an arena chunk or a mapped page-locked range and runs
     * past its end is INVALID_VALUE, refused before the driver naming what it runs past, and writes
     * nothing; the same calls within the range work.
     */
    @Test
    public void overlongRangesOfArenaChunksAndMappedPinnedMemoryAreRefused() {
        counted();
        DevicePtr chunk = gpu.allocArena(1024);
        DevicePtr q = gpu.alloc(2048);
        Stream s = gpu.createStream();
        gpu.memset(chunk, 0x11, 1024);
        gpu.memset(q, 0x22, 2048);
        Map<String, ThrowingCallable> pastChunk = new LinkedHashMap<>();
        pastChunk.put("memset", () -> gpu.memset(chunk.plus(1000), 0, 25));
        pastChunk.put("memsetAsync", () -> gpu.memsetAsync(chunk, 0, 1025, s));
        pastChunk.put("copyH2D", () -> gpu.copyH2D(new byte[1025], chunk));
        pastChunk.put("copyD2H", () -> gpu.copyD2H(chunk.plus(512), new byte[513]));
        pastChunk.put("copyD2D to", () -> gpu.copyD2D(q, chunk.plus(1), 1024));
        pastChunk.put("copyD2D from", () -> gpu.copyD2D(chunk, q, 1025));
        pastChunk.put("copyD2DAsync", () -> gpu.copyD2DAsync(chunk.plus(8), q, 1024, s));
        for (var c : pastChunk.entrySet()) {
            CountingDriver driver = CountingDriver.of(gpu);
            Map<String, Long> before = driver.callsByMethod();
            GpuException e = assertLedgerUnchangedAnd(() -> assertCuda(CudaError.INVALID_VALUE, c.getValue()));
            assertThat(e.getMessage()).as(c.getKey()).contains("past the end of its arena chunk");
            assertThat(driver.callsByMethod()).as("driver calls made by the refused %s", c.getKey()).isEqualTo(before);
        }
        gpu.synchronize();
        assertThat(readBytes(chunk, 1024)).as("the chunk after refused calls").containsOnly(0x11);
        assertThat(readBytes(q, 2048)).as("the buffer after refused calls").containsOnly(0x22);
        gpu.copyD2D(q, chunk.plus(24), 1000);
        assertThat(readBytes(chunk, 1024)).as("a copy within the chunk").startsWith(bytes(24, 0x11)).endsWith(bytes(1000, 0x22));

        MemorySegment pinned = gpu.allocHostPinned(4096);
        pinned.fill((byte) 0x33);
        DevicePtr mapped = gpu.hostPtrToDevice(pinned);
        Map<String, ThrowingCallable> pastPinned = new LinkedHashMap<>();
        pastPinned.put("memset", () -> gpu.memset(mapped.plus(4000), 0, 97));
        pastPinned.put("memsetAsync", () -> gpu.memsetAsync(mapped, 0, 4097, s));
        pastPinned.put("copyD2D from", () -> gpu.copyD2D(mapped.plus(2048), q, 2049));
        pastPinned.put("copyD2D to", () -> gpu.copyD2D(q, mapped.plus(2049), 2048));
        pastPinned.put("copyD2DAsync", () -> gpu.copyD2DAsync(q, mapped.plus(4095), 2, s));
        for (var c : pastPinned.entrySet()) {
            CountingDriver driver = CountingDriver.of(gpu);
            Map<String, Long> before = driver.callsByMethod();
            GpuException e = assertLedgerUnchangedAnd(() -> assertCuda(CudaError.INVALID_VALUE, c.getValue()));
            assertThat(e.getMessage()).as(c.getKey()).contains("past the end of its page-locked range");
            assertThat(driver.callsByMethod()).as("driver calls made by the refused %s", c.getKey()).isEqualTo(before);
        }
        gpu.synchronize();
        byte[] host = new byte[4096];
        MemorySegment.copy(pinned, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, host, 0, 4096);
        assertThat(host).as("the pinned range after refused calls").containsOnly(0x33);
        // The same range, not past the end, is accepted.
        gpu.memset(mapped.plus(4000), 0x44, 96);
        gpu.copyD2D(mapped, q, 2048);
        gpu.freeHostPinned(pinned);
        gpu.destroyStream(s);
        gpu.free(q);
        gpu.freeArena(chunk);
        assertStillWorks();
    }

    /**
     * A destroyed stream, event or graph stays refused after a new one was created in its place
     * (the runtime hands the freed slot out again): the old handle never reaches the new object.
     */
    @Test
    public void aDestroyedHandleStaysDeadAfterItsSlotIsHandedOutAgain() {
        counted();
        kernel("noop");
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        Stream oldStream = gpu.createStream();
        gpu.destroyStream(oldStream);
        Stream newStream = gpu.createStream();
        assertThat(newStream).isNotEqualTo(oldStream);
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.synchronize(oldStream));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.memsetAsync(p, 1, 64, oldStream));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.destroyStream(oldStream));

        Event oldEvent = gpu.createEvent();
        gpu.destroyEvent(oldEvent);
        Event newEvent = gpu.createEvent();
        assertThat(newEvent).isNotEqualTo(oldEvent);
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.recordEvent(oldEvent, newStream));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.eventQuery(oldEvent));
        refusedBeforeTheDriver(CudaError.INVALID_HANDLE, () -> gpu.destroyEvent(oldEvent));

        gpu.beginCapture(newStream);
        gpu.memsetAsync(p, 2, 64, newStream);
        GraphHandle oldGraph = gpu.endCapture(newStream);
        gpu.destroyGraph(oldGraph);
        gpu.beginCapture(newStream);
        gpu.memsetAsync(p, 3, 64, newStream);
        GraphHandle newGraph = gpu.endCapture(newStream);
        assertThat(newGraph).isNotEqualTo(oldGraph);
        CountingDriver driver = CountingDriver.of(gpu);
        Map<String, Long> before = driver.callsByMethod();
        assertCudaOneOf(() -> gpu.launchGraph(oldGraph, newStream), CudaError.INVALID_HANDLE, CudaError.INVALID_VALUE);
        assertCudaOneOf(() -> gpu.destroyGraph(oldGraph), CudaError.INVALID_HANDLE, CudaError.INVALID_VALUE);
        assertThat(driver.callsByMethod()).as("driver calls made for the destroyed graph").isEqualTo(before);
        gpu.synchronize();
        assertThat(readBytes(p, 64)).as("neither old handle reached the new objects").containsOnly(0);

        // The new objects still work.
        gpu.recordEvent(newEvent, newStream);
        gpu.eventSynchronize(newEvent);
        gpu.launchGraph(newGraph, newStream);
        gpu.synchronize(newStream);
        assertThat(readBytes(p, 64)).containsOnly(3);
        gpu.destroyGraph(newGraph);
        gpu.destroyEvent(newEvent);
        gpu.destroyStream(newStream);
        gpu.free(p);
        assertStillWorks();
    }

    /** After close every call but close and isClosed is IllegalStateException; close is idempotent. */
    @Test
    public void callsAfterCloseAreIllegalState() {
        DevicePtr p = gpu.alloc(64);
        Stream s = gpu.createStream();
        Event e = gpu.createEvent();
        KernelHandle k = kernel("noop");
        MemorySegment pinned = gpu.allocHostPinned(64);
        gpu.close();
        assertThat(gpu.isClosed()).isTrue();
        gpu.close();
        Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
        calls.put("alloc", () -> gpu.alloc(64));
        calls.put("allocManaged", () -> gpu.allocManaged(64));
        calls.put("allocArena", () -> gpu.allocArena(64));
        calls.put("free", () -> gpu.free(p));
        calls.put("liveAllocCount", () -> gpu.liveAllocCount());
        calls.put("liveAllocations", () -> gpu.liveAllocations());
        calls.put("copyH2D", () -> gpu.copyH2D(new int[4], p));
        calls.put("copyD2H", () -> gpu.copyD2H(p, new int[4]));
        calls.put("copyD2D", () -> gpu.copyD2D(p, p, 0));
        calls.put("memset", () -> gpu.memset(p, 0, 4));
        calls.put("memsetAsync", () -> gpu.memsetAsync(p, 0, 4, s));
        calls.put("loadModule", () -> loadContractModule(gpu));
        calls.put("kernel", () -> gpu.kernel(MODULE, "noop"));
        calls.put("launch", () -> gpu.launch(k, LaunchConfig.of(1, 1), s, args.clear()));
        calls.put("createStream", () -> gpu.createStream());
        calls.put("destroyStream", () -> gpu.destroyStream(s));
        calls.put("synchronize()", () -> gpu.synchronize());
        calls.put("synchronize(s)", () -> gpu.synchronize(s));
        calls.put("streamQuery", () -> gpu.streamQuery(s));
        calls.put("createEvent", () -> gpu.createEvent());
        calls.put("recordEvent", () -> gpu.recordEvent(e, s));
        calls.put("eventQuery", () -> gpu.eventQuery(e));
        calls.put("destroyEvent", () -> gpu.destroyEvent(e));
        calls.put("beginCapture", () -> gpu.beginCapture(s));
        calls.put("deviceFreeMemory", () -> gpu.deviceFreeMemory());
        calls.put("allocHostPinned", () -> gpu.allocHostPinned(64));
        calls.put("freeHostPinned", () -> gpu.freeHostPinned(pinned));
        calls.put("sweepUnreleased", () -> gpu.sweepUnreleased());
        calls.put("scanRedzones", () -> gpu.scanRedzones());
        calls.put("bindToThread", () -> gpu.bindToThread());
        for (var c : calls.entrySet()) {
            assertThat(catchThrowable(c.getValue())).as(c.getKey() + " after close").isInstanceOf(IllegalStateException.class);
        }
    }
}
