// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import metrale.gpu.sim.ByteView;
import metrale.gpu.sim.SimKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Red zones: a pad after each buffer, found and named after an overflow, refilled by poison. */
class RedZoneTest {

    private static final String MODULE = "rt_redzone";

    @BeforeAll
    static void kernels() {
        // Writes one byte at index n of buffer 0: one past the end for a buffer of n bytes.
        SimKernels.register(MODULE, "poke", l -> {
            ByteView b = l.bytesAt(0);
            int n = l.i32(1);
            l.forEachThread(t -> {
                if (t.globalX() == 0) {
                    b.set(n, (byte) 0x11);
                }
            });
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "poke");
    }

    @Test
    void cleanPadsReportNothing() {
        try (Gpu gpu = sim().redZoneBytes(64).open()) {
            DevicePtr p = gpu.alloc(256);
            gpu.memset(p, 0x5A, 256);
            assertThat(gpu.findRedzoneViolations()).isEmpty();
            assertThat(gpu.scanRedzones()).isZero();
            assertThat(gpu.liveBytes()).isEqualTo(256);
        }
    }

    @Test
    void overflowByMemsetIsFoundAndNamed() {
        try (Gpu gpu = sim().redZoneBytes(64).open();
             RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            DevicePtr ok = gpu.alloc(256);
            DevicePtr p = gpu.alloc(256); String site = here();
            gpu.memset(p.plus(250), 0, 10);
            assertThat(gpu.findRedzoneViolations()).singleElement().satisfies(v -> {
                assertThat(v.allocation().ptr()).isEqualTo(p);
                assertThat(v.allocation().site()).isEqualTo(site);
                assertThat(v.firstBadOffset()).isZero();
                assertThat(v.badBytes()).isEqualTo(4);
            });
            assertThat(gpu.scanRedzones()).isEqualTo(1);
            assertThat(log.warnings()).anySatisfy(m -> assertThat(m).contains(p.toString(), site, "red zone"));
            assertThat(gpu.liveAllocations()).hasSize(2);
            gpu.free(ok);
        }
    }

    @Test
    void overflowByAKernelWritingOnePastTheEndIsFound() {
        try (Gpu gpu = sim().redZoneBytes(32).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(100); String site = here();
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p).i32(100));
            gpu.synchronize(Stream.DEFAULT);
            RedZoneViolation v = gpu.findRedzoneViolations().getFirst();
            assertThat(v.allocation().site()).isEqualTo(site);
            assertThat(v.firstBadOffset()).isZero();
            assertThat(v.badBytes()).isEqualTo(1);
            assertThat(v.toString()).contains(p.toString(), site, "+100");
        }
    }

    /** Two bytes written 15 apart: the span is 16 though only 2 bytes differ from the pattern. */
    @Test
    void theReportIsTheSpanThatDiffersFromThePattern() {
        try (Gpu gpu = sim().redZoneBytes(32).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(100);
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p).i32(100));
            gpu.launch(gpu.kernel(MODULE, "poke"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p).i32(115));
            gpu.synchronize(Stream.DEFAULT);
            RedZoneViolation v = gpu.findRedzoneViolations().getFirst();
            assertThat(v.firstBadOffset()).isZero();
            assertThat(v.lastBadOffset()).isEqualTo(15);
            assertThat(v.badBytes()).isEqualTo(2);
            assertThat(v.spanBytes()).isEqualTo(16);
            assertThat(v.toString()).contains("overwritten: 16 byte(s), first at +100, last at +115 (2 of them differ");
        }
    }

    @Test
    void poisonRefillsOnlyTheGivenIndexRange() {
        try (Gpu gpu = sim().redZoneBytes(16).open()) {
            DevicePtr a = gpu.alloc(64);
            DevicePtr b = gpu.alloc(64);
            long ia = gpu.liveAllocations().get(0).index();
            long ib = gpu.liveAllocations().get(1).index();
            gpu.memset(a.plus(64), 1, 16);
            gpu.memset(b.plus(64), 1, 16);
            assertThat(gpu.scanRedzones()).isEqualTo(2);
            gpu.poisonRedzones(ia, ib);
            assertThat(gpu.findRedzoneViolations()).extracting(v -> v.allocation().ptr()).containsExactly(b);
            gpu.poisonRedzones(ib, ib + 1);
            assertThat(gpu.scanRedzones()).isZero();
        }
    }

    @Test
    void minIndexLeavesEarlierAllocationsUnpadded() {
        try (Gpu gpu = sim().redZoneBytes(64).redZoneMinIndex(1).open()) {
            DevicePtr first = gpu.alloc(256);
            DevicePtr second = gpu.alloc(256);
            // Unpadded: the byte after the buffer is not device memory this runtime owns.
            assertThatThrownBy(() -> gpu.memset(first.plus(256), 0, 1)).isInstanceOf(GpuException.class);
            gpu.memset(second.plus(256), 0, 1);
            assertThat(gpu.findRedzoneViolations()).extracting(v -> v.allocation().ptr()).containsExactly(second);
        }
    }

    @Test
    void freeForgetsTheRedZone() {
        try (Gpu gpu = sim().redZoneBytes(64).open()) {
            DevicePtr p = gpu.alloc(128);
            gpu.memset(p.plus(128), 0, 64);
            assertThat(gpu.scanRedzones()).isEqualTo(1);
            gpu.free(p);
            assertThat(gpu.scanRedzones()).isZero();
        }
    }

    @Test
    void redZonesOffReportNothing() {
        try (Gpu gpu = sim().open()) {
            gpu.alloc(64);
            assertThat(gpu.scanRedzones()).isZero();
            assertThat(gpu.findRedzoneViolations()).isEmpty();
            gpu.poisonRedzones(0, Long.MAX_VALUE);
        }
    }
}
