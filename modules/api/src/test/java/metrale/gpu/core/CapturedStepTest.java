// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CapturedStep;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StepMismatchException;
import metrale.gpu.StepOptions;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Captured steps over the scripted driver, whose captures record graph nodes that in-place updates
 * set: eager traced runs, then a graph replayed while the traces agree; argument-only changes
 * found by a verification run set in the graph in place, structural ones recaptured with the
 * launch trace's diff; a host value that should have been a device value found. The scenarios of
 * the contract suite's captured-step contract, run here beside the core.
 */
class CapturedStepTest {

    /** The module the kernels are loaded under, as the diffs name them. */
    static final String MODULE = "contract";

    /** A module image the runtime passes to the driver as it is. */
    static final byte[] IMAGE = "scripted".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private ScriptedDriver driver;
    private Gpu gpu;
    private KernelArgs args;

    /**
     * {@return a driver with {@code add_i32(p, v, n)} (adds v to the first n ints of p, one per
     * thread), {@code set_i32(p, v, n)} (sets them to v) and {@code touch(a, b)} (does nothing)}
     */
    static ScriptedDriver withKernels() {
        return new ScriptedDriver().kernel(MODULE, "add_i32", (d, config, a) -> ints(d, config, a, true))
                .kernel(MODULE, "set_i32", (d, config, a) -> ints(d, config, a, false))
                .kernel(MODULE, "touch", (d, config, a) -> { });
    }

