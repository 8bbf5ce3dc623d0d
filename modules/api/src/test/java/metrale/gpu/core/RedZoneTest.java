// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.here;
import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.Test;

/** Red zones: a pad after each buffer, found and named after an overflow, refilled by poison. */
class RedZoneTest {

    private static final String MODULE = "rt_redzone";

    /** A module image the runtime passes to the driver as it is: neither ELF nor fatbin. */
    private static final byte[] IMAGE = "scripted".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** {@return a driver whose kernel {@code poke} writes one byte at index n of buffer 0: one past the end for a buffer of n bytes} */
    private static ScriptedDriver driver() {
        return new ScriptedDriver().kernel(MODULE, "poke",
                (d, config, args) -> d.write(args[0] + (int) args[1], new byte[] {0x11}));
    }

    @Test
    void cleanPadsReportNothing() {
        try (Gpu gpu = scripted().redZoneBytes(64).open()) {
            DevicePtr p = gpu.alloc(256);
            gpu.memset(p, 0x5A, 256);
            assertThat(gpu.findRedzoneViolations()).isEmpty();
            assertThat(gpu.scanRedzones()).isZero();
            assertThat(gpu.liveBytes()).isEqualTo(256);
        }
    }

    @Test
    void overflowByAKernelWritingOnePastTheEndIsFound() {
        try (Gpu gpu = driver().builder().redZoneBytes(32).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, IMAGE);
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
        try (Gpu gpu = driver().builder().redZoneBytes(32).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule(MODULE, IMAGE);
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
        try (Gpu gpu = scripted().redZoneBytes(16).open()) {
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
        try (Gpu gpu = scripted().redZoneBytes(64).redZoneMinIndex(1).open()) {
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
        try (Gpu gpu = scripted().redZoneBytes(64).open()) {
            DevicePtr p = gpu.alloc(128);
            gpu.memset(p.plus(128), 0, 64);
            assertThat(gpu.scanRedzones()).isEqualTo(1);
            gpu.free(p);
            assertThat(gpu.scanRedzones()).isZero();
        }
    }

    @Test
    void redZonesOffReportNothing() {
        try (Gpu gpu = scripted().open()) {
            gpu.alloc(64);
            assertThat(gpu.scanRedzones()).isZero();
            assertThat(gpu.findRedzoneViolations()).isEmpty();
            gpu.poisonRedzones(0, Long.MAX_VALUE);
        }
    }
}
