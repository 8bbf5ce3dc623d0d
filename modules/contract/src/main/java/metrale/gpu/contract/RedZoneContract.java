// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.DevicePtr;
import metrale.gpu.LaunchConfig;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Red zones: a pad after each buffer from a creation index on, filled with a pattern; a kernel
 * that writes past its buffer is found by the scan, named with its allocation; poisoning refills
 * pads; with red zones off nothing is reported.
 */
public abstract class RedZoneContract extends GpuContract {

    /** Red-zone bytes after each buffer in these tests. */
    protected static final int PAD = 64;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected RedZoneContract() {
    }

    private void writePast(DevicePtr p, int n, int extra) {
        if (extra > 0) {
            assumeKernelsReachRedZones();
        }
        gpu.launch(kernel("write_past"), LaunchConfig.forElements(n + extra, 64), Stream.DEFAULT,
                args.clear().ptr(p).i32(n).i32(extra));
        gpu.synchronize();
    }

    /** With red zones off, a scan finds nothing and poisoning does nothing. */
    @Test
    public void offByDefault() {
        assertThat(gpu.options().redZoneBytes()).isZero();
        DevicePtr p = gpu.alloc(400);
        writePast(p, 100, 0);
        assertThat(gpu.scanRedzones()).isZero();
        assertThat(gpu.findRedzoneViolations()).isEmpty();
        gpu.poisonRedzones(0, Long.MAX_VALUE);
        gpu.free(p);
    }

    /** A buffer written only within its bounds has an intact red zone; the pad is not counted as live bytes. */
    @Test
    public void inBoundsWritesLeaveThePadIntact() {
        reopen(b -> b.redZoneBytes(PAD));
        DevicePtr p = gpu.alloc(400);
        assertThat(gpu.liveBytes()).isEqualTo(400);
        assertThat(gpu.liveAllocations().getFirst().bytes()).isEqualTo(400);
        writePast(p, 100, 0);
        gpu.copyH2D(floats(100, 1f), p);
        assertThat(gpu.scanRedzones()).isZero();
        assertThat(gpu.findRedzoneViolations()).isEmpty();
        gpu.free(p);
    }

    /** A kernel writing past the end is found and named: the allocation, its site, where and how much. */
    @Test
    public void writePastTheEndIsFoundAndNamed() {
        reopen(b -> b.redZoneBytes(PAD));
        DevicePtr ok = gpu.alloc(400);
        DevicePtr bad = gpu.alloc(400); String site = here();
        writePast(ok, 100, 0);
        writePast(bad, 100, 3);
        assertThat(readFloats(bad, 100)).as("the buffer itself").containsExactly(iotaFloats(100));
        assertThat(gpu.scanRedzones()).isEqualTo(1);
        List<RedZoneViolation> v = gpu.findRedzoneViolations();
        assertThat(v).singleElement().satisfies(r -> {
            Allocation a = r.allocation();
            assertThat(a.ptr()).isEqualTo(bad);
            assertThat(a.bytes()).isEqualTo(400);
            assertThat(a.site()).isEqualTo(site);
            assertThat(r.firstBadOffset()).isZero();
            assertThat(r.badBytes()).isBetween(1L, 12L);
            assertThat(r.spanBytes()).as("3 floats (101f, 102f, 103f) past the end").isEqualTo(12);
        });
        assertThat(v.getFirst().toString()).contains(site);
        gpu.free(ok);
        gpu.free(bad);
        assertThat(gpu.scanRedzones()).as("a freed buffer's red zone is forgotten").isZero();
    }

    /** A kernel given an interior pointer that writes past the buffer's end is found too. */
    @Test
    public void writePastThroughAnInteriorPointerIsFound() {
        reopen(b -> b.redZoneBytes(PAD));
        DevicePtr p = gpu.alloc(400);
        DevicePtr inner = p.plus(40);
        writePast(inner, 90, 2);
        assertThat(gpu.findRedzoneViolations()).singleElement().satisfies(r -> {
            assertThat(r.firstBadOffset()).isZero();
            assertThat(r.badBytes()).isBetween(1L, 8L);
            assertThat(r.spanBytes()).isEqualTo(8);
        });
        gpu.free(p);
    }

    /** Poisoning refills the pads of the given creation indices only. */
    @Test
    public void poisonRefillsTheGivenIndices() {
        reopen(b -> b.redZoneBytes(PAD));
        DevicePtr a = gpu.alloc(400);
        DevicePtr b = gpu.alloc(400);
        writePast(a, 100, 4);
        writePast(b, 100, 4);
        assertThat(gpu.scanRedzones()).isEqualTo(2);
        List<Allocation> live = gpu.liveAllocations();
        long ia = live.get(0).index();
        long ib = live.get(1).index();
        gpu.poisonRedzones(ia, ia + 1);
        assertThat(gpu.findRedzoneViolations()).extracting(r -> r.allocation().ptr()).containsExactly(b);
        gpu.poisonRedzones(ib, ib + 1);
        assertThat(gpu.scanRedzones()).isZero();
        gpu.free(a);
        gpu.free(b);
    }

