// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.Test;

/**
 * The runtime's blocking copies of Java heap memory go through its staging buffers, pageable native
 * ones to the device and page-locked ones to the host: every array door and heap segments both ways, none for native memory, a capture or a copy past
 * 256 KiB, the buffers freed at close, and a staged copy's failure named as the runtime call.
 */
class HeapStagingTest {

    /** Copies to the device stage through a pageable native buffer, copies to the host through a page-locked one. */
    private static final boolean UP = true;
    private static final boolean DOWN = false;

    /** Asserts the host side of the last copies, in order: {@link #UP} a pageable native buffer, {@link #DOWN} a page-locked one. */
    private static void assertStaged(ScriptedDriver driver, boolean... toDevice) {
        List<Long> hosts = driver.syncCopyHosts();
        Set<Long> locked = driver.pageLocked();
        assertThat(hosts).hasSizeGreaterThanOrEqualTo(toDevice.length);
        List<Long> last = hosts.subList(hosts.size() - toDevice.length, hosts.size());
        for (int k = 0; k < toDevice.length; k++) {
            long h = last.get(k);
            assertThat(h).as("host side of copy %d of the last %d: native, not the heap", k, toDevice.length).isNotEqualTo(-1L);
            if (toDevice[k]) {
                assertThat(locked).as("a copy to the device stages through pageable memory").doesNotContain(h);
            } else {
                assertThat(locked).as("a copy to the host stages through page-locked memory").contains(h);
            }
        }
    }

    @Test
    void everyArrayDoorStagesThroughOneBufferBothWays() {
        ScriptedDriver driver = new ScriptedDriver();
        try (Gpu gpu = driver.open()) {
            DevicePtr p = gpu.alloc(1024);
            gpu.copyH2D(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, p);
            assertStaged(driver, UP);
            byte[] b = new byte[8];
            gpu.copyD2H(p, b);
            assertThat(b).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
            assertStaged(driver, DOWN);

            gpu.copyH2D(new int[] {-1, 7, Integer.MIN_VALUE}, p);
            assertStaged(driver, UP);
            int[] i = new int[3];
            gpu.copyD2H(p, i);
            assertThat(i).containsExactly(-1, 7, Integer.MIN_VALUE);
            assertStaged(driver, DOWN);

            gpu.copyH2D(new long[] {Long.MAX_VALUE, -2}, p);
            long[] l = new long[2];
            gpu.copyD2H(p, l);
            assertThat(l).containsExactly(Long.MAX_VALUE, -2);
            assertStaged(driver, UP, DOWN);

            gpu.copyH2D(new float[] {1.5f, Float.NaN}, p);
            float[] f = new float[2];
            gpu.copyD2H(p, f);
            assertThat(f).containsExactly(1.5f, Float.NaN);
            assertStaged(driver, UP, DOWN);

            gpu.copyH2D(new double[] {Math.E, -0.0}, p);
            double[] d = new double[2];
            gpu.copyD2H(p, d);
            assertThat(d).containsExactly(Math.E, -0.0);
            assertStaged(driver, UP, DOWN);

            byte[] whole = new byte[100];
            for (int k = 0; k < whole.length; k++) {
                whole[k] = (byte) k;
            }
            gpu.copyH2D(MemorySegment.ofArray(whole).asSlice(10, 50), p.plus(3));
            byte[] back = new byte[50];
            gpu.copyD2H(p.plus(3), MemorySegment.ofArray(new byte[70]).asSlice(20, 50));
            gpu.copyD2HOnStream(p.plus(3), MemorySegment.ofArray(back), Stream.DEFAULT);
            assertThat(back[0]).isEqualTo((byte) 10);
            assertThat(back[49]).isEqualTo((byte) 59);
            assertThat(driver.count("memHostAlloc")).as("one buffer for copies in turn").isEqualTo(1);
            assertThat(driver.count("memcpyDtoHAsync")).as("the stream form, through the buffer").isEqualTo(1);
            assertThat(gpu.telemetry().counters().h2dCopies()).isEqualTo(6);
            gpu.free(p);
        }
        assertThat(driver.count("memFreeHost")).as("freed at close").isEqualTo(1);
        assertThat(driver.calls().indexOf("memFreeHost")).isLessThan(driver.calls().indexOf("close"));
    }

