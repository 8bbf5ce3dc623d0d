// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Event;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * The conformance cases of CUDA_SEMANTICS.md section 5 that a runtime can see through {@link
 * metrale.gpu.Gpu}, one test per case, numbered as there. Cases about contexts, initialization,
 * stream flags the API does not expose, host threads and driver teardown (1 to 5, 8, 12 to 16,
 * 18, 28 to 30) are not here: the API manages its context itself, or they need timing.
 */
public abstract class ConformanceContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected ConformanceContract() {
    }

    /** 6. alloc of 0 is INVALID_VALUE; of 2^50 OUT_OF_MEMORY (not sticky); then of 64 works. */
    @Test
    public void case06_allocZeroHugeThenSmall() {
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.alloc(0));
        assertCuda(CudaError.OUT_OF_MEMORY, () -> gpu.alloc(1L << 50));
        DevicePtr p = gpu.alloc(64);
        assertThat(gpu.fault()).isEmpty();
        gpu.free(p);
    }

    /** 7. free: NULL works; p+16 INVALID_VALUE; p works; p again INVALID_VALUE; a pinned or malloc pointer INVALID_VALUE. */
    @Test
    public void case07_freeRules() {
        DevicePtr p = gpu.alloc(256);
        gpu.free(DevicePtr.NULL);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(p.plus(16)));
        gpu.free(p);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(p));
        MemorySegment pinned = gpu.allocHostPinned(256);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(gpu.hostPtrToDevice(pinned)));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(new DevicePtr(pinned.address())));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment malloced = arena.allocate(256);
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.free(new DevicePtr(malloced.address())));
        }
        gpu.freeHostPinned(pinned);
    }

    /** 9. Allocating 1 GiB lowers free memory by at least 1 GiB; freeing restores it; total is constant. */
    @Test
    @DriverAllocator("device free memory comes back at cuMemFree; the pool keeps its chunks cached")
    public void case09_memGetInfoFollowsAllocations() {
        long gib = 1L << 30;
        long total = gpu.totalMemory();
        long before = gpu.deviceFreeMemory();
        DevicePtr p = gpu.alloc(gib);
        long during = gpu.deviceFreeMemory();
        assertThat(before - during).as("free memory drop for 1 GiB").isGreaterThanOrEqualTo(gib);
        gpu.free(p);
        long after = gpu.deviceFreeMemory();
        assertThat(after - during).as("free memory regained").isGreaterThanOrEqualTo(gib);
        assertThat(gpu.totalMemory()).isEqualTo(total);
    }

    /** 10. On a 256-byte buffer: H2D of 257, memset of 100 at +200, D2H from a freed pointer: INVALID_VALUE each; then a device sync works. */
    @Test
    public void case10_rangeErrorsAreNotSticky() {
        DevicePtr p = gpu.alloc(256);
        DevicePtr freed = gpu.alloc(256);
        gpu.free(freed);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[257], p));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(p.plus(200), 0, 100));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2H(freed, new byte[16]));
        gpu.synchronize();
        assertThat(gpu.fault()).isEmpty();
        gpu.free(p);
    }

    /** 11. 2D copy: width 48, pitches 64 and 128, height 8; width 65 or dst pitch 40 INVALID_VALUE; height 0 does nothing. */
    @Test
    public void case11_copy2D() {
        Stream s = gpu.createStream();
        DevicePtr src = gpu.alloc(64 * 8);
        DevicePtr dst = gpu.alloc(128 * 8);
        byte[] pattern = new byte[64 * 8];
        for (int i = 0; i < pattern.length; i++) {
            pattern[i] = (byte) (i * 7 + 1);
        }
        gpu.copyH2D(pattern, src);
        gpu.memset(dst, 0xEE, 128 * 8);
        gpu.copyD2D2DAsync(src, 64, dst, 128, 48, 8, s);
        gpu.synchronize(s);
        byte[] out = readBytes(dst, 128 * 8);
        for (int row = 0; row < 8; row++) {
            for (int col = 0; col < 128; col++) {
                byte expected = col < 48 ? pattern[row * 64 + col] : (byte) 0xEE;
                assertThat(out[row * 128 + col]).as("row %d col %d", row, col).isEqualTo(expected);
            }
        }
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2D2DAsync(src, 64, dst, 128, 65, 8, s));
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyD2D2DAsync(src, 64, dst, 40, 48, 8, s));
        gpu.memset(dst, 0, 128 * 8);
        gpu.copyD2D2DAsync(src, 64, dst, 128, 48, 0, s);
        gpu.synchronize(s);
        assertThat(readBytes(dst, 128 * 8)).containsOnly(0);
        gpu.destroyStream(s);
        gpu.free(src);
        gpu.free(dst);
    }

    /** 17. Event creation with INTERPROCESS alone is INVALID_VALUE (stream flags are not exposed beyond non-blocking). */
    @Test
    public void case17_invalidCreationFlags() {
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.createEvent(4));
        Stream nb = gpu.createStream(true);
        gpu.destroyStream(nb);
    }

    /** 19. A never-recorded event: query true, sync returns. */
    @Test
    public void case19_neverRecordedEvent() {
        Event e = gpu.createEvent();
        assertThat(gpu.eventQuery(e)).isTrue();
        gpu.eventSynchronize(e);
        gpu.destroyEvent(e);
    }

    /** 20. Elapsed time: unrecorded INVALID_HANDLE; NOT_READY before the sync; a sign after; DISABLE_TIMING INVALID_HANDLE. */
    @Test
    public void case20_elapsedTime() {
        Stream s = gpu.createStream();
        Event a = gpu.createEvent();
        Event b = gpu.createEvent();
        Event untimed = gpu.createEvent(2);
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(a, b));
        gpu.recordEvent(a, s);
        spin(200, s);
        gpu.recordEvent(b, s);
        gpu.recordEvent(untimed, s);
        assertCuda(CudaError.NOT_READY, () -> gpu.elapsedMillis(a, b));
        gpu.synchronize(s);
        float forward = gpu.elapsedMillis(a, b);
        assertThat(forward).isGreaterThanOrEqualTo(0f);
        assertThat(gpu.elapsedMillis(b, a)).as("the same span backwards").isCloseTo(-forward, within(1e-3f));
        assertThat(gpu.elapsedMillis(a, a)).as("an event against itself").isZero();
        if (!observableAsync()) {
            // The spin kernel waits out 200 ms of the device's global timer between the two records,
            // so the span cannot be shorter; a lower bound, not a speed measurement.
            assertThat(forward).as("the span around a 200 ms spin").isGreaterThanOrEqualTo(190f);
        }
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.elapsedMillis(a, untimed));
        gpu.destroyEvent(a);
        gpu.destroyEvent(b);
        gpu.destroyEvent(untimed);
        gpu.destroyStream(s);
    }

    /** 21. A kernel and an increment on a new stream; destroying the stream returns; after a sync the count is 1. */
    @Test
    public void case21_destroyStreamWithPendingWork() {
        DevicePtr count = gpu.alloc(4);
        gpu.copyH2D(new int[] {0}, count);
        Stream s = gpu.createStream();
        spin(300, s);
        addI32(count, 1, 1, s);
        gpu.destroyStream(s);
        gpu.synchronize();
        assertThat(readInts(count, 1)).containsExactly(1);
        gpu.free(count);
    }

    /** 22. Function "nope" NOT_FOUND; a garbage image INVALID_IMAGE; bad PTX (a header, a broken body) INVALID_PTX. */
    @Test
    public void case22_moduleErrors() {
        assertCuda(CudaError.NOT_FOUND, () -> gpu.kernel(MODULE, "nope"));
        assertCuda(CudaError.INVALID_IMAGE, () -> gpu.loadModule("garbage", "garbage!".getBytes(StandardCharsets.US_ASCII)));
        assertCuda(CudaError.INVALID_PTX, () -> gpu.loadModule("bad", BROKEN_PTX.getBytes(StandardCharsets.US_ASCII)));
        assertStillWorks();
    }

    /** 23. Block 1025, block 1024x2, z 65, grid x 0, grid y 65536: INVALID_VALUE each; f NULL INVALID_HANDLE; then a sync works. */
    @Test
    public void case23_launchConfigErrors() {
        KernelHandle k = kernel("noop");
        LaunchConfig[] bad = {
                LaunchConfig.of(Dim3.of(1), Dim3.of(1025)),
                LaunchConfig.of(Dim3.of(1), Dim3.of(1024, 2)),
                LaunchConfig.of(Dim3.of(1), Dim3.of(1, 1, 65)),
                LaunchConfig.of(Dim3.of(0), Dim3.of(1)),
                LaunchConfig.of(Dim3.of(1, 65536), Dim3.of(1)),
        };
        for (LaunchConfig c : bad) {
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.launch(k, c, Stream.DEFAULT, args.clear()));
        }
        assertCuda(CudaError.INVALID_HANDLE, () -> gpu.launch(new KernelHandle(0), LaunchConfig.of(1, 1), Stream.DEFAULT, args.clear()));
        gpu.synchronize();
    }

    /** 24. Shared memory: 49152 works, 49153 INVALID_VALUE; opted in to 100000: 100000 works, 100001 INVALID_VALUE; opt-in of OPTIN+1 INVALID_VALUE. */
    @Test
    public void case24_sharedMemoryLimits() {
        KernelHandle k = kernel("noop");
        gpu.launch(k, LaunchConfig.of(1, 1).withSharedMem(49152), Stream.DEFAULT, args.clear());
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.launch(k, LaunchConfig.of(1, 1).withSharedMem(49153), Stream.DEFAULT, args.clear()));
        gpu.setMaxDynamicSharedMemory(k, 100_000);
        gpu.launch(k, LaunchConfig.of(1, 1).withSharedMem(100_000), Stream.DEFAULT, args.clear());
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.launch(k, LaunchConfig.of(1, 1).withSharedMem(100_001), Stream.DEFAULT, args.clear()));
        int optin = gpu.device().maxSharedPerBlockOptin();
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.setMaxDynamicSharedMemory(k, optin + 1));
        gpu.synchronize();
    }

    /** 25. Begin on legacy STREAM_CAPTURE_UNSUPPORTED; begin twice ILLEGAL_STATE; End on an idle stream ILLEGAL_STATE. */
    @Test
    public void case25_captureBeginEnd() {
        assertCuda(CudaError.STREAM_CAPTURE_UNSUPPORTED, () -> gpu.beginCapture(Stream.DEFAULT));
        Stream s = gpu.createStream();
        assertCuda(CudaError.ILLEGAL_STATE, () -> gpu.endCapture(s));
        gpu.beginCapture(s);
        assertCuda(CudaError.ILLEGAL_STATE, () -> gpu.beginCapture(s));
        gpu.destroyGraph(gpu.endCapture(s));
        gpu.destroyStream(s);
    }

    /** 26. While blocking s captures: legacy work and a sync H2D STREAM_CAPTURE_IMPLICIT, End INVALIDATED; with nb capturing, both work and End works. */
    @Test
    public void case26_legacyWorkDuringCapture() {
        DevicePtr p = gpu.alloc(64);
        Stream s = gpu.createStream(false);
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_IMPLICIT, () -> gpu.memsetAsync(p, 0, 64, Stream.DEFAULT));
        assertCuda(CudaError.STREAM_CAPTURE_IMPLICIT, () -> gpu.copyH2D(new byte[64], p));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));

        Stream nb = gpu.createStream(true);
        gpu.beginCapture(nb);
        gpu.memsetAsync(p, 0, 64, Stream.DEFAULT);
        gpu.copyH2D(new byte[64], p);
        GraphHandle g = gpu.endCapture(nb);
        gpu.destroyGraph(g);
        gpu.destroyStream(s);
        gpu.destroyStream(nb);
        gpu.free(p);
    }

    /** 27. Querying a captured event CAPTURED_EVENT; waiting on an outside event STREAM_CAPTURE_ISOLATION. */
    @Test
    public void case27_capturedAndOutsideEvents() {
        Stream s = gpu.createStream();
        Event inside = gpu.createEvent();
        gpu.beginCapture(s);
        gpu.recordEvent(inside, s);
        assertCuda(CudaError.CAPTURED_EVENT, () -> gpu.eventQuery(inside));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));

        Stream other = gpu.createStream();
        Event outside = gpu.createEvent();
        gpu.recordEvent(outside, other);
        gpu.beginCapture(s);
        assertCuda(CudaError.STREAM_CAPTURE_ISOLATION, () -> gpu.streamWaitEvent(s, outside));
        assertCuda(CudaError.STREAM_CAPTURE_INVALIDATED, () -> gpu.endCapture(s));
        gpu.destroyEvent(inside);
        gpu.destroyEvent(outside);
        gpu.destroyStream(s);
        gpu.destroyStream(other);
    }
}