    private static void ints(ScriptedDriver d, LaunchConfig config, long[] a, boolean add) {
        long threads = (long) config.grid().x() * config.block().x();
        int n = (int) Math.min((int) a[2], threads);
        for (int i = 0; i < n; i++) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(d.read(a[0] + 4L * i, 4)).order(java.nio.ByteOrder.nativeOrder());
            b.putInt(0, (add ? b.getInt(0) : 0) + (int) a[1]);
            d.write(a[0] + 4L * i, b.array());
        }
    }

    @BeforeEach
    void open() {
        driver = withKernels();
        gpu = driver.open();
        gpu.loadModule(MODULE, IMAGE);
        args = new KernelArgs();
    }

    @AfterEach
    void close() {
        args.close();
        assertThat(gpu.liveAllocCount()).as("the test freed what it allocated").isZero();
        gpu.close();
    }

    private KernelHandle kernel(String func) {
        return gpu.kernel(MODULE, func);
    }

    private void addI32(DevicePtr p, int v, int n, Stream stream) {
        gpu.launch(kernel("add_i32"), LaunchConfig.forElements(n, 128), stream, args.clear().ptr(p).i32(v).i32(n));
    }

    private int[] readInts(DevicePtr p, int n) {
        int[] out = new int[n];
        gpu.copyD2H(p, out);
        return out;
    }

    private byte[] readBytes(DevicePtr p, int n) {
        byte[] out = new byte[n];
        gpu.copyD2H(p, out);
        return out;
    }

    private static int[] ints(int n, int v) {
        int[] a = new int[n];
        java.util.Arrays.fill(a, v);
        return a;
    }

    private static int[] iota(int n, int base) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = base + i;
        }
        return a;
    }

    private static final int N = 64;

    private final List<String> reports = new ArrayList<>();

    private StepOptions quiet() {
        return StepOptions.defaults().reporter(reports::add);
    }

    /** A step whose trace does not change runs eagerly, is captured once, and then only replays; every run does the work once. */
    @Test
    void agreeingStepIsCapturedOnceAndReplayed() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        long launches0 = gpu.telemetry().counters().launches();
        try (CapturedStep step = gpu.capturedStep("agree", (g, st) -> {
            addI32(p, 1, N, st);
            addI32(p, 10, N, st);
            addI32(p, 100, N, st);
        }, quiet().eagerRuns(2))) {
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.EAGER);
            for (int i = 0; i < 10; i++) {
                step.run(s);
            }
            gpu.synchronize(s);
            assertThat(readInts(p, N)).containsOnly(10 * 111);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(step.stats()).isEqualTo(new CapturedStep.Stats(10, 2, 1, 7, 0, 0, 0, 0, 0, 0));
            assertThat(gpu.telemetry().counters().launches() - launches0)
                    .as("kernel launches: two eager runs and one capture; replays launch the graph").isEqualTo(9);
            assertThat(step.inPlaceUnavailable()).isEmpty();
            assertThat(step.lastDiff()).isEmpty();
            assertThat(reports).isEmpty();
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /**
     * The bug the step exists to find: a host value read by the region changes, replays repeat the
     * captured value, and the next verification run reports the argument that moved and sets the
     * graph's node in place.
     */
    @Test
    void verificationFindsAPlantedHostValue() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        int[] host = {1};
        try (CapturedStep step = gpu.capturedStep("planted", (g, st) -> {
            addI32(p, host[0], N, st);
        }, quiet().verifyEvery(4).throwOnMismatch(true))) {
            step.run(s);            // eager: +1
            step.run(s);            // capture: +1
            step.run(s);            // replay 1 of the verification interval: +1
            host[0] = 5;
            step.run(s);            // replay 2: still +1, the stale captured value
            step.run(s);            // replay 3: +1
            gpu.synchronize(s);
            assertThat(readInts(p, N)).as("replays repeat the captured value").containsOnly(5);
            StepMismatchException e = (StepMismatchException) assertThatThrownBy(() -> step.run(s))
                    .isInstanceOf(StepMismatchException.class).actual();
            assertThat(e.diff()).contains("verification run 6 differs from what the graph holds")
                    .contains("updated 1 node(s) of the graph in place")
                    .contains("1 differing op(s) of 1")
                    .contains("#0 " + MODULE + "::add_i32 [kernel] arg1 0x1 -> 0x5 (Δ 4)");
            step.run(s);            // replay of the updated graph: +5
            gpu.synchronize(s);
            assertThat(readInts(p, N)).as("the verification run ran eagerly (+5), the updated graph adds 5").containsOnly(15);
            CapturedStep.Stats st = step.stats();
            assertThat(st.updates()).isEqualTo(1);
            assertThat(st.recaptures()).isZero();
            assertThat(st.verifications()).isEqualTo(1);
            assertThat(st.mismatches()).isEqualTo(1);
            assertThat(reports).hasSize(1);
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /**
     * With the replay check, a verification run replays the graph from the state the eager run
     * started from: an in-place update the driver silently did not apply (the graph still adds the
     * old value) is reported naming the op and its pointer argument, the step recaptures, and the
     * run's effect on memory is the eager run's alone.
     */
    @Test
    void theReplayCheckFindsAnUpdateTheGraphDoesNotHold() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        int[] host = {1};
        try (CapturedStep step = gpu.capturedStep("dropped", (g, st) -> addI32(p, host[0], N, st),
                quiet().checkReplay(true))) {
            step.run(s);            // eager: +1
            step.run(s);            // capture: +1
            host[0] = 5;
            driver.dropNext("graphExecKernelNodeSetParams");
            step.runTraced(s);      // eager +5; the update is dropped; the replay check sees +1 where +5 was due
            gpu.synchronize(s);
            assertThat(readInts(p, N)).as("the verification run's effect is its eager run's").containsOnly(7);
            assertThat(reports).hasSize(1);
            assertThat(reports.getFirst()).contains("updated 1 node(s) of the graph in place")
                    .contains("a replay of the graph leaves other bytes than the eager run")
                    .contains("0x" + Long.toHexString(p.address()))
                    .contains("op #0 " + MODULE + "::add_i32 [kernel] whose argument 0 names it")
                    .contains("first at +0 (eager 0x7, replay 0x3)")
                    .contains("the next run captures again");
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            step.run(s);            // recapture: +5
            step.run(s);            // replay: +5
            gpu.synchronize(s);
            assertThat(readInts(p, N)).containsOnly(17);
            assertThat(step.stats().recaptures()).isEqualTo(1);
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /**
     * The replay check stays quiet when the graph holds what the trace says, whether the
     * verification run found nothing or set a node in place, and the run's effect is the eager
     * run's alone.
     */
    @Test
    void theReplayCheckAgreesWithAGraphThatHoldsTheTrace() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        DevicePtr q = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        gpu.memset(q, 0, 4 * N);
        int[] host = {1};
        try (CapturedStep step = gpu.capturedStep("agrees", (g, st) -> {
            addI32(p, host[0], N, st);
            g.copyD2DAsync(p, q, 4 * N, st);
        }, quiet().checkReplay(true))) {
            step.run(s);            // eager: p 1
            step.run(s);            // capture: p 2
            step.runTraced(s);      // nothing changed: p 3
            assertThat(reports).isEmpty();
            host[0] = 5;
            step.runTraced(s);      // updated in place: p 8
            assertThat(reports).hasSize(1);
            assertThat(reports.getFirst()).contains("updated 1 node(s) of the graph in place")
                    .doesNotContain("a replay of the graph");
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            step.run(s);            // replay: p 13
            gpu.synchronize(s);
            assertThat(readInts(p, N)).containsOnly(13);
            assertThat(readInts(q, N)).containsOnly(13);
            assertThat(step.stats().replays()).as("the check's replays are not the step's").isEqualTo(1);
        }
        gpu.free(p);
        gpu.free(q);
        gpu.destroyStream(s);
    }

    /** Argument and grid changes seen by a traced run are set in the graph in place; no capture happens. */
    @Test
    void argumentOnlyChangesAreUpdatedInPlace() {
        Stream s = gpu.createStream();
        DevicePtr a = gpu.alloc(4 * N);
        DevicePtr b = gpu.alloc(4 * N);
        gpu.memset(a, 0, 4 * N);
        gpu.memset(b, 0, 4 * N);
        DevicePtr[] target = {a};
        int[] n = {N / 2};
        try (CapturedStep step = gpu.capturedStep("args", (g, st) -> {
            g.launch(kernel("add_i32"), LaunchConfig.forElements(n[0], 32), st, args.clear().ptr(target[0]).i32(3).i32(n[0]));
            addI32(b, 1, N, st);
        }, quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            target[0] = b;
            n[0] = N;
            step.runTraced(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(step.lastDiff()).get().asString()
                    .contains("updated 1 node(s) of the graph in place")
                    .contains("#0 " + MODULE + "::add_i32 [kernel] grid [1, 1, 1] -> [2, 1, 1]; arg0 ")
                    .contains("; arg2 0x20 -> 0x40 (Δ 32)");
            step.run(s);
            gpu.synchronize(s);
            int[] outA = readInts(a, N);
            for (int i = 0; i < N; i++) {
                assertThat(outA[i]).as("a[%d]", i).isEqualTo(i < N / 2 ? 6 : 0);
            }
            assertThat(readInts(b, N)).as("b: 4 runs of +1 and 2 of +3").containsOnly(10);
            CapturedStep.Stats st = step.stats();
            assertThat(st.captures()).isEqualTo(1);
            assertThat(st.recaptures()).isZero();
            assertThat(st.updates()).isEqualTo(1);
            assertThat(st.replays()).isEqualTo(1);
        }
        gpu.free(a);
        gpu.free(b);
        gpu.destroyStream(s);
    }

    /** {@link CapturedStep#update} sets one kernel op's arguments without running the region. */
    @Test
    void explicitUpdateSetsOneKernelNode() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        try (CapturedStep step = gpu.capturedStep("explicit", (g, st) -> {
            gpu.memsetAsync(p, 0, 4, st);
            addI32(p, 1, N, st);
        }, quiet())) {
            assertThatThrownBy(() -> step.update(1, LaunchConfig.of(1, 64), args.clear().ptr(p).i32(2).i32(N)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("holds no graph");
            step.run(s);
            step.run(s);
            for (int v = 2; v <= 4; v++) {
                step.update(1, LaunchConfig.of(1, 64), args.clear().ptr(p).i32(v).i32(N));
                args.clear().ptr(p).i32(-1000).i32(N);
                step.run(s);
            }
            gpu.synchronize(s);
            int[] out = readInts(p, N);
            assertThat(out[0]).isEqualTo(4);
            assertThat(out[N - 1]).isEqualTo(1 + 1 + 2 + 3 + 4);
            assertThatThrownBy(() -> step.update(0, LaunchConfig.of(1, 64), args.clear().ptr(p).i32(2).i32(N)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is a memset, not a kernel launch");
            assertThatThrownBy(() -> step.update(2, LaunchConfig.of(1, 64), args))
                    .isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(step.stats().updates()).isEqualTo(3);
            assertThat(step.stats().replays()).isEqualTo(3);
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /** A changed op count is a structural change: reported with the diff, and the next run captures again. */
    @Test
    void structuralChangesAreRecapturedWithTheDiff() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        int[] count = {1};
        try (CapturedStep step = gpu.capturedStep("shape", (g, st) -> {
            for (int i = 0; i < count[0]; i++) {
                addI32(p, 1, N, st);
            }
        }, quiet().verifyEvery(2))) {
            step.run(s);            // eager +1
            step.run(s);            // capture +1
            count[0] = 2;
            step.run(s);            // replay (stale: +1)
            step.run(s);            // verification, eager: +2
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            assertThat(step.lastDiff()).get().asString()
                    .contains("the op count changed (1 -> 2); the next run captures again")
                    .contains("OP COUNT differs: prev 1 vs cur 2")
                    .contains("0 differing op(s) of 1");
            step.run(s);            // recapture +2
            step.run(s);            // replay +2
            gpu.synchronize(s);
            assertThat(readInts(p, N)).containsOnly(1 + 1 + 1 + 2 + 2 + 2);
            CapturedStep.Stats st = step.stats();
            assertThat(st.captures()).isEqualTo(2);
            assertThat(st.recaptures()).isEqualTo(1);
            assertThat(st.execUpdates()).as("another topology: instantiated anew").isZero();
            assertThat(st.updates()).isZero();
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /** A memset's destination and value are set in place; a changed size is recaptured. */
    @Test
    void memsetValueIsUpdatedInPlaceAndItsSizeRecaptured() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        DevicePtr q = gpu.alloc(4 * N);
        int[] value = {1};
        DevicePtr[] dst = {p};
        long[] bytes = {4 * N};
        try (CapturedStep step = gpu.capturedStep("memset", (g, st) -> g.memsetAsync(dst[0], value[0], bytes[0], st), quiet())) {
            step.run(s);
            step.run(s);
            value[0] = 2;
            dst[0] = q;
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("updated 1 node(s) of the graph in place")
                    .contains("[memset] arg0 ").contains("; arg1 0x1 -> 0x2 (Δ 1)");
            gpu.memset(q, 0, 4 * N);
            gpu.synchronize();
            step.run(s);
            gpu.synchronize(s);
            assertThat(readBytes(q, 4 * N)).as("the replay set the new destination to the new value").containsOnly(2);
            assertThat(readBytes(p, 4 * N)).containsOnly(1);
            bytes[0] = 8;
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("op #0 is a memset whose size changed (256 -> 8 bytes")
                    .contains("the next run captures again");
            step.run(s);
            CapturedStep.Stats st = step.stats();
            assertThat(st.updates()).isEqualTo(1);
            assertThat(st.recaptures()).isEqualTo(1);
        }
        gpu.synchronize();
        gpu.free(p);
        gpu.free(q);
        gpu.destroyStream(s);
    }

    /** A device-to-device copy's source, destination and size are set in place. */
    @Test
    void changedCopyIsUpdatedInPlace() {
        Stream s = gpu.createStream();
        DevicePtr src = gpu.alloc(4 * N);
        DevicePtr dst = gpu.alloc(4 * N);
        DevicePtr other = gpu.alloc(4 * N);
        gpu.copyH2D(iota(N, 0), src);
        gpu.copyH2D(iota(N, 500), other);
        DevicePtr[] from = {src};
        long[] bytes = {4};
        try (CapturedStep step = gpu.capturedStep("copy", (g, st) -> g.copyD2DAsync(from[0], dst, bytes[0], st), quiet())) {
            step.run(s);
            step.run(s);
            bytes[0] = 4 * N;
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("updated 1 node(s) of the graph in place")
                    .contains("[d2d] arg2 0x4 -> 0x100 (Δ 252)");
            from[0] = other;
            step.runTraced(s);
            gpu.synchronize(s);
            gpu.copyH2D(ints(N, -1), dst);
            step.run(s);
            gpu.synchronize(s);
            assertThat(readInts(dst, N)).as("the replay copied the new source, all of it").containsExactly(iota(N, 500));
            assertThat(step.stats().updates()).isEqualTo(2);
            assertThat(step.stats().recaptures()).isZero();
        }
        gpu.free(src);
        gpu.free(dst);
        gpu.free(other);
        gpu.destroyStream(s);
    }

    /** A region that enqueues other values at every run is not steady: the capture's diff is reported and the step stays eager. */
    @Test
    void unsteadyRegionIsReportedAtCapture() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        int[] k = {0};
        try (CapturedStep step = gpu.capturedStep("unsteady", (g, st) -> addI32(p, ++k[0], N, st), quiet())) {
            step.run(s);            // eager +1
            step.run(s);            // captured +2, differs from the eager run
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.EAGER);
            assertThat(reports).singleElement().asString().contains("run 2 (captured) differs from the eager run before it")
                    .contains("arg1 0x1 -> 0x2 (Δ 1)");
            step.run(s);            // eager +3
            gpu.synchronize(s);
            assertThat(readInts(p, N)).containsOnly(6);
            assertThat(step.stats().mismatches()).isEqualTo(1);
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /** Only the running thread's ops are the step's: another thread's launches during a traced run are not in its trace. */
    @Test
    void anotherThreadsOpsAreNotPartOfTheStep() throws Exception {
        Stream s = gpu.createStream();
        Stream other = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        DevicePtr q = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        gpu.memset(q, 0, 4 * N);
        KernelHandle add = kernel("add_i32");
        try (CapturedStep step = gpu.capturedStep("alone", (g, st) -> {
            Thread t = Thread.ofPlatform().start(() -> {
                try (var own = new KernelArgs()) {
                    g.launch(add, LaunchConfig.forElements(N, 64), other, own.ptr(q).i32(1).i32(N));
                }
            });
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            addI32(p, 1, N, st);
        }, quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(reports).isEmpty();
            // The step's trace holds only this thread's op, so it pairs with the graph's one node;
            // an op of the other thread recorded into the step would leave two traced ops for it.
            assertThat(step.inPlaceUnavailable()).as("why the graph cannot be updated in place").isEmpty();
            step.update(0, LaunchConfig.forElements(N, 64), args.clear().ptr(p).i32(10).i32(N));
            step.run(s);
            gpu.synchronize();
            assertThat(readInts(p, N)).as("the step's op 0 is its own add on p").containsOnly(1 + 1 + 10);
        }
        gpu.synchronize();
        assertThat(readInts(q, N)).as("the other thread's launches, run by each region run").containsOnly(2);
        gpu.free(p);
        gpu.free(q);
        gpu.destroyStream(s);
        gpu.destroyStream(other);
    }

    /**
     * A graph whose nodes are no chain (the driver answers no edges, as for a region forked onto a
     * second stream): it is not updated in place, and an argument change is recaptured into the
     * same executable graph.
     */
    @Test
    void aGraphThatIsNoChainIsRecapturedNotUpdated() {
        driver.noEdges();
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        DevicePtr q = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        gpu.memset(q, 0, 4 * N);
        int[] v = {1};
        try (CapturedStep step = gpu.capturedStep("fork", (g, st) -> {
            addI32(q, v[0], N, st);
            addI32(p, 1, N, st);
        }, quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(step.inPlaceUnavailable()).get().asString().contains("not one chain");
            assertThatThrownBy(() -> step.update(0, LaunchConfig.of(1, 64), args.clear().ptr(p).i32(1).i32(N)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("not one chain");
            v[0] = 3;
            step.runTraced(s);
            assertThat(step.lastDiff()).get().asString().contains("only arguments changed, but the graph cannot be updated in place")
                    .contains("the next run captures again");
            step.run(s);
            gpu.synchronize();
            assertThat(readInts(q, N)).containsOnly(1 + 1 + 3 + 3);
            assertThat(readInts(p, N)).containsOnly(4);
            assertThat(step.stats().recaptures()).isEqualTo(1);
            assertThat(step.stats().execUpdates()).as("same topology: the exec was updated, not re-instantiated").isEqualTo(1);
        }
        gpu.free(p);
        gpu.free(q);
        gpu.destroyStream(s);
    }

    /** A region that throws while being captured leaves the stream not capturing and the step ready to capture again. */
    @Test
    void aRegionThrowingDuringTheCaptureEndsTheCapture() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        boolean[] fail = {false};
        try (CapturedStep step = gpu.capturedStep("throws", (g, st) -> {
            addI32(p, 1, N, st);
            if (fail[0]) {
                throw new IllegalStateException("planted");
            }
        }, quiet())) {
            step.run(s);
            fail[0] = true;
            assertThatThrownBy(() -> step.run(s)).isInstanceOf(IllegalStateException.class).hasMessage("planted");
            assertThat(gpu.streamIsCapturing(s)).isFalse();
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            fail[0] = false;
            step.run(s);
            step.run(s);
            gpu.synchronize(s);
            assertThat(readInts(p, N)).as("the aborted capture ran nothing").containsOnly(3);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
        }
        gpu.free(p);
        gpu.destroyStream(s);
    }

    /** A closed step refuses runs; close is idempotent and the graph is released. */
    @Test
    void closedStepRefusesRuns() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(4 * N);
        CapturedStep step = gpu.capturedStep("closed", (g, st) -> addI32(p, 1, N, st), quiet());
        step.run(s);
        step.run(s);
        step.close();
        step.close();
        assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CLOSED);
        assertThatThrownBy(() -> step.run(s)).isInstanceOf(IllegalStateException.class).hasMessageContaining("'closed' is closed");
        gpu.synchronize(s);
        gpu.free(p);
        gpu.destroyStream(s);
    }
}
