// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.MemInfo;
import org.junit.jupiter.api.Test;

class SimMemoryTest {

    @Test
    void allocZeroIsInvalidValueAndHugeIsOutOfMemoryNotSticky() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            fails(CudaError.INVALID_VALUE, () -> dev.memAlloc(0)).hasMessageContaining("cuMemAlloc_v2");
            fails(CudaError.OUT_OF_MEMORY, () -> dev.memAlloc(1L << 50))
                    .hasMessageContaining("bytes=" + (1L << 50)).hasMessageContaining("free");
            assertThat(dev.memAlloc(64)).isNotZero();
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void allocationsAreAlignedSeparatedByGapsAndNeverReused() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long a = dev.memAlloc(1);
            long b = dev.memAlloc(1000);
            assertThat(a % 256).isZero();
            assertThat(b % 256).isZero();
            assertThat(b - a).isGreaterThanOrEqualTo(SimDevice.ADDRESS_GAP);
            dev.memFree(a);
            long c = dev.memAlloc(1);
            assertThat(c).isNotEqualTo(a);
            // A pointer just past an allocation is in the gap: not a device address.
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(b + 1000, 0, 1)).hasMessageContaining("past the end");
        }
    }

    @Test
    void newMemoryHoldsTheGarbagePattern() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh(Map.of("sim.fill", "90")))) {
            long p = dev.memAlloc(16);
            byte[] host = new byte[16];
            dev.memcpyDtoH(MemorySegment.ofArray(host), p, 16);
            assertThat(host).containsOnly((byte) 90);
        }
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long p = dev.memAlloc(4);
            assertThat(SimTestSupport.readInts(dev, p, 1)[0]).isEqualTo(0xABABABAB);
        }
    }

    @Test
    void memFreeRules() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            dev.memFree(0);
            long p = dev.memAlloc(256);
            fails(CudaError.INVALID_VALUE, () -> dev.memFree(p + 16)).hasMessageContaining("interior");
            SimTestSupport.writeInts(dev, p, 42);
            assertThat(SimTestSupport.readInts(dev, p, 1)[0]).isEqualTo(42);
            dev.memFree(p);
            fails(CudaError.INVALID_VALUE, () -> dev.memFree(p)).hasMessageContaining("double free");
            fails(CudaError.INVALID_VALUE, () -> dev.memFree(0x1234_5600L)).hasMessageContaining("not a pointer");
            MemorySegment pinned = dev.memHostAlloc(64, 0);
            fails(CudaError.INVALID_VALUE, () -> dev.memFree(pinned.address())).hasMessageContaining("cuMemFreeHost");
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void memGetInfoMovesByExactBytesAndTotalIsFixed() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh(Map.of("sim.capacity", "1000000")))) {
            MemInfo before = dev.memGetInfo();
            assertThat(before.total()).isEqualTo(1_000_000);
            assertThat(before.free()).isEqualTo(1_000_000);
            long p = dev.memAlloc(300_000);
            assertThat(dev.memGetInfo()).isEqualTo(new MemInfo(700_000, 1_000_000));
            fails(CudaError.OUT_OF_MEMORY, () -> dev.memAlloc(700_001)).hasMessageContaining("free 700000 of 1000000");
            long q = dev.memAlloc(700_000);
            assertThat(dev.memGetInfo().free()).isZero();
            dev.memFree(p);
            dev.memFree(q);
            assertThat(dev.memGetInfo()).isEqualTo(before);
            assertThat(dev.deviceInfo().totalMemory()).isEqualTo(1_000_000);
        }
    }

    @Test
    void setCapacityMakesOutOfMemoryTestable() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            dev.simControls().setCapacity(4096);
            long p = dev.memAlloc(4096);
            fails(CudaError.OUT_OF_MEMORY, () -> dev.memAlloc(1));
            dev.memFree(p);
            assertThat(dev.memAlloc(1)).isNotZero();
        }
    }

    @Test
    void managedMemoryFlagsAndHostAccess() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            fails(CudaError.INVALID_VALUE, () -> dev.memAllocManaged(64, 0));
            fails(CudaError.INVALID_VALUE, () -> dev.memAllocManaged(64, 3));
            fails(CudaError.INVALID_VALUE, () -> dev.memAllocManaged(0, 1));
            long m = dev.memAllocManaged(64, 1);
            long free = dev.memGetInfo().free();
            assertThat(free).isEqualTo(dev.memGetInfo().total() - 64);
            // Unified addressing: the host writes through the pointer, a kernel adds, the host reads after a sync.
            MemorySegment host = MemorySegment.ofAddress(m).reinterpret(64);
            host.setAtIndex(ValueLayout.JAVA_INT, 0, 5);
            fx.add(0, m, 10, 1);
            dev.ctxSynchronize();
            assertThat(host.getAtIndex(ValueLayout.JAVA_INT, 0)).isEqualTo(15);
            dev.memsetD8(m, 1, 4);
            dev.ctxSynchronize();
            assertThat(host.getAtIndex(ValueLayout.JAVA_INT, 0)).isEqualTo(0x01010101);
            dev.memFree(m);
        }
    }

    @Test
    void pinnedMemoryRules() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            fails(CudaError.INVALID_VALUE, () -> dev.memHostAlloc(64, 8));
            assertThat(dev.memHostAlloc(0, 0)).isEqualTo(MemorySegment.NULL);
            MemorySegment h = dev.memHostAlloc(4096, 0);
            assertThat(h.byteSize()).isEqualTo(4096);
            assertThat(dev.memHostGetDevicePointer(h)).isEqualTo(h.address());
            assertThat(dev.memHostGetDevicePointer(h.asSlice(16))).isEqualTo(h.address() + 16);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment plain = arena.allocate(64);
                fails(CudaError.INVALID_VALUE, () -> dev.memHostGetDevicePointer(plain));
                fails(CudaError.INVALID_VALUE, () -> dev.memFreeHost(plain));
            }
            // A kernel writes through the device pointer; the host sees it after the sync.
            fx.fill(0, dev.memHostGetDevicePointer(h), 7, 4);
            dev.ctxSynchronize();
            assertThat(h.getAtIndex(ValueLayout.JAVA_INT, 3)).isEqualTo(7);
            fails(CudaError.INVALID_VALUE, () -> dev.memFreeHost(h.asSlice(8)));
            dev.memFreeHost(MemorySegment.NULL);
            dev.memFreeHost(h);
            fails(CudaError.INVALID_VALUE, () -> dev.memFreeHost(h));
            long d = dev.memAlloc(64);
            fails(CudaError.INVALID_VALUE, () -> dev.memFreeHost(MemorySegment.ofAddress(d)));
        }
    }

    @Test
    void copyAndMemsetRangesAreCheckedAtTheCallAndNotSticky() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); Arena arena = Arena.ofConfined()) {
            long p = dev.memAlloc(256);
            MemorySegment host = arena.allocate(512);
            fails(CudaError.INVALID_VALUE, () -> dev.memcpyHtoD(p, host, 257)).hasMessageContaining("1 bytes past the end");
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(p + 200, 0, 100));
            long q = dev.memAlloc(256);
            dev.memFree(q);
            fails(CudaError.INVALID_VALUE, () -> dev.memcpyDtoH(host, q, 16)).hasMessageContaining("freed");
            fails(CudaError.INVALID_VALUE, () -> dev.memcpyDtoDAsync(p, 0xdead_0000L, 16, 0));
            long s = dev.streamCreate(0);
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8Async(p, 0, 257, s));
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(p, 256, 1));
            fails(CudaError.INVALID_VALUE, () -> dev.memcpyHtoD(p, arena.allocate(8), 16)).hasMessageContaining("fewer than");
            // A count of 0 is a no-op, even with a bad pointer.
            dev.memcpyHtoD(0xdead_0000L, host, 0);
            dev.ctxSynchronize();
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    @Test
    void pitchedCopyKeepsRowsAndLeavesPaddingUntouched() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            int w = 48;
            int h = 8;
            long src = dev.memAlloc(64L * h);
            long dst = dev.memAlloc(128L * h);
            byte[] rows = new byte[64 * h];
            for (int i = 0; i < rows.length; i++) {
                rows[i] = (byte) i;
            }
            dev.memcpyHtoD(src, MemorySegment.ofArray(rows), rows.length);
            dev.memsetD8(dst, 0xEE, 128L * h);
            dev.memcpy2DAsync(dst, 128, src, 64, w, h, 0);
            byte[] out = new byte[128 * h];
            dev.memcpyDtoH(MemorySegment.ofArray(out), dst, out.length);
            for (int r = 0; r < h; r++) {
                for (int c = 0; c < 128; c++) {
                    byte expected = c < w ? (byte) (r * 64 + c) : (byte) 0xEE;
                    assertThat(out[r * 128 + c]).as("row %d col %d", r, c).isEqualTo(expected);
                }
            }
            fails(CudaError.INVALID_VALUE, () -> dev.memcpy2DAsync(dst, 128, src, 64, 65, h, 0));
            fails(CudaError.INVALID_VALUE, () -> dev.memcpy2DAsync(dst, 40, src, 64, w, h, 0));
            fails(CudaError.INVALID_VALUE, () -> dev.memcpy2DAsync(dst, 128, src, 64, w, h + 1, 0)).hasMessageContaining("source");
            dev.memcpy2DAsync(dst, 128, src, 64, w, 0, 0);
        }
    }

    @Test
    void aBadRangeIsExplainedWithItsDistances() {
        try (SimDevice dev = new SimDevice()) {
            long p = dev.memAlloc(256);
            long b = dev.memAlloc(1000);
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(p + 200, 0, 100)).hasMessageContaining("runs 44 bytes past the end of");
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(p + 255, 0, 2)).hasMessageContaining("runs 1 bytes past the end of");
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(b + 1024, 0, 1)).hasMessageContaining("lies 24 bytes past the end of");
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(b + 1000, 0, 1)).hasMessageContaining("lies 0 bytes past the end of");
            // 64 KiB: the simulator's gap between allocations.
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(b + 1000 + 64 * 1024, 0, 1))
                    .hasMessageContaining("is not in any live allocation").hasMessageNotContaining("past the end");
            long q = dev.memAlloc(64);
            dev.memFree(q);
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(q + 63, 0, 1)).hasMessageContaining("which was freed");
            fails(CudaError.INVALID_VALUE, () -> dev.memsetD8(q + 64, 0, 1)).hasMessageNotContaining("which was freed");
        }
    }

    @Test
    void closeReportsWhatWasStillLive() {
        SimDevice dev = new SimDevice();
        dev.memAlloc(64);
        dev.memAlloc(128);
        dev.memAllocManaged(64, 1);
        dev.memHostAlloc(4096, 0);
        dev.streamCreate(0);
        dev.eventCreate(0);
        assertThat(dev.simControls().liveAtClose()).as("before close").isEmpty();
        dev.close();
        assertThat(dev.simControls().liveAtClose()).containsExactly("2 device allocation(s)", "1 managed allocation(s)",
                "1 page-locked host allocation(s)", "1 stream(s)", "1 event(s)");
        SimDevice clean = new SimDevice();
        long p = clean.memAlloc(64);
        clean.memFree(p);
        clean.close();
        assertThat(clean.simControls().liveAtClose()).isEmpty();
    }
}
