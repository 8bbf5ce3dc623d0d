// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.cuda.internal.CudaDevice;
import metrale.gpu.spi.MemInfo;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The CUDA driver SPI against a real device: memory, copies, launches of the test PTX, streams,
 * events, graphs, NVRTC, bad input and many threads. Runs on a GPU host only.
 */
@RequiresCuda
class CudaDriverTest {

    private static final int CU_EVENT_DISABLE_TIMING = 2;
    private static final int CU_MEMHOSTALLOC_DEVICEMAP = 2;

    static CudaDevice gpu;
    static long module;
    static long saxpy;
    static long addOne;
    static long spin;
    static long structArg;
    static long reverseBlock;

    @BeforeAll
    static void open() {
        gpu = TestKernels.open();
        module = gpu.moduleLoadData("kernels", TestKernels.ptx("kernels"));
        saxpy = gpu.moduleGetFunction(module, "saxpy");
        addOne = gpu.moduleGetFunction(module, "add_one");
        spin = gpu.moduleGetFunction(module, "spin");
        structArg = gpu.moduleGetFunction(module, "struct_arg");
        reverseBlock = gpu.moduleGetFunction(module, "reverse_block");
    }

    @AfterAll
    static void close() {
        if (gpu != null) {
            gpu.moduleUnload(module);
            gpu.close();
            assertThat(gpu.closeFailure()).isEmpty();
        }
    }

