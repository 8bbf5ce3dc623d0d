// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import org.junit.jupiter.api.Test;

/**
 * The quarantine on its own, over the scripted driver: eviction oldest first past the limit, the
 * scan at admission (or at the first settle after a capture), flushes, a stream's flush, failed
 * releases and scans, and what it says of an address it holds.
 */
class QuarantineUnitTest {

    private final ScriptedDriver driver = new ScriptedDriver(64L << 20);
    private final List<Long> released = new ArrayList<>();

    private Quarantine.Held held(RedZones rz, long bytes, long index, long stream, boolean fill) {
        long pad = rz.padFor(index);
        long p = driver.memAlloc(bytes + pad);
        if (fill) {
            rz.fill(driver, p, bytes, pad, false);
        }
        Ledger.Entry e = new Ledger.Entry(new Allocation(new DevicePtr(p), bytes, "A.java:" + index, index, false), pad);
        return new Quarantine.Held(e, "F.java:" + index, stream, () -> {
            driver.memFree(p);
            released.add(p);
        });
    }

    @Test
    void onWithALimitOrRedZonesAndHoldingOnlyWithALimit() {
        assertThat(new Quarantine(driver, new RedZones(0, 0), 0).on()).isFalse();
        assertThat(new Quarantine(driver, new RedZones(0, 0), 1).on()).isTrue();
        assertThat(new Quarantine(driver, new RedZones(0, 0), 1).holds()).isTrue();
        assertThat(new Quarantine(driver, new RedZones(8, 0), 0).on()).isTrue();
        assertThat(new Quarantine(driver, new RedZones(8, 0), 0).holds()).isFalse();
    }

    @Test
    void theOldestAreGivenBackOncePastTheLimit() {
        RedZones rz = new RedZones(0, 0);
        Quarantine q = new Quarantine(driver, rz, 300);
        Quarantine.Held a = held(rz, 100, 0, -1, false);
        Quarantine.Held b = held(rz, 100, 1, -1, false);
        Quarantine.Held c = held(rz, 100, 2, -1, false);
        Quarantine.Held d = held(rz, 100, 3, -1, false);
        q.admit(a, false);
        q.admit(b, false);
        q.admit(c, false);
        assertThat(q.bytes()).as("exactly the limit is held").isEqualTo(300);
        assertThat(released).isEmpty();
        q.admit(d, false);
        assertThat(released).containsExactly(a.entry().base());
        assertThat(q.bytes()).isEqualTo(300);
        q.flush(false);
        assertThat(released).containsExactly(a.entry().base(), b.entry().base(), c.entry().base(), d.entry().base());
        assertThat(q.bytes()).isZero();
    }