    @Test
    void nativeMemoryLargeCopiesAndCapturesTakeTheDriversPath() {
        ScriptedDriver driver = new ScriptedDriver();
        try (Gpu gpu = driver.open(); Arena arena = Arena.ofConfined()) {
            DevicePtr p = gpu.alloc(1 << 20);
            MemorySegment nat = arena.allocate(4096);
            gpu.copyH2D(nat, p);
            gpu.copyD2H(p, nat);
            assertThat(driver.syncCopyHosts()).containsExactly(nat.address(), nat.address());
            gpu.copyH2D(new byte[(256 << 10) + 1], p);
            gpu.copyD2H(p, new byte[(256 << 10) + 1]);
            assertThat(driver.syncCopyHosts().subList(2, 4)).as("past 256 KiB: the heap segment itself").containsOnly(-1L);
            assertThat(driver.count("memHostAlloc")).isZero();

            Stream s = gpu.createStream(true);
            gpu.beginCapture(s);
            gpu.copyD2H(p, new byte[64]);
            assertThat(driver.count("memHostAlloc")).as("no cuMemHostAlloc while a capture is live").isZero();
            assertThat(driver.syncCopyHosts()).last().isEqualTo(-1L);
            gpu.copyH2D(new byte[64], p);
            assertStaged(driver, UP);
            gpu.destroyGraph(gpu.endCapture(s));
            gpu.copyD2H(p, new byte[64]);
            assertThat(driver.count("memHostAlloc")).isEqualTo(1);
            assertStaged(driver, DOWN);
            gpu.destroyStream(s);
            gpu.free(p);
        }
    }

    @Test
    void aFailedAllocationLeavesHeapCopiesOnTheDriversPath() {
        ScriptedDriver driver = new ScriptedDriver();
        try (Gpu gpu = driver.open()) {
            DevicePtr p = gpu.alloc(64);
            driver.failNext("memHostAlloc", CudaError.OUT_OF_MEMORY);
            gpu.copyH2D(new int[] {42}, p);
            int[] out = new int[1];
            gpu.copyD2H(p, out);
            assertThat(out).containsExactly(42);
            assertThat(driver.syncCopyHosts()).as("the copy to the device needs no page-locked buffer")
                    .hasSize(2).last().isEqualTo(-1L);
            assertThat(driver.syncCopyHosts().get(0)).as("the copy to the device, staged").isNotEqualTo(-1L)
                    .isNotIn(driver.pageLocked());
            assertThat(gpu.fault()).as("the failed allocation is no fault").isEmpty();
            gpu.free(p);
        }
        assertThat(driver.count("memFreeHost")).isZero();
    }

    @Test
    void aStagedCopysFailureNamesTheRuntimeCallAndLatches() {
        ScriptedDriver driver = new ScriptedDriver();
        try (Gpu gpu = driver.open()) {
            DevicePtr p = gpu.alloc(64);
            gpu.copyH2D(new byte[8], p);
            driver.failNext("memcpyHtoD", CudaError.ILLEGAL_ADDRESS);
            assertThatThrownBy(() -> gpu.copyH2D(new byte[8], p)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                assertThat(e.getMessage()).contains("copyH2D 8 B to 0x" + Long.toHexString(p.address()));
            });
            assertThat(gpu.fault()).isPresent();
            assertThatThrownBy(() -> gpu.copyD2H(p, new byte[8])).isInstanceOf(StickyFaultException.class);
        }
    }

    @Test
    void badRangesAreRefusedBeforeAnyStaging() {
        ScriptedDriver driver = new ScriptedDriver();
        try (Gpu gpu = driver.open()) {
            DevicePtr p = gpu.alloc(64);
            assertThatThrownBy(() -> gpu.copyH2D(new long[9], p)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                assertThat(e.operation()).isEqualTo("copyH2D");
                assertThat(e.getMessage()).contains("dst: ").contains("runs 8 byte(s) past its end").contains("nothing was copied");
            });
            assertThatThrownBy(() -> gpu.copyD2H(p.plus(60), new int[2])).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.operation()).isEqualTo("copyD2H");
                assertThat(e.getMessage()).contains("src: ");
            });
            assertThat(driver.count("memHostAlloc")).isZero();
            assertThat(driver.calls()).doesNotContain("memcpyHtoD", "memcpyDtoH");
            gpu.free(p);
        }
    }
}
