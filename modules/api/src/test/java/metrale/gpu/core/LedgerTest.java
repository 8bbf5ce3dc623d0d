// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.here;
import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.LeakDetection;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The allocation ledger through the runtime, over the scripted driver: sites, indices, the report, the free errors and the sweep. */
class LedgerTest {

    private static final long MIB = 1 << 20;

    private Gpu gpu;

    @BeforeEach
    void open() {
        gpu = scripted().open();
    }

    @AfterEach
    void close() {
        gpu.close();
    }

    @Test
    void recordsSizeSiteAndIndexOldestFirst() {
        DevicePtr a = gpu.alloc(1000); String siteA = here();
        DevicePtr b = gpu.allocManaged(24); String siteB = here();
        List<Allocation> live = gpu.liveAllocations();
        assertThat(live).hasSize(2);
        assertThat(live.get(0)).isEqualTo(new Allocation(a, 1000, siteA, live.get(0).index(), false));
        assertThat(live.get(1)).isEqualTo(new Allocation(b, 24, siteB, live.get(0).index() + 1, true));
        assertThat(gpu.liveBytes()).isEqualTo(1024);
        assertThat(gpu.liveAllocCount()).isEqualTo(2);
        gpu.free(a);
        assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(b);
        assertThat(gpu.liveBytes()).isEqualTo(24);
    }

    @Test
    void deviceBufferSiteIsTheCallerOfAllocBuffer() {
        try (DeviceBuffer buf = gpu.allocBuffer(64)) { String site = here();
            assertThat(gpu.liveAllocations()).singleElement().extracting(Allocation::site).isEqualTo(site);
            assertThat(buf.bytes()).isEqualTo(64);
        }
        assertThat(gpu.liveAllocCount()).isZero();
    }

    @Test
    void leakDetectionOffRecordsQuestionMark() {
        try (Gpu g = scripted().leakDetection(LeakDetection.OFF).open()) {
            g.alloc(16);
            assertThat(g.liveAllocations()).singleElement().extracting(Allocation::site).isEqualTo("?");
            assertThat(g.allocReport(10, 0)).contains("  ?");
        }
    }

    @Test
    void reportGroupsBySiteLargestFirstWithMibAndCount() {
        String small = null;
        for (int i = 0; i < 3; i++) {
            gpu.alloc(MIB + MIB / 2); small = here();
        }
        gpu.alloc(5 * MIB); String big = here();
        gpu.alloc(MIB / 10); String tiny = here();
        String report = gpu.allocReport(10, 0);
        assertThat(report).isEqualTo(
                "live device memory: 5 allocation(s), 9.6 MiB at 3 site(s)\n"
                        + "         5.0 MiB       1  " + big + "\n"
                        + "         4.5 MiB       3  " + small + "\n"
                        + "         0.1 MiB       1  " + tiny + "\n");
    }

