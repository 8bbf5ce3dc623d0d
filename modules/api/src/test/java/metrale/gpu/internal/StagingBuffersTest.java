// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The staging buffers on their own, over the scripted driver: which copies they stage and through
 * how many driver calls, the slots' bitmask, allocation on first use and its refusal during a
 * capture or after a failure, a failed wait that retires its buffer, and close, with copies on
 * other threads, freeing every buffer exactly once.
 */
class StagingBuffersTest {

    private static final int KIB = 1024;

    private ScriptedDriver driver;
    private volatile boolean capturing;
    private StagingBuffers staging;
    private long dev;

    @BeforeEach
    void open() {
        driver = new ScriptedDriver();
        staging = new StagingBuffers(driver, () -> capturing, true);
        dev = driver.memAlloc(4L << 20);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed + (i >>> 16));
        }
        return b;
    }

    private void assertLastHostsPageLocked(int copies) {
        List<Long> hosts = driver.syncCopyHosts();
        Set<Long> locked = driver.pageLocked();
        assertThat(hosts.subList(hosts.size() - copies, hosts.size())).as("the host side of the staged copies")
                .allSatisfy(h -> assertThat(locked).contains(h));
    }

    @Test
    void aHeapCopyGoesThroughOneBufferAllocatedOnFirstUse() {
        byte[] src = pattern(1000, 1);
        assertThat(driver.count("memHostAlloc")).isZero();
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, src.length)).isTrue();
        assertThat(driver.count("memHostAlloc")).isEqualTo(1);
        assertThat(driver.count("memcpyHtoD")).isEqualTo(1);
        assertLastHostsPageLocked(1);
        assertThat(driver.read(dev, src.length)).containsExactly(src);

        byte[] again = pattern(1000, 2);
        assertThat(staging.copyH2D(MemorySegment.ofArray(again), dev + 8, again.length)).isTrue();
        assertThat(driver.count("memHostAlloc")).as("the buffer is kept").isEqualTo(1);
        assertThat(driver.read(dev + 8, again.length)).containsExactly(again);
        assertThat(staging.allocated()).isEqualTo(1);
    }

    @Test
    void aDeviceToHeapCopyComesBackThroughABuffer() {
        byte[] src = pattern(3000, 3);
        driver.write(dev + 100, src);
        byte[] out = new byte[3000];
        assertThat(staging.copyD2H(dev + 100, MemorySegment.ofArray(out), out.length)).isTrue();
        assertThat(out).containsExactly(src);
        assertThat(driver.count("memcpyDtoH")).isEqualTo(1);
        assertLastHostsPageLocked(1);

        int[] ints = new int[5];
        assertThat(staging.copyD2H(dev + 100, MemorySegment.ofArray(ints), 20)).isTrue();
        assertThat(ints[0]).isEqualTo((src[0] & 0xff) | (src[1] & 0xff) << 8 | (src[2] & 0xff) << 16 | src[3] << 24);
    }

    @Test
    void aCopyOfUpTo256KiBGoesIn64KiBChunksAndALargerOneIsNotStaged() {
        int n = 200 * KIB + 5;
        byte[] src = pattern(n, 4);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, n)).isTrue();
        assertThat(driver.count("memcpyHtoD")).as("64 + 64 + 64 + 8 KiB + 5").isEqualTo(4);
        assertLastHostsPageLocked(4);
        assertThat(driver.read(dev, n)).containsExactly(src);

        byte[] out = new byte[n];
        assertThat(staging.copyD2H(dev, MemorySegment.ofArray(out), n)).isTrue();
        assertThat(driver.count("memcpyDtoH")).isEqualTo(4);
        assertThat(out).containsExactly(src);

        byte[] full = pattern((int) StagingBuffers.MAX_STAGED, 5);
        assertThat(staging.copyH2D(MemorySegment.ofArray(full), dev, full.length)).isTrue();
        assertThat(driver.count("memcpyHtoD")).as("exactly 256 KiB: four chunks").isEqualTo(8);
        assertThat(driver.read(dev, full.length)).containsExactly(full);

        byte[] over = new byte[(int) StagingBuffers.MAX_STAGED + 1];
        assertThat(staging.copyH2D(MemorySegment.ofArray(over), dev, over.length)).isFalse();
        assertThat(staging.copyD2H(dev, MemorySegment.ofArray(over), over.length)).isFalse();
        assertThat(driver.count("memcpyHtoD")).as("nothing was copied").isEqualTo(8);
        assertThat(driver.count("memcpyDtoH")).isEqualTo(4);
        assertThat(driver.read(dev, full.length)).containsExactly(full);
    }

    @Test
    void aCopyOfNothingIsNotStaged() {
        assertThat(staging.copyH2D(MemorySegment.ofArray(new byte[0]), dev, 0)).isFalse();
        assertThat(staging.copyD2H(dev, MemorySegment.ofArray(new byte[0]), 0)).isFalse();
        assertThat(staging.copyD2HOnStream(dev, MemorySegment.ofArray(new byte[0]), 0, 0)).isFalse();
        assertThat(driver.count("memHostAlloc")).isZero();
        assertThat(driver.calls()).doesNotContain("memcpyHtoD", "memcpyDtoH", "memcpyDtoHAsync");
    }

    @Test
    void slotsAreTakenOnceEachUntilGivenBack() {
        Set<Integer> slots = new HashSet<>();
        for (int k = 0; k < StagingBuffers.COUNT; k++) {
            int i = staging.take();
            assertThat(i).isBetween(0, StagingBuffers.COUNT - 1);
            slots.add(i);
        }
        assertThat(slots).hasSize(StagingBuffers.COUNT);
        assertThat(staging.take()).as("every slot taken").isEqualTo(-1);
        byte[] src = pattern(64, 6);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 64)).as("no free buffer").isFalse();
        assertThat(staging.copyD2H(dev, MemorySegment.ofArray(src), 64)).isFalse();
        assertThat(driver.calls()).doesNotContain("memcpyHtoD", "memcpyDtoH", "memHostAlloc");
        staging.give(2);
        assertThat(staging.take()).isEqualTo(2);
        staging.give(2);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 64)).isTrue();
        assertThat(staging.take()).as("the copy gave slot 2 back").isEqualTo(2);
    }

    @Test
    void noBufferIsAllocatedDuringACaptureButOneHeldIsUsed() {
        capturing = true;
        byte[] src = pattern(128, 7);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 128)).isFalse();
        assertThat(driver.count("memHostAlloc")).isZero();
        assertThat(driver.count("memcpyHtoD")).isZero();
        assertThat(staging.take()).as("the slot was given back").isZero();
        staging.give(0);
        capturing = false;
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 128)).isTrue();
        assertThat(driver.count("memHostAlloc")).isEqualTo(1);
        capturing = true;
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 128)).as("a buffer held before the capture").isTrue();
        assertThat(driver.count("memHostAlloc")).isEqualTo(1);
    }

    /**
     * A capture's begin holds the allocation lock until the capture is registered: a copy that
     * needs a buffer meanwhile waits, then sees the capture and allocates nothing.
     */
    @Test
    void anAllocationWaitsForACaptureBeingBegunAndThenSeesIt() throws Exception {
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread beginner = new Thread(() -> {
            synchronized (staging.allocationLock()) {
                locked.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                capturing = true;
            }
        }, "beginner");
        beginner.start();
        assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
        AtomicReference<Boolean> staged = new AtomicReference<>();
        Thread copier = new Thread(() -> staged.set(staging.copyH2D(MemorySegment.ofArray(new byte[64]), dev, 64)), "copier");
        copier.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (copier.getState() != Thread.State.BLOCKED && copier.isAlive() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(copier.getState()).as("the copy waits for the begin").isEqualTo(Thread.State.BLOCKED);
        release.countDown();
        copier.join(10_000);
        beginner.join(10_000);
        assertThat(staged.get()).isFalse();
        assertThat(driver.count("memHostAlloc")).isZero();
    }

    @Test
    void aFailedAllocationStopsFurtherAllocations() {
        driver.failNext("memHostAlloc", CudaError.OUT_OF_MEMORY);
        byte[] src = pattern(128, 8);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 128)).isFalse();
        assertThat(staging.copyD2H(dev, MemorySegment.ofArray(src), 128)).isFalse();
        assertThat(driver.count("memHostAlloc")).as("not asked again").isEqualTo(1);
        assertThat(driver.count("memcpyHtoD")).isZero();
        assertThat(staging.allocated()).isZero();
        for (int k = 0; k < StagingBuffers.COUNT; k++) {
            assertThat(staging.take()).as("every slot was given back").isNotNegative();
        }
    }

    @Test
    void aFailedCopyGivesItsBufferBackAndThrowsTheDriversError() {
        driver.failNext("memcpyHtoD", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> staging.copyH2D(MemorySegment.ofArray(new byte[64]), dev, 64))
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        driver.failNext("memcpyDtoH", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> staging.copyD2H(dev, MemorySegment.ofArray(new byte[64]), 64))
                .isInstanceOf(GpuException.class);
        driver.failNext("memcpyDtoHAsync", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> staging.copyD2HOnStream(dev, MemorySegment.ofArray(new byte[64]), 64, 0))
                .isInstanceOf(GpuException.class);
        for (int k = 0; k < StagingBuffers.COUNT; k++) {
            assertThat(staging.take()).as("slot %d free", k).isNotNegative();
        }
    }

    @Test
    void theStreamFormWaitsForItsStreamAfterEachChunk() {
        long s = driver.streamCreate(1);
        int n = 130 * KIB;
        byte[] src = pattern(n, 9);
        driver.write(dev, src);
        byte[] out = new byte[n];
        assertThat(staging.copyD2HOnStream(dev, MemorySegment.ofArray(out), n, s)).isTrue();
        assertThat(out).containsExactly(src);
        assertThat(driver.count("memcpyDtoHAsync")).isEqualTo(3);
        assertThat(driver.count("streamSynchronize")).isEqualTo(3);
        List<String> calls = driver.calls();
        List<String> copies = calls.stream().filter(c -> c.equals("memcpyDtoHAsync") || c.equals("streamSynchronize")).toList();
        assertThat(copies).containsExactly("memcpyDtoHAsync", "streamSynchronize", "memcpyDtoHAsync", "streamSynchronize",
                "memcpyDtoHAsync", "streamSynchronize");
    }

    @Test
    void theStreamFormIsNotStagedWhileACaptureMayBeLive() {
        long s = driver.streamCreate(1);
        assertThat(staging.copyH2D(MemorySegment.ofArray(new byte[64]), dev, 64)).as("a buffer is held").isTrue();
        capturing = true;
        assertThat(staging.copyD2HOnStream(dev, MemorySegment.ofArray(new byte[64]), 64, s)).isFalse();
        assertThat(driver.calls()).doesNotContain("memcpyDtoHAsync", "streamSynchronize");
        capturing = false;
        assertThat(staging.copyD2HOnStream(dev, MemorySegment.ofArray(new byte[64]), 64, s)).isTrue();
    }

    @Test
    void aFailedWaitRetiresTheBufferUntilClose() {
        long s = driver.streamCreate(1);
        driver.failNext("streamSynchronize", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> staging.copyD2HOnStream(dev, MemorySegment.ofArray(new byte[64]), 64, s))
                .isInstanceOf(GpuException.class);
        List<Integer> taken = new ArrayList<>();
        for (int i; (i = staging.take()) >= 0; ) {
            taken.add(i);
        }
        assertThat(taken).as("the retired slot is never taken again").hasSize(StagingBuffers.COUNT - 1).doesNotContain(0);
        taken.forEach(staging::give);
        staging.close((what, step) -> step.run());
        assertThat(driver.count("memFreeHost")).as("the retired buffer, freed at close").isEqualTo(1);
        assertThat(driver.pageLocked()).isEmpty();
    }

    @Test
    void closeFreesEveryBufferOnceAndNothingIsStagedAfter() {
        int held = staging.take();
        byte[] src = pattern(64, 10);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 64)).isTrue();
        staging.give(held);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 64)).isTrue();
        assertThat(staging.allocated()).isEqualTo(2);
        List<String> steps = new ArrayList<>();
        staging.close((what, step) -> {
            steps.add(what);
            step.run();
        });
        assertThat(steps).containsExactly("cuMemFreeHost (staging buffer)", "cuMemFreeHost (staging buffer)");
        assertThat(driver.count("memFreeHost")).isEqualTo(2);
        assertThat(driver.pageLocked()).isEmpty();
        assertThat(staging.allocated()).isZero();
        assertThat(staging.take()).isEqualTo(-1);
        assertThat(staging.copyH2D(MemorySegment.ofArray(src), dev, 64)).isFalse();
        assertThat(staging.copyD2H(dev, MemorySegment.ofArray(src), 64)).isFalse();
        staging.close((what, step) -> step.run());
        assertThat(driver.count("memFreeHost")).as("close is idempotent").isEqualTo(2);
        assertThat(driver.count("memHostAlloc")).isEqualTo(2);
    }

    @Test
    void aBufferHeldAtCloseIsFreedWhenItsCopyGivesItBack() {
        int i = staging.take();
        assertThat(staging.buffer(i)).isNotNull();
        staging.close((what, step) -> step.run());
        assertThat(driver.count("memFreeHost")).as("held: not freed by close").isZero();
        staging.give(i);
        assertThat(driver.count("memFreeHost")).isEqualTo(1);
        assertThat(driver.pageLocked()).isEmpty();
        assertThat(staging.take()).isEqualTo(-1);
    }

    @Test
    void aFailedFreeAtCloseIsReportedThroughTheStep() {
        int i = staging.take();
        staging.buffer(i);
        staging.give(i);
        driver.failNext("memFreeHost", CudaError.INVALID_VALUE);
        AtomicReference<RuntimeException> reported = new AtomicReference<>();
        staging.close((what, step) -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                reported.set(e);
            }
        });
        assertThat(reported.get()).isInstanceOf(GpuException.class);
    }

    /** Eight threads copy patterns of their own through four buffers: a buffer shared by two copies would mix them. */
    @Test
    void concurrentCopiesNeverShareABuffer() throws Exception {
        int threads = 8;
        int n = 70 * KIB;
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger staged = new AtomicInteger();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            long at = dev + (long) id * n;
            Thread th = new Thread(() -> {
                try {
                    start.await(10, TimeUnit.SECONDS);
                    for (int round = 0; round < 40; round++) {
                        byte[] src = pattern(n, id * 1000 + round);
                        if (staging.copyH2D(MemorySegment.ofArray(src), at, n)) {
                            staged.incrementAndGet();
                        } else {
                            driver.memcpyHtoD(at, MemorySegment.ofArray(src), n);
                        }
                        byte[] out = new byte[n];
                        if (!staging.copyD2H(at, MemorySegment.ofArray(out), n)) {
                            driver.memcpyDtoH(MemorySegment.ofArray(out), at, n);
                        }
                        assertThat(out).as("thread %d round %d", id, round).containsExactly(src);
                    }
                } catch (Throwable x) {
                    failure.compareAndSet(null, x);
                }
            }, "copier-" + t);
            th.start();
            all.add(th);
        }
        for (Thread th : all) {
            th.join(60_000);
        }
        assertThat(failure.get()).isNull();
        assertThat(staged.get()).isPositive();
        assertThat(driver.count("memHostAlloc")).isBetween(1, StagingBuffers.COUNT);
    }

    /** Copies on other threads while this one closes: every buffer allocated is freed exactly once. */
    @Test
    void closeRacingCopiesFreesEveryBufferExactlyOnce() throws Exception {
        int threads = 6;
        CountDownLatch running = new CountDownLatch(threads);
        AtomicBoolean closed = new AtomicBoolean();
        AtomicInteger after = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long at = dev + t * 4096L;
            Thread th = new Thread(() -> {
                byte[] src = pattern(4096, 11);
                try {
                    staging.copyH2D(MemorySegment.ofArray(src), at, 4096);
                    running.countDown();
                    for (int extra = 100; !closed.get() || extra-- > 0; ) {
                        boolean wasClosed = closed.get();
                        if (staging.copyH2D(MemorySegment.ofArray(src), at, 4096) && wasClosed) {
                            after.incrementAndGet();
                        }
                    }
                } catch (Throwable x) {
                    failure.compareAndSet(null, x);
                }
            }, "racer-" + t);
            th.start();
            all.add(th);
        }
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        staging.close((what, step) -> step.run());
        closed.set(true);
        for (Thread th : all) {
            th.join(60_000);
        }
        assertThat(failure.get()).isNull();
        assertThat(after.get()).as("copies staged once close had returned").isZero();
        assertThat(driver.count("memHostAlloc")).isPositive();
        assertThat(driver.count("memFreeHost")).as("each buffer freed once").isEqualTo(driver.count("memHostAlloc"));
        assertThat(driver.pageLocked()).isEmpty();
        assertThat(staging.allocated()).isZero();
    }

    @Test
    void pageableBuffersNeedNoDriverAllocationNotEvenDuringACaptureAndCloseFreesThem() {
        StagingBuffers uploads = new StagingBuffers(driver, () -> capturing, false);
        capturing = true;
        byte[] src = pattern(70 << 10, 9);
        assertThat(uploads.copyH2D(MemorySegment.ofArray(src), dev, src.length)).isTrue();
        assertThat(driver.read(dev, src.length)).containsExactly(src);
        byte[] back = new byte[src.length];
        assertThat(uploads.copyD2H(dev, MemorySegment.ofArray(back), back.length)).isTrue();
        assertThat(back).containsExactly(src);
        assertThat(driver.calls()).doesNotContain("memHostAlloc");
        List<Long> hosts = driver.syncCopyHosts();
        assertThat(hosts).as("two chunks each way, through one native buffer").hasSize(4).doesNotContain(-1L);
        assertThat(new HashSet<>(hosts)).hasSize(1);
        assertThat(driver.pageLocked()).isEmpty();
        assertThat(uploads.allocated()).isEqualTo(1);

        int held = uploads.take();
        uploads.close((what, step) -> step.run());
        assertThat(uploads.allocated()).as("a buffer held at close is freed when given back").isEqualTo(1);
        uploads.give(held);
        assertThat(uploads.allocated()).isZero();
        assertThat(driver.calls()).doesNotContain("memFreeHost");
        assertThat(uploads.copyH2D(MemorySegment.ofArray(src), dev, 64)).as("nothing staged after close").isFalse();
    }
}