    @Test
    void aPadIsScannedAtAdmissionAfterAContextSyncAndItsDamageKept() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 0, -1, true);
        driver.write(a.entry().end() + 3, new byte[] {0});
        q.admit(a, false);
        assertThat(driver.calls()).containsSubsequence("ctxSynchronize", "memcpyDtoH");
        assertThat(q.bytes()).as("pads count").isEqualTo(48);
        assertThat(q.violations()).singleElement().satisfies(v -> {
            assertThat(v.allocation()).isEqualTo(a.entry().allocation());
            assertThat(v.firstBadOffset()).isEqualTo(3);
        });
        int reads = driver.count("memcpyDtoH");
        q.settle(false);
        q.flush(true);
        assertThat(driver.count("memcpyDtoH")).as("scanned once").isEqualTo(reads);
        Quarantine.Held clean = held(rz, 32, 1, -1, true);
        q.admit(clean, false);
        assertThat(q.violations()).hasSize(1);
        Quarantine.Held unpadded = held(new RedZones(0, 0), 32, 2, -1, false);
        int syncs = driver.count("ctxSynchronize");
        q.admit(unpadded, false);
        assertThat(driver.count("ctxSynchronize")).as("nothing to scan").isEqualTo(syncs);
    }

    @Test
    void duringACaptureNothingIsScannedOrEvictedUntilTheNextSettle() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 10);
        Quarantine.Held a = held(rz, 32, 0, -1, true);
        driver.write(a.entry().end(), new byte[] {0});
        q.admit(a, true);
        assertThat(driver.count("memcpyDtoH")).isZero();
        assertThat(released).isEmpty();
        q.settle(true);
        assertThat(released).isEmpty();
        q.settle(false);
        assertThat(q.violations()).hasSize(1);
        assertThat(released).containsExactly(a.entry().base());
    }

    @Test
    void aFlushWithoutTheScanGivesBackUnscanned() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 0, -1, true);
        driver.write(a.entry().end(), new byte[] {0});
        q.admit(a, true);
        q.flush(false);
        assertThat(released).hasSize(1);
        assertThat(driver.count("memcpyDtoH")).isZero();
        assertThat(q.violations()).isEmpty();
        Quarantine.Held b = held(rz, 32, 1, -1, true);
        driver.write(b.entry().end(), new byte[] {0});
        q.admit(b, true);
        q.flush(true);
        assertThat(q.violations()).hasSize(1);
    }

    @Test
    void aFailedSyncKeepsTheRangeUnscannedForTheNextSettle() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 0, -1, true);
        driver.failNext("ctxSynchronize", CudaError.UNKNOWN);
        assertThatThrownBy(() -> q.admit(a, false)).isInstanceOf(GpuException.class);
        assertThat(q.bytes()).isEqualTo(48);
        driver.write(a.entry().end(), new byte[] {0});
        q.settle(false);
        assertThat(q.violations()).as("scanned at the next settle").hasSize(1);
        assertThat(released).isEmpty();
    }

    @Test
    void aPadThatCannotBeReadIsReportedOnceNamingTheRangeAndItLeavesTheQuarantine() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 7, -1, true);
        Quarantine.Held b = held(rz, 32, 8, -1, true);
        q.admit(b, true);
        driver.write(b.entry().end(), new byte[] {0});
        driver.failNext("memcpyDtoH", CudaError.INVALID_VALUE);
        q.admit(a, true);
        assertThatThrownBy(() -> q.settle(false)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.getMessage()).contains("red-zone scan at free", b.entry().allocation().ptr().toString(),
                    "32 B", "allocated at A.java:8", "freed at F.java:8", "16 pad bytes", "scripted failure",
                    "left the quarantine");
        });
        assertThat(released).as("the unreadable range went back").containsExactly(b.entry().base());
        assertThat(q.bytes()).as("the readable range is still held").isEqualTo(48);
        assertThat(q.violations()).isEmpty();
        // Reported once: later frees, settles and a stream's flush are unaffected.
        Quarantine.Held c = held(rz, 32, 9, -1, true);
        q.admit(c, false);
        q.settle(false);
        q.flushStream(-1, false);
        q.flush(true);
        assertThat(released).containsExactly(b.entry().base(), a.entry().base(), c.entry().base());
        assertThat(q.bytes()).isZero();
    }

    @Test
    void severalUnreadablePadsAreOneReportAndAFailedGiveBackIsKeptWithIt() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 1, -1, true);
        Quarantine.Held b = held(rz, 48, 2, -1, true);
        Quarantine.Held broken = new Quarantine.Held(b.entry(), b.freeSite(), -1, () -> {
            throw new GpuException(CudaError.INVALID_VALUE, "memFree", "scripted release failure");
        });
        q.admit(a, true);
        q.admit(broken, true);
        driver.failNext("memcpyDtoH", CudaError.INVALID_VALUE);
        driver.failNext("memcpyDtoH", CudaError.INVALID_VALUE);
        assertThatThrownBy(() -> q.settle(false)).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.getMessage()).contains("allocated at A.java:1", "freed at F.java:1", "1 more freed range(s) likewise");
            assertThat(e.getSuppressed()).singleElement().satisfies(x -> assertThat(x).hasMessageContaining("scripted release failure"));
        });
        assertThat(released).containsExactly(a.entry().base());
        assertThat(q.bytes()).isZero();
    }

    @Test
    void aStickyErrorWhileReadingLeavesEveryRangeUnscannedForTheNextSettle() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 1, -1, true);
        q.admit(a, true);
        driver.failNext("memcpyDtoH", CudaError.ILLEGAL_ADDRESS);
        assertThatThrownBy(() -> q.settle(false)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS));
        assertThat(released).isEmpty();
        assertThat(q.bytes()).isEqualTo(48);
    }

    @Test
    void atMostAThousandAndTwentyFourViolationsAreKept() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 0);
        for (int i = 0; i < 1025; i++) {
            Quarantine.Held h = held(rz, 16, i, -1, true);
            driver.write(h.entry().end(), new byte[] {0});
            q.admit(h, true);
        }
        q.settle(false);
        assertThat(q.violations()).hasSize(1024);
        assertThat(released).hasSize(1025);
    }

    @Test
    void aStreamsFlushGivesBackOnlyItsRangesAndScansThemFirst() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 0, 5, true);
        Quarantine.Held b = held(rz, 32, 1, 6, true);
        Quarantine.Held c = held(rz, 32, 2, 5, true);
        driver.write(c.entry().end(), new byte[] {0});
        q.admit(a, true);
        q.admit(b, true);
        q.admit(c, true);
        q.flushStream(5, false);
        assertThat(released).containsExactly(a.entry().base(), c.entry().base());
        assertThat(q.bytes()).isEqualTo(48);
        assertThat(q.violations()).as("scanned before the release").hasSize(1);
        q.flushStream(7, false);
        assertThat(released).hasSize(2);
        Quarantine.Held d = held(rz, 32, 3, 6, true);
        driver.write(d.entry().end(), new byte[] {0});
        q.admit(d, true);
        int reads = driver.count("memcpyDtoH");
        q.flushStream(6, true);
        assertThat(released).hasSize(4);
        assertThat(driver.count("memcpyDtoH")).as("during a capture: given back unscanned").isEqualTo(reads);
        q.settle(false);
        assertThat(driver.count("memcpyDtoH")).as("and not scanned later either").isEqualTo(reads);
        assertThat(q.violations()).hasSize(1);
        assertThat(q.bytes()).isZero();
    }

    @Test
    void aFailedReleaseIsThrownAfterTheRestAndATeardownStatusIsNoFailure() {
        RedZones rz = new RedZones(0, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        List<String> order = new ArrayList<>();
        Ledger.Entry e = new Ledger.Entry(new Allocation(new DevicePtr(0x10), 8, "s", 0, false), 0);
        q.admit(new Quarantine.Held(e, "f", 3, () -> {
            order.add("first");
            throw new GpuException(CudaError.INVALID_VALUE, "free", "one");
        }), false);
        q.admit(new Quarantine.Held(e, "f", 3, () -> {
            order.add("second");
            throw new GpuException(CudaError.LAUNCH_FAILED, "free", "two");
        }), false);
        q.admit(new Quarantine.Held(e, "f", 3, () -> {
            order.add("teardown");
            throw new GpuException(CudaError.DEINITIALIZED, "free", "gone");
        }), false);
        q.admit(new Quarantine.Held(e, "f", 3, () -> order.add("fine")), false);
        assertThatThrownBy(() -> q.flush(false)).isInstanceOfSatisfying(GpuException.class,
                x -> assertThat(x.error()).as("the first failure").isEqualTo(CudaError.INVALID_VALUE));
        assertThat(order).containsExactly("first", "second", "teardown", "fine");
        assertThat(q.bytes()).isZero();
        q.admit(new Quarantine.Held(e, "f", 3, () -> {
            throw new GpuException(CudaError.INVALID_VALUE, "free", "three");
        }), false);
        assertThatThrownBy(() -> q.flushStream(3, false)).isInstanceOf(GpuException.class);
        q.admit(new Quarantine.Held(e, "f", 3, () -> {
            throw new GpuException(CudaError.CONTEXT_IS_DESTROYED, "free", "gone");
        }), false);
        q.flushStream(3, false);
        Quarantine limited = new Quarantine(driver, rz, 4);
        assertThatThrownBy(() -> limited.admit(new Quarantine.Held(e, "f", 3, () -> {
            throw new GpuException(CudaError.INVALID_VALUE, "free", "evicted");
        }), false)).isInstanceOf(GpuException.class).hasMessageContaining("evicted");
    }

    @Test
    void heldMemoryRelievesAnOutOfMemoryOnlyWhenTheDeviceLacksIt() {
        RedZones rz = new RedZones(0, 0);
        Quarantine q = new Quarantine(driver, rz, 64L << 20);
        assertThat(q.mayRelieve(1)).as("nothing held").isFalse();
        q.admit(held(rz, 8L << 20, 0, -1, false), false);
        // 56 MiB free on the device, 8 MiB held: a request the held memory could complete is up to 48 MiB.
        assertThat(q.mayRelieve(1)).as("the device has room: not for want of memory").isFalse();
        assertThat(q.mayRelieve(48L << 20)).as("exactly enough free").isFalse();
        assertThat(q.mayRelieve((48L << 20) + 1)).isTrue();
        driver.failNext("memGetInfo", CudaError.UNKNOWN);
        assertThat(q.mayRelieve(1)).as("unknown: try").isTrue();
    }

    @Test
    void anAddressInAHeldRangeIsExplained() {
        RedZones rz = new RedZones(16, 0);
        Quarantine q = new Quarantine(driver, rz, 1 << 20);
        Quarantine.Held a = held(rz, 32, 0, -1, true);
        Quarantine.Held b = held(rz, 32, 1, -1, true);
        q.admit(a, false);
        q.admit(b, false);
        long p = b.entry().base();
        assertThat(q.explain(p + 40, 4)).isEqualTo("[0x" + Long.toHexString(p + 40) + ", +4) lies in freed memory (+40 into it):"
                + " it was " + b.entry().describe() + ", freed at F.java:1; it is held in the quarantine, not yet reused");
        assertThat(q.explain(p + 48, 4)).as("past the pad").isNull();
        assertThat(q.explain(p - 1, 4)).isNull();
        assertThat(q.explain(a.entry().base(), 1)).contains("(+0 into it)", "freed at F.java:0");
    }
}
