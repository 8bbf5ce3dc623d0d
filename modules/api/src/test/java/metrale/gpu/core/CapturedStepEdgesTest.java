// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LiveResource;
import metrale.gpu.StepOptions;
import metrale.gpu.StickyFaultException;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import metrale.gpu.spi.Driver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Captured steps where the driver or the region does what the contract's scenarios do not: graphs
 * without node access or with unexpected nodes, refused and failed node updates, failed captures,
 * nested steps, other ops and argument counts, the replay check's reach and its report.
 */
class CapturedStepEdgesTest {

    private static final String MODULE = CapturedStepTest.MODULE;
    private static final int N = 64;

    private ScriptedDriver driver;
    private Gpu gpu;
    private KernelArgs args;
    private Stream s;
    private DevicePtr p;
    private final List<String> reports = new ArrayList<>();

    @BeforeEach
    void open() {
        driver = CapturedStepTest.withKernels();
        gpu = driver.open();
        gpu.loadModule(MODULE, CapturedStepTest.IMAGE);
        args = new KernelArgs();
        s = gpu.createStream();
        p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
    }

    @AfterEach
    void close() {
        args.close();
        if (gpu.fault().isEmpty()) {
            gpu.sweepUnreleased();
        }
        gpu.close();
    }

    private StepOptions quiet() {
        return StepOptions.defaults().reporter(reports::add);
    }

    private void launch(String kernel, DevicePtr at, int v, int n, Stream st) {
        gpu.launch(gpu.kernel(MODULE, kernel), LaunchConfig.forElements(n, 128), st, args.clear().ptr(at).i32(v).i32(n));
    }

    private int[] readInts(DevicePtr at) {
        int[] out = new int[N];
        gpu.copyD2H(at, out);
        return out;
    }

    private long graphs() {
        return gpu.liveResources().stream().filter(r -> r.kind() == LiveResource.Kind.GRAPH).count();
    }

