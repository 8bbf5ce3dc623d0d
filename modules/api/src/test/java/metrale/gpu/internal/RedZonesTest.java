// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.RedZoneViolation;
import org.junit.jupiter.api.Test;

/** Red-zone policy on its own, over the scripted driver: which index gets a pad, the fill and its wait, the scan in chunks, poison. */
class RedZonesTest {

    private final ScriptedDriver driver = new ScriptedDriver();

    /** A padded allocation of the driver, on the ledger's terms. */
    private Ledger.Entry entry(RedZones rz, long bytes, long index) {
        long pad = rz.padFor(index);
        long p = driver.memAlloc(bytes + pad);
        return new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, "S.java:" + index, index, false), pad);
    }

    @Test
    void padsStartAtTheMinimumIndex() {
        RedZones rz = new RedZones(64, 3);
        assertThat(rz.on()).isTrue();
        assertThat(rz.padFor(2)).isZero();
        assertThat(rz.padFor(3)).isEqualTo(64);
        assertThat(new RedZones(0, 0).on()).isFalse();
        assertThat(new RedZones(1, 0).on()).isTrue();
    }

    @Test
    void theFillCoversThePadOnlyAndIsWaitedForOnItsStream() {
        RedZones rz = new RedZones(64, 0);
        Ledger.Entry e = entry(rz, 100, 0);
        rz.fill(driver, e.base(), 100, 64, false);
        assertThat(driver.read(e.base() + 99, 1)).containsExactly(0);
        assertThat(driver.read(e.end(), 64)).containsOnly((byte) RedZones.FILL);
        assertThat(driver.calls()).containsSubsequence("memsetD8", "streamSynchronize");
        long s = driver.streamCreate(1);
        Ledger.Entry f = entry(rz, 100, 1);
        rz.fill(driver, f.base(), 100, 64, false, s);
        assertThat(driver.read(f.end(), 64)).containsOnly((byte) RedZones.FILL);
        assertThat(driver.calls().subList(driver.calls().size() - 2, driver.calls().size()))
                .containsExactly("memsetD8Async", "streamSynchronize");
        int syncs = driver.count("streamSynchronize");
        rz.fill(driver, f.base(), 100, 64, true, s);
        rz.fill(driver, f.base(), 100, 64, true);
        assertThat(driver.count("streamSynchronize")).as("not during a capture").isEqualTo(syncs);
        int sets = driver.count("memsetD8") + driver.count("memsetD8Async");
        rz.fill(driver, f.base(), 100, 0, false, s);
        assertThat(driver.count("memsetD8") + driver.count("memsetD8Async")).as("no pad, no fill").isEqualTo(sets);
    }

    @Test
    void theScanReadsLargePadsInChunksAndNamesTheSpan() {
        long pad = (1 << 20) + 100;
        RedZones rz = new RedZones(pad, 0);
        Ledger.Entry e = entry(rz, 64, 0);
        Ledger.Entry unpadded = new Ledger.Entry(new Allocation(new DevicePtr(driver.memAlloc(8)), 8, "U", 9, false), 0);
        rz.fill(driver, e.base(), 64, pad, false);
        driver.write(e.end() + 5, new byte[] {1});
        driver.write(e.end() + (1 << 20) + 50, new byte[] {2, 3});
        List<RedZoneViolation> found = rz.find(driver, List.of(unpadded, e), x -> true);
        assertThat(found).containsExactly(new RedZoneViolation(e.allocation(), 5, 3, (1 << 20) + 51));
        assertThat(driver.count("memcpyDtoH")).isEqualTo(2);
        rz.poison(driver, List.of(e), 0, 1, x -> true, false);
        assertThat(rz.find(driver, List.of(e), x -> true)).isEmpty();
    }

    @Test
    void aFailedReadOfAFreedEntryIsSkippedAndOfALiveOneThrown() {
        RedZones rz = new RedZones(16, 0);
        Ledger.Entry e = entry(rz, 16, 0);
        Ledger.Entry f = entry(rz, 16, 1);
        rz.fill(driver, e.base(), 16, 16, false);
        rz.fill(driver, f.base(), 16, 16, false);
        driver.write(f.end(), new byte[] {0});
        driver.failNext("memcpyDtoH", CudaError.INVALID_VALUE);
        assertThat(rz.find(driver, List.of(e, f), x -> x != e)).extracting(v -> v.allocation().index()).containsExactly(1L);
        driver.failNext("memcpyDtoH", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> rz.find(driver, List.of(e, f), x -> true)).isInstanceOf(GpuException.class);
    }

    @Test
    void poisonRefillsTheIndicesInRangeAndSkipsFreedEntriesThatFail() {
        RedZones rz = new RedZones(16, 0);
        Ledger.Entry a = entry(rz, 16, 4);
        Ledger.Entry b = entry(rz, 16, 5);
        Ledger.Entry none = new Ledger.Entry(new Allocation(new DevicePtr(driver.memAlloc(16)), 16, "N", 4, false), 0);
        rz.poison(driver, List.of(a, b, none), 4, 5, x -> true, false);
        assertThat(driver.read(a.end(), 16)).containsOnly((byte) RedZones.FILL);
        assertThat(driver.read(b.end(), 16)).as("index 5 is past the range").containsOnly(0);
        rz.poison(driver, List.of(a, b), 0, 4, x -> true, false);
        assertThat(driver.read(b.end(), 16)).containsOnly(0);
        rz.poison(driver, List.of(a, b), 5, 6, x -> true, true);
        assertThat(driver.read(b.end(), 16)).containsOnly((byte) RedZones.FILL);
        driver.failNext("memsetD8", CudaError.INVALID_VALUE);
        rz.poison(driver, List.of(a), 0, 10, x -> false, false);
        driver.failNext("memsetD8", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> rz.poison(driver, List.of(a), 0, 10, x -> true, false)).isInstanceOf(GpuException.class);
    }
}