    /**
     * Buffers created before the minimum index get no red zone (the driver is asked for their
     * size alone, and no pad is filled); those from it on do, and their overflows are found.
     */
    @Test
    @DriverAllocator("counts the bytes each cuMemAlloc asks for")
    public void minimumIndexSkipsEarlierBuffers() {
        reopen(b -> CountingDriver.over(b.redZoneBytes(PAD).redZoneMinIndex(2)));
        CountingDriver driver = CountingDriver.of(gpu);
        int allocsBefore = driver.allocSizes().size();
        long fillsBefore = driver.calls("memsetD8");
        DevicePtr first = gpu.alloc(400);
        DevicePtr second = gpu.alloc(400);
        DevicePtr third = gpu.alloc(400);
        List<Allocation> live = gpu.liveAllocations();
        List<Long> indices = live.stream().map(Allocation::index).toList();
        assertThat(indices).as("creation indices on both sides of the minimum").contains(2L).anyMatch(i -> i < 2);
        List<Long> asked = driver.allocSizes().subList(allocsBefore, allocsBefore + 3);
        for (int i = 0; i < 3; i++) {
            long index = live.get(i).index();
            assertThat(asked.get(i)).as("bytes asked of the driver for the buffer with index %d", index)
                    .isEqualTo(index >= 2 ? 400L + PAD : 400L);
        }
        long padded = indices.stream().filter(i -> i >= 2).count();
        assertThat(driver.calls("memsetD8") - fillsBefore).as("pad fills").isEqualTo(padded);
        writePast(first, 100, 0);
        writePast(third, 100, 2);
        assertThat(gpu.findRedzoneViolations()).extracting(r -> r.allocation().ptr()).containsExactly(third);
        gpu.free(first);
        gpu.free(second);
        gpu.free(third);
    }

    /** An overflow that starts inside the pad, not at its first byte, is reported where it starts. */
    @Test
    public void overflowInsideThePadIsReportedAtItsOffset() {
        reopen(b -> b.redZoneBytes(PAD));
        DevicePtr p = gpu.alloc(400);
        assumeKernelsReachRedZones();
        // Two floats of 1.0f (bytes 00 00 80 3f, none equal to the fill) at pad bytes 8..15.
        fill(p.plus(400 + 8), 1f, 2, Stream.DEFAULT);
        gpu.synchronize();
        assertThat(gpu.findRedzoneViolations()).singleElement().satisfies(r -> {
            assertThat(r.allocation().ptr()).isEqualTo(p);
            assertThat(r.firstBadOffset()).isEqualTo(8);
            assertThat(r.badBytes()).isEqualTo(8);
        });
        gpu.free(p);
    }

    /**
     * A pad longer than one read-back piece (the scan reads at most 1 MiB per driver call) has an
     * overflow found at its offset from the pad's start, past the first piece.
     */
    @Test
    public void overflowDeepInALargePadIsReportedAtItsOffset() {
        long bigPad = (1L << 20) + 4096;
        long at = (1L << 20) + 64;
        reopen(b -> b.redZoneBytes(bigPad));
        DevicePtr p = gpu.alloc(256);
        assumeKernelsReachRedZones();
        fill(p.plus(256 + at), 1f, 4, Stream.DEFAULT);
        gpu.synchronize();
        assertThat(gpu.findRedzoneViolations()).singleElement().satisfies(r -> {
            assertThat(r.firstBadOffset()).isEqualTo(at);
            assertThat(r.badBytes()).isEqualTo(16);
        });
        gpu.free(p);
    }

    /** Red zones do not change what a buffer holds or where copies land. */
    @Test
    public void redZonedBuffersBehaveLikeOthers() {
        reopen(b -> b.redZoneBytes(PAD));
        DevicePtr a = gpu.alloc(100);
        DevicePtr b = gpu.alloc(100);
        gpu.copyH2D(iota(25, 1), a);
        gpu.copyD2D(a, b, 100);
        assertThat(readInts(b, 25)).containsExactly(iota(25, 1));
        gpu.memset(a, 0, 100);
        assertThat(gpu.scanRedzones()).isZero();
        gpu.free(a);
        gpu.free(b);
    }

    private static float[] iotaFloats(int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = i + 1;
        }
        return f;
    }
}