    @Test
    void reportHonoursTopNAndMinMb() {
        gpu.alloc(3 * MIB); String three = here();
        gpu.alloc(2 * MIB); String two = here();
        gpu.alloc(MIB / 2);
        String top1 = gpu.allocReport(1, 0);
        assertThat(top1.lines().toList()).hasSize(3);
        assertThat(top1.lines().toList().get(1)).endsWith(three).contains("3.0 MiB");
        assertThat(top1.lines().toList().get(2)).isEqualTo("  ... 2 more site(s), 2.5 MiB");
        String min2 = gpu.allocReport(10, 2);
        assertThat(min2).contains(three, two).contains("... 1 more site(s), 0.5 MiB");
        assertThatThrownBy(() -> gpu.allocReport(-1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void doubleFreeIsInvalidValueNamingThePointerAndNothingChanges() {
        DevicePtr keep = gpu.alloc(256);
        DevicePtr p = gpu.alloc(256); String site = here();
        gpu.free(p);
        long free = gpu.deviceFreeMemory();
        assertThatThrownBy(() -> gpu.free(p))
                .isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                    assertThat(e.operation()).isEqualTo("free");
                    assertThat(e.getMessage()).contains(p.toString(), "already freed", site, "nothing was freed");
                });
        assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(keep);
        assertThat(gpu.deviceFreeMemory()).isEqualTo(free);
    }

    @Test
    void interiorFreeNamesTheAllocationAndItsSiteAndFreesNothing() {
        DevicePtr p = gpu.alloc(512); String site = here();
        gpu.copyH2D(new byte[] {7, 8, 9}, p);
        assertThatThrownBy(() -> gpu.free(p.plus(100)))
                .isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                    assertThat(e.getMessage()).contains(p.plus(100).toString(), "interior", "+100", p.toString(), site);
                });
        assertThat(gpu.liveAllocCount()).isEqualTo(1);
        byte[] back = new byte[3];
        gpu.copyD2H(p, back);
        assertThat(back).containsExactly(7, 8, 9);
    }

    @Test
    void unknownFreeIsInvalidValue() {
        DevicePtr p = gpu.alloc(64);
        DevicePtr bogus = new DevicePtr(0x1234_5000L);
        assertThatThrownBy(() -> gpu.free(bogus))
                .isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                    assertThat(e.getMessage()).contains("0x12345000", "not allocated by this runtime");
                });
        assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(p);
    }

    @Test
    void nullFreeIsANoOp() {
        gpu.free(DevicePtr.NULL);
        assertThatThrownBy(() -> gpu.free(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("ptr");
    }

    @Test
    void negativeSizeIsRejectedBeforeTheDriverAndZeroIsCudasInvalidValue() {
        assertThatThrownBy(() -> gpu.alloc(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> gpu.alloc(0))
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.fault()).isEmpty();
    }

    @Test
    void outOfMemoryNamesTheRequestAndTheDevicesMemory() {
        long tooMuch = gpu.totalMemory() * 2;
        assertThatThrownBy(() -> gpu.alloc(tooMuch))
                .isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
                    assertThat(e.getMessage()).contains("requested " + tooMuch + " bytes", "MiB free", "GiB total",
                            "LedgerTest.java:");
                });
        assertThat(gpu.fault()).isEmpty();
        assertThat(gpu.liveAllocCount()).as("the refused request left nothing on the ledger").isZero();
        DevicePtr p = gpu.alloc(64);
        assertThat(gpu.liveAllocations()).singleElement().satisfies(a -> {
            assertThat(a.ptr()).isEqualTo(p);
            assertThat(a.bytes()).isEqualTo(64);
        });
        gpu.copyH2D(new int[] {1, 2, 3}, p);
        int[] back = new int[3];
        gpu.copyD2H(p, back);
        assertThat(back).as("an allocation after the out-of-memory is usable").containsExactly(1, 2, 3);
        gpu.free(p);
    }

    @Test
    void sweepFreesEverythingOnTheLedger() {
        long before = gpu.deviceFreeMemory();
        List<DevicePtr> ps = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ps.add(gpu.alloc(MIB));
        }
        assertThat(gpu.deviceFreeMemory()).isLessThan(before);
        assertThat(gpu.sweepUnreleased()).isEqualTo(5);
        assertThat(gpu.liveAllocCount()).isZero();
        assertThat(gpu.liveBytes()).isZero();
        assertThat(gpu.deviceFreeMemory()).isEqualTo(before);
        assertThatThrownBy(() -> gpu.free(ps.get(0))).isInstanceOf(GpuException.class).hasMessageContaining("already freed");
    }

    @Test
    void aFreeNotAtABaseIsExplainedByWhereItPoints() {
        try (Gpu padded = scripted().redZoneBytes(64).open()) {
            DevicePtr p = padded.alloc(256);
            assertThatThrownBy(() -> padded.free(p.plus(255))).isInstanceOf(GpuException.class)
                    .hasMessageContaining("interior pointer, +255");
            assertThatThrownBy(() -> padded.free(p.plus(256))).isInstanceOf(GpuException.class)
                    .hasMessageContaining("points into the red zone after");
            assertThatThrownBy(() -> padded.free(p.plus(319))).isInstanceOf(GpuException.class)
                    .hasMessageContaining("points into the red zone after");
            assertThatThrownBy(() -> padded.free(p.plus(320))).isInstanceOf(GpuException.class)
                    .hasMessageContaining("was not allocated by this runtime");
            padded.free(p);
        }
        DevicePtr q = gpu.alloc(256);
        assertThatThrownBy(() -> gpu.free(q.plus(256))).isInstanceOf(GpuException.class)
                .hasMessageContaining("was not allocated by this runtime").hasMessageNotContaining("interior");
        gpu.free(q);
    }

    @Test
    void theReportListsASiteOfExactlyTheMinimumAndNoneForTopZero() {
        DevicePtr p = gpu.alloc(MIB); String site = here();
        assertThat(gpu.allocReport(10, 1)).contains(site);
        assertThat(gpu.allocReport(0, 0)).doesNotContain(site).contains("... 1 more site(s), 1.0 MiB");
        assertThatThrownBy(() -> gpu.allocReport(-1, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> gpu.allocReport(1, -2)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-2");
        gpu.free(p);
    }


    @Test
    void outOfMemoryGivesTheDevicesExactFreeAndTotalAndThePad() {
        try (Gpu small = new ScriptedDriver(2L << 30).builder().redZoneBytes(64).open()) {
            DevicePtr held = small.alloc(MIB);
            long tooMuch = 4L << 30;
            assertThatThrownBy(() -> small.alloc(tooMuch)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
                assertThat(e.getMessage()).contains("requested " + tooMuch + " bytes + 64 red-zone bytes at LedgerTest.java:",
                        "device reports 2047.0 MiB free / 2.0 GiB total", "1 live allocation(s) hold 1048576 bytes");
            });
            assertThatThrownBy(() -> small.allocManaged(tooMuch)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
                assertThat(e.getMessage()).contains("requested " + tooMuch + " bytes at").doesNotContain("red-zone");
            });
            assertThatThrownBy(() -> small.alloc(0)).as("size 0 goes to the driver unpadded")
                    .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
            assertThat(small.liveAllocations()).extracting(a -> a.ptr()).containsExactly(held);
            small.free(held);
        }
    }
}