    @Test
    void aStepIsNamedAndClosingItReleasesItsGraphAndItsEntry() {
        CapturedStep step = gpu.capturedStep("named", (g, st) -> launch("add_i32", p, 1, N, st), quiet());
        assertThat(step.name()).isEqualTo("named");
        assertThat(step.toString()).isEqualTo("CapturedStep[named, EAGER]");
        step.run(s);
        step.run(s);
        assertThat(step.toString()).isEqualTo("CapturedStep[named, REPLAY]");
        assertThat(graphs()).isEqualTo(1);
        assertThat(gpu.liveResources()).extracting(LiveResource::kind).contains(LiveResource.Kind.CAPTURED_STEP);
        step.close();
        assertThat(graphs()).isZero();
        assertThat(gpu.liveResources()).extracting(LiveResource::kind).doesNotContain(LiveResource.Kind.CAPTURED_STEP);
        assertThatThrownBy(() -> step.runTraced(s)).isInstanceOf(IllegalStateException.class).hasMessageContaining("'named' is closed");
        assertThatThrownBy(() -> step.update(0, LaunchConfig.of(1, 1), args)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        gpu.free(p);
    }

    @Test
    void aTracedRunBeforeTheGraphIsAPlainRunAndCountsOnce() {
        try (CapturedStep step = gpu.capturedStep("traced", (g, st) -> launch("add_i32", p, 1, N, st), quiet().eagerRuns(2))) {
            assertThatThrownBy(() -> step.update(0, LaunchConfig.of(1, 64), args.clear().ptr(p).i32(1).i32(N)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("still in its eager runs");
            step.runTraced(s);
            step.runTraced(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            assertThatThrownBy(() -> step.update(0, LaunchConfig.of(1, 64), args.clear().ptr(p).i32(1).i32(N)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("a capture is due");
            step.runTraced(s);
            step.runTraced(s);
            gpu.synchronize(s);
            assertThat(readInts(p)).containsOnly(4);
            assertThat(step.stats()).isEqualTo(new CapturedStep.Stats(4, 3, 1, 0, 0, 0, 0, 1, 0, 0));
        }
        gpu.free(p);
    }

    @Test
    void aGraphWithoutNodeAccessIsReplayedButNotUpdatedInPlace() {
        driver.failNext("graphGetEdges", CudaError.NOT_SUPPORTED);
        int[] v = {1};
        try (CapturedStep step = gpu.capturedStep("opaque", (g, st) -> launch("add_i32", p, v[0], N, st), quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.inPlaceUnavailable()).get().asString().startsWith("the graph cannot be updated in place: ")
                    .contains("graphGetEdges");
            v[0] = 2;
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("only arguments changed, but the graph cannot be updated in place");
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
        }
        gpu.free(p);
    }

    @Test
    void aFailedNodeQueryOtherThanUnsupportedFailsTheCapture() {
        driver.failNext("graphGetNodes", CudaError.INVALID_VALUE);
        try (CapturedStep step = gpu.capturedStep("failing", (g, st) -> launch("add_i32", p, 1, N, st), quiet())) {
            step.run(s);
            assertThatThrownBy(() -> step.run(s)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        }
        gpu.free(p);
    }

    @Test
    void nodesOfAnotherTypeThanTheTracedOpsAreNotUpdatedInPlace() {
        driver.nodeType(Driver.NODE_MEMSET);
        try (CapturedStep step = gpu.capturedStep("types", (g, st) -> launch("add_i32", p, 1, N, st), quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.inPlaceUnavailable()).get().asString()
                    .isEqualTo("the graph cannot be updated in place: node 0 has type 2 where op #0 is a kernel");
        }
        gpu.free(p);
    }

    @Test
    void untracedWorkInTheRegionLeavesMoreNodesThanOps() {
        java.lang.foreign.MemorySegment host = gpu.allocHostPinned(16);
        try (CapturedStep step = gpu.capturedStep("host", (g, st) -> {
            launch("add_i32", p, 1, N, st);
            g.copyH2DAsyncRetained(host, p, st);
        }, quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.inPlaceUnavailable()).get().asString()
                    .contains("it has 2 node(s) for 1 traced op(s)");
        }
        gpu.freeHostPinned(host);
        gpu.free(p);
    }

    @Test
    void aRefusedInPlaceUpdateRecapturesAndAStickyOneIsThrown() {
        int[] v = {1};
        try (CapturedStep step = gpu.capturedStep("refused", (g, st) -> launch("add_i32", p, v[0], N, st), quiet())) {
            step.run(s);
            step.run(s);
            v[0] = 2;
            driver.failNext("graphExecKernelNodeSetParams", CudaError.INVALID_VALUE);
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("the driver refused the in-place update (")
                    .contains("the next run captures again");
            assertThat(step.stats().updates()).isZero();
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            v[0] = 3;
            driver.failNext("graphExecKernelNodeSetParams", CudaError.ILLEGAL_ADDRESS);
            assertThatThrownBy(() -> step.runTraced(s)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS));
        }
    }

    @Test
    void aFailedRecaptureDropsTheOldGraphAndTheNextRunCapturesAfresh() {
        int[] count = {1};
        try (CapturedStep step = gpu.capturedStep("recapture", (g, st) -> {
            for (int i = 0; i < count[0]; i++) {
                launch("add_i32", p, 1, N, st);
            }
        }, quiet().verifyEvery(1))) {
            step.run(s);
            step.run(s);
            count[0] = 2;
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            assertThat(graphs()).isEqualTo(1);
            driver.failNext("streamEndCapture", CudaError.STREAM_CAPTURE_INVALIDATED);
            assertThatThrownBy(() -> step.run(s)).isInstanceOf(GpuException.class);
            assertThat(graphs()).as("the old graph was dropped").isZero();
            assertThat(step.inPlaceUnavailable()).isEmpty();
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(graphs()).isEqualTo(1);
            count[0] = 3;
            step.run(s);
            step.run(s);
            assertThat(graphs()).as("a recapture of another topology replaces the graph").isEqualTo(1);
        }
    }

    @Test
    void anUnsteadyCaptureDropsItsGraph() {
        int[] k = {0};
        try (CapturedStep step = gpu.capturedStep("unsteady", (g, st) -> launch("add_i32", p, ++k[0], N, st), quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.EAGER);
            assertThat(graphs()).isZero();
        }
    }

    @Test
    void aRegionThatFaultsDuringTheCaptureKeepsTheFaultAndTheRefusalOfTheAbort() {
        boolean[] fault = {false};
        try (CapturedStep step = gpu.capturedStep("fault", (g, st) -> {
            launch("add_i32", p, 1, N, st);
            if (fault[0]) {
                driver.failNext("memsetD8Async", CudaError.ILLEGAL_ADDRESS);
                g.memsetAsync(p, 0, 4, st);
            }
        }, quiet())) {
            step.run(s);
            fault[0] = true;
            assertThatThrownBy(() -> step.run(s)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                assertThat(e.getSuppressed()).singleElement().isInstanceOf(StickyFaultException.class);
            });
        }
    }

    @Test
    void aStepRunInsideAnotherStepsRegionGivesTheOuterTraceBack() {
        DevicePtr q = gpu.alloc(4 * N);
        DevicePtr r = gpu.alloc(4 * N);
        CapturedStep inner = gpu.capturedStep("inner", (g, st) -> launch("add_i32", r, 1, N, st), quiet().eagerRuns(100));
        try (CapturedStep outer = gpu.capturedStep("outer", (g, st) -> {
            launch("add_i32", p, 1, N, st);
            inner.run(st);
            launch("add_i32", q, 1, N, st);
        }, quiet())) {
            outer.run(s);
            outer.run(s);
            assertThat(outer.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(outer.inPlaceUnavailable()).as("the inner op is in the graph, not in the outer trace").get().asString()
                    .contains("it has 3 node(s) for 2 traced op(s)");
        }
        inner.close();
    }

    @Test
    void anotherKernelOrArgumentCountIsAStructuralChange() {
        String[] kernel = {"add_i32"};
        boolean[] wide = {false};
        try (CapturedStep step = gpu.capturedStep("other", (g, st) -> {
            args.clear().ptr(p).i32(1).i32(N);
            if (wide[0]) {
                args.i32(0);
            }
            g.launch(g.kernel(MODULE, kernel[0]), LaunchConfig.forElements(N, 128), st, args);
        }, quiet())) {
            step.run(s);
            step.run(s);
            kernel[0] = "set_i32";
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString()
                    .contains("op #0 is another op (" + MODULE + "::add_i32 [kernel] -> " + MODULE + "::set_i32 [kernel])");
            step.run(s);
            step.run(s);
            wide[0] = true;
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("op #0 takes another argument count (3 -> 4)");
        }
    }

    @Test
    void theReplayCheckNamesEveryOpWhoseArgumentLiesInTheAllocationAndNoOther() {
        int[] host = {1};
        long end = p.address() + 4 * N;
        try (CapturedStep step = gpu.capturedStep("touch", (g, st) -> {
            launch("add_i32", p, host[0], N, st);
            g.launch(g.kernel(MODULE, "touch"), LaunchConfig.of(1, 1), st, args.clear().i64(end).i64(end - 1));
        }, quiet().checkReplay(true))) {
            step.run(s);
            step.run(s);
            host[0] = 5;
            driver.dropNext("graphExecKernelNodeSetParams");
            step.runTraced(s);
            assertThat(reports).singleElement().asString()
                    .contains("the node of op #0 " + MODULE + "::add_i32 [kernel] whose argument 0 names it, the node of op #1 "
                            + MODULE + "::touch [kernel] whose argument 1 names it")
                    .doesNotContain("whose argument 0 names it, the node of op #1 " + MODULE + "::touch [kernel] whose argument 0");
        }
    }

    @Test
    void theReplayCheckStaysOutOfMemoryTheGraphsOpsDidNotName() {
        DevicePtr q = gpu.alloc(4 * N);
        DevicePtr[] target = {p};
        try (CapturedStep step = gpu.capturedStep("moved", (g, st) -> launch("add_i32", target[0], 1, N, st),
                quiet().checkReplay(true))) {
            step.run(s);
            step.run(s);
            target[0] = q;
            step.runTraced(s);
            assertThat(reports).singleElement().asString().contains("updated 1 node(s) of the graph in place")
                    .doesNotContain("a replay of the graph").doesNotContain("captures again");
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
        }
        gpu.free(q);
    }

    @Test
    void theReplayCheckDoesNotRunWhenTheEagerRunNamedUnsavedMemoryEvenIfTheGraphIsStale() {
        DevicePtr q = gpu.alloc(4 * N);
        DevicePtr[] target = {p};
        try (CapturedStep step = gpu.capturedStep("stale", (g, st) -> launch("add_i32", target[0], 1, N, st),
                quiet().checkReplay(true))) {
            step.run(s);
            step.run(s);
            target[0] = q;
            driver.dropNext("graphExecKernelNodeSetParams");
            step.runTraced(s);
            assertThat(reports).singleElement().asString().doesNotContain("a replay of the graph");
        }
        gpu.free(q);
    }

    @Test
    void anExplicitUpdateOfWhatTheRegionNowEnqueuesLeavesNothingForTheNextVerification() {
        int[] host = {1};
        try (CapturedStep step = gpu.capturedStep("agrees", (g, st) -> launch("add_i32", p, host[0], N, st),
                quiet().throwOnMismatch(true))) {
            step.run(s);
            step.run(s);
            host[0] = 5;
            step.update(0, LaunchConfig.forElements(N, 128), args.clear().ptr(p).i32(5).i32(N));
            step.runTraced(s);
            assertThat(reports).as("the graph holds what the region enqueues").isEmpty();
            assertThat(step.stats().mismatches()).isZero();
            assertThat(step.stats().updates()).isEqualTo(1);
        }
    }

    @Test
    void anExplicitUpdateTheGraphDoesNotHoldIsFoundWhenTheTraceAgrees() {
        int[] host = {1};
        try (CapturedStep step = gpu.capturedStep("explicit", (g, st) -> launch("add_i32", p, host[0], N, st),
                quiet().checkReplay(true))) {
            step.run(s);
            step.run(s);
            host[0] = 5;
            driver.dropNext("graphExecKernelNodeSetParams");
            step.update(0, LaunchConfig.forElements(N, 128), args.clear().ptr(p).i32(5).i32(N));
            step.runTraced(s);
            assertThat(reports).singleElement().asString().contains("a replay of the graph leaves other bytes")
                    .contains("0 differing op(s) of 1 in the trace").contains("the next run captures again");
            assertThat(step.stats().mismatches()).isEqualTo(1);
            assertThat(step.stats().runs()).isEqualTo(3);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
        }
    }
}