    private static GpuException expectError(CudaError error, String operation, ThrowingCallable call) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(call);
        assertThat(t).as("%s should fail with %s", operation, error).isInstanceOf(GpuException.class);
        GpuException e = (GpuException) t;
        assertThat(e.error()).as(e.getMessage()).isEqualTo(error);
        assertThat(e.rawCode()).isEqualTo(error.code());
        assertThat(e.operation()).isEqualTo(operation);
        return e;
    }

    private static int[] readInts(long ptr, int n) {
        int[] out = new int[n];
        gpu.memcpyDtoH(MemorySegment.ofArray(out), ptr, 4L * n);
        return out;
    }

    @Test
    void deviceInfoComesFromTheDriver() {
        var info = gpu.deviceInfo();
        assertThat(info.backend()).isEqualTo("cuda");
        assertThat(info.name()).isNotBlank();
        assertThat(info.smCount()).isPositive();
        assertThat(info.computeMajor()).isGreaterThanOrEqualTo(5);
        assertThat(info.maxSharedPerBlockOptin()).isGreaterThanOrEqualTo(48 * 1024);
        MemInfo m = gpu.memGetInfo();
        assertThat(m.total()).isEqualTo(info.totalMemory());
        assertThat(m.free()).isPositive().isLessThanOrEqualTo(m.total());
        System.out.println("device: " + info + ", driver CUDA " + metrale.gpu.cuda.internal.CudaBackend.driverVersion()
                + ", argument checks " + gpu.checksKernelArguments() + " (parameters counted by " + gpu.paramCountSource()
                + "), capture query " + gpu.supportsCaptureQuery());
    }

    @Test
    void heapAndNativeCopiesRoundTripThroughTheDevice() {
        // 20 MiB + 5 bytes: more than one staging chunk, and not a multiple of anything.
        int n = (20 << 20) + 5;
        byte[] src = new byte[n];
        new Random(42).nextBytes(src);
        long a = gpu.memAlloc(n);
        long b = gpu.memAlloc(n);
        try (Arena arena = Arena.ofConfined()) {
            gpu.memcpyHtoD(a, MemorySegment.ofArray(src), n);
            gpu.memcpyDtoD(b, a, n);
            MemorySegment back = arena.allocate(n);
            gpu.memcpyDtoH(back, b, n);
            assertThat(back.toArray(JAVA_BYTE)).isEqualTo(src);
            byte[] heapBack = new byte[n];
            gpu.memcpyDtoH(MemorySegment.ofArray(heapBack), a, n);
            assertThat(heapBack).isEqualTo(src);
        } finally {
            gpu.memFree(a);
            gpu.memFree(b);
        }
    }

    @Test
    void memsetAndAsyncCopiesThroughPinnedMemory() {
        long s = gpu.streamCreate(1);
        long p = gpu.memAlloc(4096);
        MemorySegment pinned = gpu.memHostAlloc(4096, 0);
        try {
            assertThat(pinned.byteSize()).isEqualTo(4096);
            gpu.memsetD8(p, 0xAB, 4096);
            gpu.memsetD8Async(p + 1024, 0x11, 1024, s);
            gpu.memcpyDtoHAsync(pinned, p, 4096, s);
            gpu.streamSynchronize(s);
            assertThat(pinned.get(JAVA_BYTE, 0)).isEqualTo((byte) 0xAB);
            assertThat(pinned.get(JAVA_BYTE, 1024)).isEqualTo((byte) 0x11);
            assertThat(pinned.get(JAVA_BYTE, 2047)).isEqualTo((byte) 0x11);
            assertThat(pinned.get(JAVA_BYTE, 2048)).isEqualTo((byte) 0xAB);
            pinned.fill((byte) 7);
            gpu.memcpyHtoDAsync(p, pinned, 4096, s);
            gpu.memcpyDtoDAsync(p + 2048, p, 16, s);
            gpu.streamSynchronize(s);
            byte[] back = new byte[4096];
            gpu.memcpyDtoH(MemorySegment.ofArray(back), p, 4096);
            for (byte v : back) {
                assertThat(v).isEqualTo((byte) 7);
            }
            // Under unified addressing the device pointer of pinned memory is its host address.
            assertThat(gpu.memHostGetDevicePointer(pinned)).isEqualTo(pinned.address());
        } finally {
            gpu.memFreeHost(pinned);
            gpu.memFree(p);
            gpu.streamDestroy(s);
        }
    }

    @Test
    void pitchedCopyMovesRowsAndLeavesPaddingAlone() {
        int width = 48, srcPitch = 64, dstPitch = 128, height = 8;
        byte[] src = new byte[srcPitch * height];
        for (int i = 0; i < src.length; i++) {
            src[i] = (byte) i;
        }
        long s = gpu.memAlloc(src.length);
        long d = gpu.memAlloc((long) dstPitch * height);
        try {
            gpu.memcpyHtoD(s, MemorySegment.ofArray(src), src.length);
            gpu.memsetD8(d, 0xEE, (long) dstPitch * height);
            gpu.memcpy2DAsync(d, dstPitch, s, srcPitch, width, height, 0);
            gpu.streamSynchronize(0);
            byte[] out = new byte[dstPitch * height];
            gpu.memcpyDtoH(MemorySegment.ofArray(out), d, out.length);
            for (int row = 0; row < height; row++) {
                for (int col = 0; col < dstPitch; col++) {
                    byte want = col < width ? src[row * srcPitch + col] : (byte) 0xEE;
                    assertThat(out[row * dstPitch + col]).as("row %d col %d", row, col).isEqualTo(want);
                }
            }
            // A width beyond either pitch is INVALID_VALUE; a height of 0 is a no-op.
            expectError(CudaError.INVALID_VALUE, "cuMemcpy2DAsync_v2", () -> gpu.memcpy2DAsync(d, dstPitch, s, srcPitch, 65, height, 0));
            expectError(CudaError.INVALID_VALUE, "cuMemcpy2DAsync_v2", () -> gpu.memcpy2DAsync(d, 40, s, srcPitch, width, height, 0));
            gpu.memcpy2DAsync(d, dstPitch, s, srcPitch, width, 0, 0);
            gpu.ctxSynchronize();
        } finally {
            gpu.memFree(s);
            gpu.memFree(d);
        }
    }

    @Test
    void saxpyComputesOnTheDevice() {
        int n = 10_000;
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i;
            y[i] = 1;
        }
        long dx = gpu.memAlloc(4L * n);
        long dy = gpu.memAlloc(4L * n);
        try (KernelArgs args = new KernelArgs()) {
            gpu.memcpyHtoD(dx, MemorySegment.ofArray(x), 4L * n);
            gpu.memcpyHtoD(dy, MemorySegment.ofArray(y), 4L * n);
            args.f32(2f).ptr(dx).ptr(dy).i32(n);
            gpu.launchKernel(saxpy, LaunchConfig.forElements(n, 256), 0, args);
            float[] out = new float[n];
            gpu.memcpyDtoH(MemorySegment.ofArray(out), dy, 4L * n);
            for (int i = 0; i < n; i++) {
                assertThat(out[i]).as("y[%d]", i).isEqualTo(2f * i + 1f);
            }
        } finally {
            gpu.memFree(dx);
            gpu.memFree(dy);
        }
    }

    @Test
    void aWrongArgumentListIsInvalidValueNotACrash() {
        CudaCondition.assumeCapability(gpu.checksKernelArguments(), "the driver lacks cuFuncGetParamInfo (CUDA < 12.4)");
        long p = gpu.memAlloc(4096);
        try (KernelArgs args = new KernelArgs()) {
            args.f32(1f).ptr(p).ptr(p);
            GpuException e = expectError(CudaError.INVALID_VALUE, "cuLaunchKernel",
                    () -> gpu.launchKernel(saxpy, LaunchConfig.of(1, 32), 0, args));
            assertThat(e.getMessage()).contains("takes 4 parameters, got 3");
            args.clear().f32(1f).ptr(p).ptr(p).i64(16);
            e = expectError(CudaError.INVALID_VALUE, "cuLaunchKernel",
                    () -> gpu.launchKernel(saxpy, LaunchConfig.of(1, 32), 0, args));
            assertThat(e.getMessage()).contains("parameter 3 is 4 bytes, got 8");
            args.clear();
            expectError(CudaError.INVALID_VALUE, "cuLaunchKernel", () -> gpu.launchKernel(addOne, LaunchConfig.of(1, 32), 0, args));
            // The right list still launches.
            gpu.memsetD8(p, 0, 4096);
            args.clear().ptr(p).i32(16);
            gpu.launchKernel(addOne, LaunchConfig.of(1, 32), 0, args);
            assertThat(readInts(p, 17)).startsWith(1, 1, 1).endsWith(1, 0);
        } finally {
            gpu.memFree(p);
        }
    }

    @Test
    void aStructPassesByValue() {
        long out = gpu.memAlloc(16);
        try (Arena arena = Arena.ofConfined(); KernelArgs args = new KernelArgs()) {
            MemorySegment triple = arena.allocate(16, 8);
            triple.set(JAVA_FLOAT.withOrder(ByteOrder.LITTLE_ENDIAN), 0, 40f);
            triple.set(JAVA_FLOAT.withOrder(ByteOrder.LITTLE_ENDIAN), 4, 2f);
            triple.set(JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN), 8, 0x1234_5678_9ABCL);
            args.bytes(triple).ptr(out);
            gpu.launchKernel(structArg, LaunchConfig.of(1, 1), 0, args);
            long[] back = new long[2];
            gpu.memcpyDtoH(MemorySegment.ofArray(back), out, 16);
            assertThat(back).containsExactly(42L, 0x1234_5678_9ABCL);
        } finally {
            gpu.memFree(out);
        }
    }

    @Test
    void dynamicSharedMemoryNeedsAnOptInAbove48KiB() {
        int blocks = 4, threads = 256;
        int[] data = new int[blocks * threads];
        for (int i = 0; i < data.length; i++) {
            data[i] = i;
        }
        long p = gpu.memAlloc(4L * data.length);
        try (KernelArgs args = new KernelArgs()) {
            gpu.memcpyHtoD(p, MemorySegment.ofArray(data), 4L * data.length);
            args.ptr(p);
            gpu.launchKernel(reverseBlock, new LaunchConfig(Dim3.of(blocks), Dim3.of(threads), 4 * threads), 0, args);
            int[] out = readInts(p, data.length);
            for (int b = 0; b < blocks; b++) {
                for (int t = 0; t < threads; t++) {
                    assertThat(out[b * threads + t]).isEqualTo(b * threads + threads - 1 - t);
                }
            }
            gpu.launchKernel(reverseBlock, new LaunchConfig(Dim3.of(blocks), Dim3.of(threads), 49152), 0, args);
            expectError(CudaError.INVALID_VALUE, "cuLaunchKernel",
                    () -> gpu.launchKernel(reverseBlock, new LaunchConfig(Dim3.of(blocks), Dim3.of(threads), 49153), 0, args));
            gpu.funcSetMaxDynamicSharedMemory(reverseBlock, 100_000);
            gpu.launchKernel(reverseBlock, new LaunchConfig(Dim3.of(blocks), Dim3.of(threads), 100_000), 0, args);
            expectError(CudaError.INVALID_VALUE, "cuLaunchKernel",
                    () -> gpu.launchKernel(reverseBlock, new LaunchConfig(Dim3.of(blocks), Dim3.of(threads), 100_001), 0, args));
            int optin = gpu.deviceInfo().maxSharedPerBlockOptin();
            expectError(CudaError.INVALID_VALUE, "cuFuncSetAttribute", () -> gpu.funcSetMaxDynamicSharedMemory(reverseBlock, optin + 1));
            gpu.ctxSynchronize();
            // Three reversals in all: the data is reversed once.
            assertThat(readInts(p, threads)[0]).isEqualTo(threads - 1);
        } finally {
            gpu.memFree(p);
        }
    }

    @Test
    void badInputIsAClearExceptionAndTheContextStaysUsable() {
        GpuException e = expectError(CudaError.INVALID_VALUE, "cuMemAlloc_v2", () -> gpu.memAlloc(0));
        assertThat(e.getMessage()).contains("cuMemAlloc_v2", "CUDA_ERROR_INVALID_VALUE", "bytesize=0", "driver: CUDA_ERROR_INVALID_VALUE");
        expectError(CudaError.OUT_OF_MEMORY, "cuMemAlloc_v2", () -> gpu.memAlloc(1L << 50));
        long p = gpu.memAlloc(256);
        try (KernelArgs args = new KernelArgs()) {
            expectError(CudaError.INVALID_VALUE, "cuMemFree_v2", () -> gpu.memFree(p + 16));
            expectError(CudaError.INVALID_VALUE, "cuMemcpyHtoD_v2", () -> gpu.memcpyHtoD(p, MemorySegment.ofArray(new byte[257]), 257));
            expectError(CudaError.INVALID_VALUE, "cuMemcpyHtoD_v2", () -> gpu.memcpyHtoD(p, MemorySegment.ofArray(new byte[8]), 16));
            expectError(CudaError.INVALID_VALUE, "cuMemsetD8_v2", () -> gpu.memsetD8(p + 200, 0, 100));
            expectError(CudaError.INVALID_VALUE, "cuMemsetD8_v2", () -> gpu.memsetD8(p, 256, 1));
            expectError(CudaError.INVALID_VALUE, "cuMemcpyHtoDAsync_v2",
                    () -> gpu.memcpyHtoDAsync(p, MemorySegment.ofArray(new byte[16]), 16, 0));
            expectError(CudaError.INVALID_VALUE, "cuStreamCreate", () -> gpu.streamCreate(2));
            expectError(CudaError.INVALID_VALUE, "cuEventCreate", () -> gpu.eventCreate(4));
            expectError(CudaError.INVALID_IMAGE, "cuModuleLoadData",
                    () -> gpu.moduleLoadData("garbage", "this is not a module".getBytes(StandardCharsets.US_ASCII)));
            String badPtx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken()\n{\n  bogus.instruction %r1;\n}\n";
            expectError(CudaError.INVALID_PTX, "cuModuleLoadData", () -> gpu.moduleLoadData("bad", badPtx.getBytes(StandardCharsets.US_ASCII)));
            expectError(CudaError.NOT_FOUND, "cuModuleGetFunction", () -> gpu.moduleGetFunction(module, "nope"));
            args.ptr(p).i32(4);
            for (LaunchConfig bad : List.of(LaunchConfig.of(1, 1025), new LaunchConfig(Dim3.of(1), Dim3.of(1024, 2), 0),
                    new LaunchConfig(Dim3.of(1), Dim3.of(1, 1, 65), 0), LaunchConfig.of(0, 32),
                    new LaunchConfig(Dim3.of(1, 65536), Dim3.of(32), 0))) {
                expectError(CudaError.INVALID_VALUE, "cuLaunchKernel", () -> gpu.launchKernel(addOne, bad, 0, args));
            }
            expectError(CudaError.INVALID_HANDLE, "cuLaunchKernel", () -> gpu.launchKernel(0, LaunchConfig.of(1, 1), 0, args));
            gpu.ctxSynchronize();
            assertThat(gpu.probe()).isEqualTo(CudaError.SUCCESS);
        } finally {
            gpu.memFree(p);
        }
    }

    @Test
    void streamsAndEventsOrderAndTimeWork() {
        long s1 = gpu.streamCreate(1);
        long s2 = gpu.streamCreate(1);
        long start = gpu.eventCreate(0);
        long end = gpu.eventCreate(0);
        long noTiming = gpu.eventCreate(CU_EVENT_DISABLE_TIMING);
        long done = gpu.memAlloc(4);
        try (KernelArgs args = new KernelArgs()) {
            gpu.memsetD8(done, 0, 4);
            gpu.ctxSynchronize();
            // A never-recorded event is complete; timing it is INVALID_HANDLE.
            assertThat(gpu.eventQuery(start)).isTrue();
            gpu.eventSynchronize(start);
            expectError(CudaError.INVALID_HANDLE, elapsedName(), () -> gpu.eventElapsedTime(start, end));
            gpu.eventRecord(start, s1);
            args.i64(300_000_000L).ptr(done);
            gpu.launchKernel(spin, LaunchConfig.of(1, 1), s1, args);
            gpu.eventRecord(end, s1);
            gpu.eventRecord(noTiming, s1);
            assertThat(gpu.streamQuery(s1)).as("a 300 ms kernel is still running").isFalse();
            assertThat(gpu.eventQuery(end)).isFalse();
            // s2 waits for s1's kernel: its copy of the flag sees 1.
            gpu.streamWaitEvent(s2, end, 0);
            MemorySegment flag = gpu.memHostAlloc(4, 0);
            try {
                gpu.memcpyDtoHAsync(flag, done, 4, s2);
                gpu.streamSynchronize(s2);
                assertThat(flag.get(JAVA_INT, 0)).isEqualTo(1);
            } finally {
                gpu.memFreeHost(flag);
            }
            gpu.eventSynchronize(end);
            assertThat(gpu.eventQuery(end)).isTrue();
            assertThat(gpu.streamQuery(s1)).isTrue();
            float ms = gpu.eventElapsedTime(start, end);
            assertThat(ms).isPositive();
            assertThat(gpu.eventElapsedTime(end, start)).isNegative();
            expectError(CudaError.INVALID_HANDLE, elapsedName(), () -> gpu.eventElapsedTime(start, noTiming));
        } finally {
            gpu.memFree(done);
            gpu.eventDestroy(start);
            gpu.eventDestroy(end);
            gpu.eventDestroy(noTiming);
            gpu.streamDestroy(s1);
            gpu.streamDestroy(s2);
        }
    }

    /** {@return the exported name this driver uses for cuEventElapsedTime: _v2 from CUDA 12.8 on} */
    private static String elapsedName() {
        return metrale.gpu.cuda.internal.CudaBackend.eventElapsedTimeFunction();
    }

    @Test
    void aCapturedGraphReplaysWithoutRunningDuringCapture() {
        int n = 1000;
        long s = gpu.streamCreate(1);
        long p = gpu.memAlloc(4L * n);
        try (KernelArgs args = new KernelArgs()) {
            gpu.memsetD8(p, 0, 4L * n);
            gpu.ctxSynchronize();
            CudaCondition.assumeCapability(gpu.supportsCaptureQuery(), "the driver lacks cuStreamIsCapturing");
            gpu.streamBeginCapture(s, 0);
            if (gpu.supportsCaptureQuery()) {
                assertThat(gpu.streamIsCapturing(s)).isEqualTo(1);
            }
            args.ptr(p).i32(n);
            gpu.launchKernel(addOne, LaunchConfig.forElements(n, 128), s, args);
            gpu.memsetD8Async(p + 4L * (n - 1), 0, 4, s);
            // The probe is safe inside a GLOBAL capture: it neither fails nor invalidates it.
            assertThat(gpu.probe()).isEqualTo(CudaError.SUCCESS);
            long graph = gpu.streamEndCapture(s);
            if (gpu.supportsCaptureQuery()) {
                assertThat(gpu.streamIsCapturing(s)).isZero();
            }
            assertThat(readInts(p, n)).as("captured work does not run").containsOnly(0);
            long exec = gpu.graphInstantiate(graph);
            for (int i = 0; i < 3; i++) {
                gpu.graphLaunch(exec, s);
            }
            gpu.streamSynchronize(s);
            int[] out = readInts(p, n);
            assertThat(out[0]).isEqualTo(3);
            assertThat(out[n - 2]).isEqualTo(3);
            assertThat(out[n - 1]).isZero();
            // Destroying the graph leaves the exec usable.
            gpu.graphDestroy(graph);
            gpu.graphLaunch(exec, s);
            gpu.streamSynchronize(s);
            assertThat(readInts(p, 1)[0]).isEqualTo(4);
            gpu.graphExecDestroy(exec);
        } finally {
            gpu.memFree(p);
            gpu.streamDestroy(s);
        }
    }

    @Test
    void captureRulesComeFromTheDriver() {
        long s = gpu.streamCreate(0);
        try {
            expectError(CudaError.STREAM_CAPTURE_UNSUPPORTED, "cuStreamBeginCapture_v2", () -> gpu.streamBeginCapture(0, 0));
            expectError(CudaError.ILLEGAL_STATE, "cuStreamEndCapture", () -> gpu.streamEndCapture(s));
            gpu.streamBeginCapture(s, 2);
            expectError(CudaError.ILLEGAL_STATE, "cuStreamBeginCapture_v2", () -> gpu.streamBeginCapture(s, 2));
            long empty = gpu.streamEndCapture(s);
            gpu.graphDestroy(empty);
        } finally {
            gpu.streamDestroy(s);
        }
    }

    @Test
    void nvrtcCompilesCudaCThatRuns() {
        String src = """
                extern "C" __global__ void times3(int* p, int n) {
                    int i = blockIdx.x * blockDim.x + threadIdx.x;
                    if (i < n) p[i] *= 3;
                }
                """;
        byte[] ptx;
        try {
            ptx = gpu.compileToPtx("times3.cu", src);
        } catch (GpuException e) {
            CudaCondition.assumeCapability(e.error() != CudaError.NOT_SUPPORTED, "NVRTC is not installed: " + e.getMessage());
            throw e;
        }
        assertThat(new String(ptx, StandardCharsets.US_ASCII)).contains(".entry times3").doesNotContain("\0");
        long m = gpu.moduleLoadData("times3", ptx);
        long f = gpu.moduleGetFunction(m, "times3");
        long p = gpu.memAlloc(400);
        try (KernelArgs args = new KernelArgs()) {
            int[] v = new int[100];
            for (int i = 0; i < v.length; i++) {
                v[i] = i;
            }
            gpu.memcpyHtoD(p, MemorySegment.ofArray(v), 400);
            gpu.launchKernel(f, LaunchConfig.of(1, 128), 0, args.ptr(p).i32(100));
            int[] out = readInts(p, 100);
            for (int i = 0; i < v.length; i++) {
                assertThat(out[i]).isEqualTo(3 * i);
            }
        } finally {
            gpu.memFree(p);
            gpu.moduleUnload(m);
        }
        GpuException e = expectError(CudaError.INVALID_SOURCE, "nvrtcCompileProgram",
                () -> gpu.compileToPtx("broken.cu", "extern \"C\" __global__ void k() { undeclared_thing(); }"));
        assertThat(e.getMessage()).contains("broken.cu", "undeclared_thing");
    }

    @Test
    void pinnedAndManagedMemoryAreVisibleToKernels() {
        MemorySegment pinned = gpu.memHostAlloc(4 * 64, CU_MEMHOSTALLOC_DEVICEMAP);
        long managed = gpu.memAllocManaged(4 * 64, 1);
        try (KernelArgs args = new KernelArgs()) {
            pinned.fill((byte) 0);
            long dp = gpu.memHostGetDevicePointer(pinned);
            gpu.launchKernel(addOne, LaunchConfig.of(1, 64), 0, args.ptr(dp).i32(64));
            gpu.ctxSynchronize();
            assertThat(pinned.getAtIndex(JAVA_INT, 63)).isEqualTo(1);
            MemorySegment host = MemorySegment.ofAddress(managed).reinterpret(4 * 64);
            host.fill((byte) 0);
            host.setAtIndex(JAVA_INT, 5, 41);
            gpu.launchKernel(addOne, LaunchConfig.of(1, 64), 0, args.clear().ptr(managed).i32(64));
            gpu.ctxSynchronize();
            assertThat(host.getAtIndex(JAVA_INT, 5)).isEqualTo(42);
            assertThat(host.getAtIndex(JAVA_INT, 6)).isEqualTo(1);
            expectError(CudaError.INVALID_VALUE, "cuMemHostAlloc", () -> gpu.memHostAlloc(64, 8));
            expectError(CudaError.INVALID_VALUE, "cuMemAllocManaged", () -> gpu.memAllocManaged(64, 0));
        } finally {
            gpu.memFree(managed);
            gpu.memFreeHost(pinned);
        }
    }

    @Test
    void sixteenThreadsPlatformAndVirtualShareTheDevice() throws InterruptedException {
        int threads = 16, rounds = 40, n = 4096;
        MemInfo before = gpu.memGetInfo();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Runnable body = () -> {
                try (KernelArgs args = new KernelArgs()) {
                    go.await();
                    long s = gpu.streamCreate(1);
                    int[] host = new int[n];
                    for (int r = 0; r < rounds; r++) {
                        long p = gpu.memAlloc(4L * n);
                        try {
                            java.util.Arrays.fill(host, id * 1000 + r);
                            gpu.memcpyHtoD(p, MemorySegment.ofArray(host), 4L * n);
                            // Give a virtual thread the chance to move to another carrier.
                            Thread.yield();
                            gpu.launchKernel(addOne, LaunchConfig.forElements(n, 256), s, args.clear().ptr(p).i32(n));
                            gpu.streamSynchronize(s);
                            int[] back = new int[n];
                            gpu.memcpyDtoH(MemorySegment.ofArray(back), p, 4L * n);
                            for (int v : back) {
                                if (v != id * 1000 + r + 1) {
                                    throw new AssertionError("thread " + id + " round " + r + " read " + v);
                                }
                            }
                        } finally {
                            gpu.memFree(p);
                        }
                    }
                    gpu.streamDestroy(s);
                } catch (Throwable e) {
                    failures.add(e);
                }
            };
            all.add(id % 2 == 0 ? Thread.ofVirtual().name("cuda-v" + id).unstarted(body)
                    : Thread.ofPlatform().name("cuda-p" + id).unstarted(body));
        }
        all.forEach(Thread::start);
        go.countDown();
        for (Thread t : all) {
            t.join();
        }
        assertThat(failures).isEmpty();
        MemInfo after = gpu.memGetInfo();
        assertThat(after.total()).isEqualTo(before.total());
    }

    @Test
    void aClosedDriverIsAClearErrorAndCloseIsIdempotent() {
        CudaDevice second = TestKernels.open();
        long p = second.memAlloc(64);
        second.memFree(p);
        second.close();
        second.close();
        assertThat(second.closeFailure()).isEmpty();
        GpuException e = expectError(CudaError.CONTEXT_IS_DESTROYED, "cuMemAlloc_v2", () -> second.memAlloc(64));
        assertThat(e.getMessage()).contains("closed");
        assertThat(second.probe()).isEqualTo(CudaError.CONTEXT_IS_DESTROYED);
        // The shared primary context lives on for the other driver, from this thread too.
        long q = gpu.memAlloc(64);
        gpu.memFree(q);
    }
}
