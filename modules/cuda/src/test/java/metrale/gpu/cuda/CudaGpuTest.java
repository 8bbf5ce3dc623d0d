// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The runtime core ({@link Gpu}) over the CUDA driver: red zones and the ledger against real kernels. */
@RequiresCuda
class CudaGpuTest {

    static Gpu gpu;
    static KernelHandle fillOverrun;
    static KernelHandle addOne;

    @BeforeAll
    static void open() {
        gpu = Gpu.builder().backend("cuda").redZoneBytes(256).open();
        gpu.loadModule("kernels", TestKernels.ptx("kernels"));
        fillOverrun = gpu.kernel("kernels", "fill_overrun");
        addOne = gpu.kernel("kernels", "add_one");
    }

    @AfterAll
    static void close() {
        if (gpu != null) {
            gpu.close();
        }
    }

    @Test
    void theCudaBackendIsChosen() {
        assertThat(gpu.backendName()).isEqualTo("cuda");
        assertThat(gpu.device().backend()).isEqualTo("cuda");
        assertThat(gpu.totalMemory()).isPositive();
    }

    @Test
    void aKernelWritingPastItsBufferIsFoundInTheRedZone() {
        int n = 1024;
        DevicePtr clean = gpu.alloc(4L * n);
        DevicePtr overrun = gpu.alloc(4L * n);
        try (KernelArgs args = new KernelArgs()) {
            assertThat(gpu.scanRedzones()).isZero();
            gpu.launch(fillOverrun, LaunchConfig.forElements(n, 256), Stream.DEFAULT, args.ptr(clean).i32(n).i32(0).i32(5));
            gpu.launch(fillOverrun, LaunchConfig.forElements(n + 4, 256), Stream.DEFAULT, args.clear().ptr(overrun).i32(n).i32(4).i32(7));
            gpu.synchronize();
            List<RedZoneViolation> bad = gpu.findRedzoneViolations();
            assertThat(bad).hasSize(1);
            assertThat(bad.get(0).allocation().ptr()).isEqualTo(overrun);
            assertThat(bad.get(0).firstBadOffset()).as("offset into the pad").isZero();
            assertThat(bad.get(0).badBytes()).isBetween(1L, 16L);
            assertThat(gpu.scanRedzones()).isEqualTo(1);
            int[] back = new int[n];
            gpu.copyD2H(clean, back);
            assertThat(back).containsOnly(5);
        } finally {
            gpu.free(clean);
            gpu.free(overrun);
        }
    }

    @Test
    void sixteenThreadsLeaveAnExactLedger() throws InterruptedException {
        int threads = 16, rounds = 25, n = 2048;
        int liveBefore = gpu.liveAllocCount();
        long bytesBefore = gpu.liveBytes();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        List<DevicePtr> kept = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            int id = t;
            Runnable body = () -> {
                try (KernelArgs args = new KernelArgs()) {
                    go.await();
                    Stream s = gpu.createStream(true);
                    int[] host = new int[n];
                    for (int r = 0; r < rounds; r++) {
                        DevicePtr p = gpu.alloc(4L * n + id);
                        java.util.Arrays.fill(host, r);
                        gpu.copyH2D(host, p);
                        gpu.launch(addOne, LaunchConfig.forElements(n, 128), s, args.clear().ptr(p).i32(n));
                        gpu.synchronize(s);
                        int[] back = new int[n];
                        gpu.copyD2H(p, back);
                        if (back[0] != r + 1 || back[n - 1] != r + 1) {
                            throw new AssertionError("thread " + id + " round " + r + ": " + back[0]);
                        }
                        if (r == rounds - 1) {
                            kept.add(p); // one live buffer per thread, freed after the ledger is checked
                        } else {
                            gpu.free(p);
                        }
                    }
                    gpu.destroyStream(s);
                } catch (Throwable e) {
                    failures.add(e);
                }
            };
            all.add(id % 2 == 0 ? Thread.ofVirtual().unstarted(body) : Thread.ofPlatform().unstarted(body));
        }
        all.forEach(Thread::start);
        go.countDown();
        for (Thread t : all) {
            t.join();
        }
        assertThat(failures).isEmpty();
        long expected = 0;
        for (int id = 0; id < threads; id++) {
            expected += 4L * n + id;
        }
        assertThat(gpu.liveAllocCount()).isEqualTo(liveBefore + threads);
        assertThat(gpu.liveBytes()).isEqualTo(bytesBefore + expected);
        assertThat(gpu.scanRedzones()).isZero();
        kept.forEach(gpu::free);
        assertThat(gpu.liveAllocCount()).isEqualTo(liveBefore);
        assertThat(gpu.liveBytes()).isEqualTo(bytesBefore);
    }

    @Test
    void heapCopiesOfEveryPrimitiveTypeRoundTrip() {
        DevicePtr p = gpu.alloc(8 * 100);
        try {
            double[] d = new double[100];
            for (int i = 0; i < d.length; i++) {
                d[i] = i * 0.5;
            }
            gpu.copyH2D(d, p);
            double[] back = new double[100];
            gpu.copyD2H(p, back);
            assertThat(back).containsExactly(d);
            MemorySegment pinned = gpu.allocHostPinned(800);
            try {
                gpu.copyD2HAsync(p, pinned, Stream.DEFAULT);
                gpu.synchronize(Stream.DEFAULT);
                assertThat(pinned.getAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE, 99)).isEqualTo(49.5);
            } finally {
                gpu.freeHostPinned(pinned);
            }
        } finally {
            gpu.free(p);
        }
    }
}
