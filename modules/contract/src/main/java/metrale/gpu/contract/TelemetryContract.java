// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import metrale.gpu.DevicePtr;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.telemetry.Counters;
import metrale.telemetry.KernelLookup;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.OpKind;
import metrale.telemetry.TimingStats;
import metrale.telemetry.TraceEntry;
import org.junit.jupiter.api.Test;

/**
 * What the runtime tells: the launch trace (entries and the diff of two steps in the seed's
 * format), counters, device-to-host call sites, the kernel audit with the caller's site, and
 * kernel timing spans (counts only; values are never asserted).
 */
public abstract class TelemetryContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected TelemetryContract() {
    }

    /** Launches, async memsets and device-to-device copies are traced with their arguments as words. */
    @Test
    public void traceRecordsLaunchesMemsetsAndCopies() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(256);
        DevicePtr q = gpu.alloc(256);
        KernelHandle add = kernel("add_i32");
        LaunchTrace trace = gpu.telemetry().trace();
        trace.begin();
        gpu.launch(add, LaunchConfig.of(2, 32).withSharedMem(16), s, args.clear().ptr(p).i32(-3).i32(64));
        gpu.memsetAsync(q, 0xAB, 128, s);
        gpu.copyD2DAsync(p, q, 64, s);
        gpu.copyD2D(q, p, 32);
        List<TraceEntry> ops = trace.current();
        assertThat(trace.endAndDiff(10)).as("the first diff has nothing to compare").isEmpty();
        gpu.synchronize();

        assertThat(ops).hasSize(4);
        TraceEntry k = ops.get(0);
        assertThat(k.kind()).isEqualTo(OpKind.KERNEL);
        assertThat(k.func()).isEqualTo(add.value());
        assertThat(new int[] {k.gridX(), k.gridY(), k.gridZ(), k.blockX(), k.blockY(), k.blockZ(), k.sharedMemBytes()})
                .containsExactly(2, 1, 1, 32, 1, 1, 16);
        assertThat(k.args()).containsExactly(p.address(), 0xFFFF_FFFDL, 64L);
        assertThat(ops.get(1).kind()).isEqualTo(OpKind.MEMSET);
        assertThat(ops.get(1).args()).containsExactly(q.address(), 0xABL, 128L);
        assertThat(ops.get(2).kind()).isEqualTo(OpKind.D2D);
        assertThat(ops.get(2).args()).containsExactly(p.address(), q.address(), 64L);
        assertThat(ops.get(3).kind()).isEqualTo(OpKind.D2D);
        assertThat(ops.get(3).args()).containsExactly(q.address(), p.address(), 32L);
        gpu.destroyStream(s);
        gpu.free(p);
        gpu.free(q);
    }

    /** Nothing is traced before {@code begin()} or after {@code endAndDiff}. */
    @Test
    public void traceIsOffOutsideARegion() {
        DevicePtr p = gpu.alloc(64);
        LaunchTrace trace = gpu.telemetry().trace();
        assertThat(trace.on()).isFalse();
        addI32(p, 1, 16, Stream.DEFAULT);
        gpu.memsetAsync(p, 0, 64, Stream.DEFAULT);
        assertThat(trace.size()).isZero();
        trace.begin();
        addI32(p, 1, 16, Stream.DEFAULT);
        assertThat(trace.size()).isEqualTo(1);
        trace.endAndDiff(10);
        addI32(p, 1, 16, Stream.DEFAULT);
        assertThat(trace.size()).isZero();
        gpu.synchronize();
        gpu.free(p);
    }

    /** Two steps that differ in one argument diff to exactly that argument, in the seed's format. */
    @Test
    public void diffOfTwoStepsShowsExactlyTheChangedArgument() {
        DevicePtr p = gpu.alloc(256);
        DevicePtr q = gpu.alloc(256);
        Stream s = gpu.createStream();
        LaunchTrace trace = gpu.telemetry().trace();

        step(trace, p, q, s, 3, 0, 1);
        Optional<String> first = trace.endAndDiff(10);
        assertThat(first).isEmpty();
        step(trace, p, q, s, 3, 0, 1);
        assertThat(trace.endAndDiff(10)).contains("0 differing op(s) of 3\n");
        step(trace, p, q, s, 5, 0, 1);
        assertThat(trace.endAndDiff(10)).contains("1 differing op(s) of 3\n#0 contract::add_i32 [kernel] arg1 0x3 -> 0x5 (Δ 2)\n");
        step(trace, p, q, s, 5, 7, 1);
        assertThat(trace.endAndDiff(10)).hasValueSatisfying(r -> {
            assertThat(r).startsWith("1 differing op(s) of 3\n");
            assertThat(r).contains("#1 ").contains("[memset] arg1 0x0 -> 0x7 (Δ 7)\n");
            assertThat(r).doesNotContain("#0").doesNotContain("#2");
        });
        step(trace, p, q, s, 5, 7, 4);
        assertThat(trace.endAndDiff(10)).contains("1 differing op(s) of 3\n#2 contract::add_i32 [kernel] grid [1, 1, 1] -> [4, 1, 1]\n");
        gpu.synchronize();
        gpu.destroyStream(s);
        gpu.free(p);
        gpu.free(q);
    }

    private void step(LaunchTrace trace, DevicePtr p, DevicePtr q, Stream s, int add, int memsetValue, int grid) {
        trace.begin();
        addI32(p, add, 64, s);
        gpu.memsetAsync(q, memsetValue, 256, s);
        gpu.launch(kernel("add_i32"), LaunchConfig.of(grid, 32), s, args.clear().ptr(q).i32(1).i32(64));
    }

    /** A float argument's change prints as values, the integer beside it in the seed's hex form. */
    @Test
    public void diffPrintsAFloatArgumentAsItsValue() {
        DevicePtr x = gpu.alloc(256);
        DevicePtr y = gpu.alloc(256);
        LaunchTrace trace = gpu.telemetry().trace();
        for (float a : new float[] {2f, 3f}) {
            trace.begin();
            gpu.launch(kernel("axpy_f32"), LaunchConfig.of(1, 64), Stream.DEFAULT,
                    args.clear().f32(a).ptr(x).ptr(y).i32(a == 2f ? 64 : 32));
            if (a == 2f) {
                assertThat(trace.endAndDiff(10)).isEmpty();
            }
        }
        assertThat(trace.endAndDiff(10)).contains("1 differing op(s) of 1\n"
                + "#0 contract::axpy_f32 [kernel] arg0 2.0f -> 3.0f; arg3 0x40 -> 0x20 (Δ -32)\n");
        gpu.synchronize();
        gpu.free(x);
        gpu.free(y);
    }

    /** A changed op count and a changed pointer are reported. */
    @Test
    public void diffReportsOpCountAndPointerChanges() {
        DevicePtr a = gpu.alloc(256);
        DevicePtr b = gpu.alloc(256);
        LaunchTrace trace = gpu.telemetry().trace();
        trace.begin();
        addI32(a, 1, 64, Stream.DEFAULT);
        trace.endAndDiff(10);
        trace.begin();
        addI32(b, 1, 64, Stream.DEFAULT);
        noop(Stream.DEFAULT);
        String r = trace.endAndDiff(10).orElseThrow();
        long delta = b.address() - a.address();
        assertThat(r).startsWith("1 differing op(s) of 1\nOP COUNT differs: prev 1 vs cur 2\n");
        assertThat(r).contains("#0 contract::add_i32 [kernel] arg0 0x" + Long.toHexString(a.address()) + " -> 0x"
                + Long.toHexString(b.address()) + " (Δ " + delta + ")\n");
        gpu.synchronize();
        gpu.free(a);
        gpu.free(b);
    }

    /** Each launch is counted. */
    @Test
    public void launchesAreCounted() {
        Counters c = gpu.telemetry().counters();
        long before = c.launches();
        for (int i = 0; i < 5; i++) {
            noop(Stream.DEFAULT);
        }
        assertThat(c.launches() - before).isEqualTo(5);
        gpu.synchronize();
    }

    /** Every kind of copy is counted once, with its bytes, in its direction; a stream sync is counted. */
    @Test
    public void everyCopyKindIsCountedWithItsBytes() {
        Counters c = gpu.telemetry().counters();
        DevicePtr p = gpu.alloc(512);
        DevicePtr q = gpu.alloc(512);
        MemorySegment pinned = gpu.allocHostPinned(4096);
        Stream s = gpu.createStream();
        gpu.synchronize();
        long h2d = c.h2dCopies();
        long d2h = c.d2hCopies();
        long d2d = c.d2dCopies();
        long bh2d = c.bytesH2D();
        long bd2h = c.bytesD2H();
        long bd2d = c.bytesD2D();
        long syncs = c.streamSyncs();
        gpu.copyH2D(new byte[100], p);
        gpu.copyH2DAsyncRetained(pinned.asSlice(0, 104), p, s);
        gpu.copyD2H(p, new byte[101]);
        gpu.copyD2HAsync(p, pinned.asSlice(0, 103), s);
        gpu.copyD2D(p, q, 105);
        gpu.copyD2DAsync(p, q, 106, s);
        gpu.copyD2D2DAsync(p, 64, q, 64, 32, 4, s);
        gpu.synchronize(s);
        assertThat(c.h2dCopies() - h2d).as("H2D copies").isEqualTo(2);
        assertThat(c.bytesH2D() - bh2d).as("H2D bytes").isEqualTo(204);
        assertThat(c.d2hCopies() - d2h).as("D2H copies").isEqualTo(2);
        assertThat(c.bytesD2H() - bd2h).as("D2H bytes").isEqualTo(204);
        assertThat(c.d2dCopies() - d2d).as("D2D copies").isEqualTo(3);
        assertThat(c.bytesD2D() - bd2d).as("D2D bytes").isEqualTo(105 + 106 + 128);
        assertThat(c.streamSyncs() - syncs).as("stream syncs").isPositive();
        gpu.destroyStream(s);
        gpu.freeHostPinned(pinned);
        gpu.free(p);
        gpu.free(q);
    }

    /** With D2H tracing on, each blocking D2H is counted at the caller's site. */
    @Test
    public void d2hSitesNameTheCaller() {
        reopen(b -> b.d2hTrace(true));
        Counters c = gpu.telemetry().counters();
        assertThat(c.d2hSiteTrace()).isTrue();
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(new byte[64], p);
        String site = null;
        for (int i = 0; i < 3; i++) {
            gpu.copyD2H(p, new byte[64]); site = here();
        }
        gpu.copyD2H(p, new int[16]); String other = here();
        assertThat(c.d2hSites()).containsEntry(site, 3L).containsEntry(other, 1L);
        assertThat(c.d2hSiteReport(10)).contains(site).contains(other);
        gpu.free(p);
    }

    /** The kernel audit names the caller's site for found and missing kernels. */
    @Test
    public void kernelAuditNamesTheCallersSite() {
        gpu.kernel(MODULE, "axpy_f32"); String okSite = here();
        String failSite = null;
        try {
            failSite = here(); gpu.kernel(MODULE, "missing_kernel");
        } catch (metrale.gpu.GpuException expected) {
            // audited before the error
        }
        List<KernelLookup> rows = gpu.telemetry().audit().lookups();
        assertThat(rows).contains(new KernelLookup(MODULE, "axpy_f32", true, okSite, 1));
        assertThat(rows).contains(new KernelLookup(MODULE, "missing_kernel", false, failSite, 1));
        assertThat(gpu.telemetry().audit().report()).contains("FAILED").contains("contract::missing_kernel").contains(failSite);
    }

    /** With timing on, each launch adds one span to its kernel's stats, named module::func. */
    @Test
    public void timingCountsSpansPerKernel() {
        reopen(b -> b.timing(true));
        assertThat(gpu.telemetry().timing().enabled()).isTrue();
        for (int i = 0; i < 4; i++) {
            noop(Stream.DEFAULT);
        }
        DevicePtr p = gpu.alloc(64);
        addI32(p, 1, 16, Stream.DEFAULT);
        gpu.synchronize();
        TimingStats noop = gpu.telemetry().timing().stats().get("contract::noop");
        assertThat(noop).isNotNull();
        assertThat(noop.count()).isEqualTo(4);
        assertThat(noop.minNanos()).isLessThanOrEqualTo(noop.maxNanos());
        assertThat(gpu.telemetry().timing().stats().get("contract::add_i32").count()).isEqualTo(1);
        assertThat(gpu.telemetry().timing().report()).contains("contract::noop");
        gpu.free(p);
    }

    /** With timing off, launches leave no spans. */
    @Test
    public void timingOffRecordsNothing() {
        reopen(b -> b.timing(false));
        noop(Stream.DEFAULT);
        gpu.synchronize();
        assertThat(gpu.telemetry().timing().stats()).isEmpty();
    }

    /** Each runtime built without a telemetry gets its own; one given to the builder is used. */
    @Test
    public void telemetryIsPerRuntimeOrGiven() {
        var shared = new metrale.telemetry.Telemetry();
        try (var other = open(b -> b.telemetry(shared))) {
            assertThat(other.telemetry()).isSameAs(shared);
            assertThat(gpu.telemetry()).isNotSameAs(shared);
            long before = shared.counters().launches();
            try (var a = new metrale.gpu.KernelArgs()) {
                other.launch(other.kernel(MODULE, "noop"), LaunchConfig.of(1, 1), Stream.DEFAULT, a);
            }
            other.synchronize();
            assertThat(shared.counters().launches() - before).isEqualTo(1);
        }
    }
}
