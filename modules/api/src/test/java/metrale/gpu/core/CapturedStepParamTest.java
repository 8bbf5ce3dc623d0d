// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StepMismatchException;
import metrale.gpu.StepOptions;
import metrale.gpu.StepParam;
import metrale.gpu.Stream;
import metrale.gpu.internal.ScriptedDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Step parameters over the scripted driver, whose graph launches run what their nodes hold and
 * whose calls are counted: a {@link CapturedStep#set} costs the next run one
 * {@code graphExecKernelNodeSetParams} per node it changed and no run of the region; verification
 * runs still run the region and find what a parameter does not cover; bad use is refused and
 * changes nothing.
 */
class CapturedStepParamTest {

    private static final String MODULE = CapturedStepTest.MODULE;
    private static final int N = 64;
    private static final String SET_NODE = "graphExecKernelNodeSetParams";

    private ScriptedDriver driver;
    private Gpu gpu;
    private KernelArgs args;
    private Stream s;
    private DevicePtr p;
    private DevicePtr q;
    /** Region runs: eager, captured and verification runs alike. */
    private int regionRuns;
    private final List<String> reports = new ArrayList<>();

    @BeforeEach
    void open() {
        // put(p, w): stores argument 1's trace word, 8 bytes, at p.
        driver = CapturedStepTest.withKernels().kernel(MODULE, "put", (d, config, a) ->
                d.write(a[0], ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, a[1]).array()));
        gpu = driver.open();
        gpu.loadModule(MODULE, CapturedStepTest.IMAGE);
        args = new KernelArgs();
        s = gpu.createStream();
        p = gpu.alloc(4 * N);
        q = gpu.alloc(4 * N);
        gpu.memset(p, 0, 4 * N);
        gpu.memset(q, 0, 4 * N);
    }

    @AfterEach
    void close() {
        args.close();
        if (gpu.fault().isEmpty()) {
            gpu.synchronize();
            gpu.free(p);
            gpu.free(q);
            gpu.destroyStream(s);
            assertThat(gpu.liveAllocCount()).isZero();
        }
        gpu.close();
    }

    private StepOptions quiet() {
        return StepOptions.defaults().reporter(reports::add);
    }

    private KernelHandle kernel(String func) {
        return gpu.kernel(MODULE, func);
    }

    private void add(DevicePtr at, int v, Stream st) {
        gpu.launch(kernel("add_i32"), LaunchConfig.forElements(N, 128), st, args.clear().ptr(at).i32(v).i32(N));
    }

    private void add(DevicePtr at, StepParam<Integer> v, Stream st) {
        gpu.launch(kernel("add_i32"), LaunchConfig.forElements(N, 128), st, args.clear().ptr(at).param(v).i32(N));
    }

    private int[] ints(DevicePtr at) {
        gpu.synchronize();
        int[] out = new int[N];
        gpu.copyD2H(at, out);
        return out;
    }

    private long word(DevicePtr at) {
        gpu.synchronize();
        byte[] b = new byte[8];
        gpu.copyD2H(at, b);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    /** Runs the step from its first run into the replay phase: one eager run and the capture. */
    private void toReplay(CapturedStep step) {
        step.run(s);
        step.run(s);
        assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
        assertThat(step.inPlaceUnavailable()).isEmpty();
    }

    /**
     * The point of parameters: in a step of several kernels, a set costs the next run exactly one
     * node set, for the one node that takes the parameter, and a graph launch; the region does not
     * run, and nothing reaches the driver before the run.
     */
    @Test
    void aSetIsOneNodeSetAtTheNextRunAndNoRegionRun() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        try (CapturedStep step = gpu.capturedStep("one", (g, st) -> {
            regionRuns++;
            add(q, 100, st);
            add(p, v, st);
            add(q, 1000, st);
        }, quiet())) {
            toReplay(step);
            int launches = driver.count("launchKernel");
            int graphLaunches = driver.count("graphLaunch");
            int calls = driver.calls().size();
            step.set(v, 5);
            assertThat(driver.calls()).as("set itself calls no driver").hasSize(calls);
            step.run(s);
            assertThat(driver.count(SET_NODE)).as("one node set, for the one node that takes v").isEqualTo(1);
            assertThat(driver.count("graphLaunch") - graphLaunches).isEqualTo(1);
            assertThat(driver.count("launchKernel") - launches).as("no kernel launched eagerly").isZero();
            assertThat(regionRuns).as("the region ran for the eager run and the capture only").isEqualTo(2);
            step.run(s);
            assertThat(driver.count(SET_NODE)).as("the next replay sets nothing").isEqualTo(1);
            assertThat(ints(p)).as("1 + 1 + 5 + 5").containsOnly(12);
            assertThat(ints(q)).containsOnly(4 * 1100);
            assertThat(step.stats().paramSets()).isEqualTo(1);
            assertThat(step.stats().replays()).isEqualTo(2);
            assertThat(step.stats().updates()).as("no update() and no verification").isZero();
            assertThat(v.get()).isEqualTo(5);
            assertThat(reports).isEmpty();
        }
    }

    /**
     * One set per changed node: two parameters of one node set before a run are one node set; a
     * parameter two nodes take is two; a value the nodes hold already is none.
     */
    @Test
    void nodeSetsAreCountedPerChangedNode() {
        StepParam<DevicePtr> at = StepParam.ptr("at", p);
        StepParam<Integer> v = StepParam.i32("v", 1);
        StepParam<Integer> w = StepParam.i32("w", 10);
        try (CapturedStep step = gpu.capturedStep("per-node", (g, st) -> {
            gpu.launch(kernel("add_i32"), LaunchConfig.forElements(N, 128), st, args.clear().param(at).param(v).i32(N));
            add(q, w, st);
            add(q, w, st);
        }, quiet())) {
            toReplay(step);
            step.set(at, q);
            step.set(v, 2);
            step.run(s);
            assertThat(driver.count(SET_NODE)).as("at and v are both arguments of node 0").isEqualTo(1);
            step.set(w, 20);
            step.run(s);
            assertThat(driver.count(SET_NODE)).as("w is an argument of nodes 1 and 2").isEqualTo(3);
            step.set(w, 20);
            step.set(v, 2);
            step.run(s);
            assertThat(driver.count(SET_NODE)).as("the values the nodes hold already").isEqualTo(3);
            step.set(v, 7);
            step.set(v, 2);
            step.run(s);
            assertThat(driver.count(SET_NODE)).as("a value set back before the run still sets the node once").isEqualTo(4);
            assertThat(ints(p)).as("p: the eager run and the capture, +1 each").containsOnly(2);
            assertThat(ints(q)).as("q: 10 + 10 twice, then 2 + 10 + 10, then 2 + 20 + 20 three times")
                    .containsOnly(2 * 20 + 22 + 3 * 42);
            assertThat(step.stats().paramSets()).isEqualTo(4);
        }
    }

    /** Every kind of value reaches the node as the launch would have passed it. */
    @Test
    void everyKindOfParameterReachesItsNode() {
        StepParam<Integer> i = StepParam.i32("i", -1);
        StepParam<Long> l = StepParam.i64("l", 1L << 40);
        StepParam<Float> f = StepParam.f32("f", 1.5f);
        StepParam<Double> d = StepParam.f64("d", 2.5);
        StepParam<byte[]> b = StepParam.bytes("b", new byte[] {1, 2, 3});
        List<StepParam<?>> all = List.of(i, l, f, d, b);
        KernelHandle put = kernel("put");
        try (CapturedStep step = gpu.capturedStep("kinds", (g, st) -> {
            for (int k = 0; k < all.size(); k++) {
                gpu.launch(put, LaunchConfig.of(1, 1), st, args.clear().ptr(p.plus(8L * k)).param(all.get(k)));
            }
        }, quiet())) {
            toReplay(step);
            assertThat(word(p)).isEqualTo(0xffff_ffffL);
            step.set(i, -7);
            step.set(l, -3L);
            step.set(f, 0.25f);
            step.set(d, -8.0);
            step.set(b, new byte[] {9, 8, 7});
            step.run(s);
            assertThat(driver.count(SET_NODE)).isEqualTo(5);
            assertThat(word(p)).isEqualTo(Integer.toUnsignedLong(-7));
            assertThat(word(p.plus(8))).isEqualTo(-3L);
            assertThat(word(p.plus(16))).isEqualTo(Integer.toUnsignedLong(Float.floatToRawIntBits(0.25f)));
            assertThat(word(p.plus(24))).isEqualTo(Double.doubleToRawLongBits(-8.0));
            assertThat(word(p.plus(32))).isEqualTo(0x07_08_09L);
            step.runTraced(s);
            assertThat(reports).as("the region, run again, passes what the nodes hold").isEmpty();
            assertThat(b.get()).containsExactly(9, 8, 7);
        }
    }

    /**
     * A pointer parameter swaps buffers between runs as a ping-pong does, and verification runs,
     * which run the region and diff it, find nothing: the graph holds what the region passes.
     */
    @Test
    void verificationRunsAgreeWithSetParameters() {
        StepParam<DevicePtr> at = StepParam.ptr("at", p);
        StepParam<Integer> v = StepParam.i32("v", 1);
        try (CapturedStep step = gpu.capturedStep("pingpong", (g, st) -> {
            regionRuns++;
            gpu.launch(kernel("add_i32"), LaunchConfig.forElements(N, 128), st, args.clear().param(at).param(v).i32(N));
        }, quiet().verifyEvery(3).throwOnMismatch(true).checkReplay(true))) {
            int expectP = 0;
            int expectQ = 0;
            for (int run = 1; run <= 12; run++) {
                boolean even = run % 2 == 0;
                if (run > 2) {
                    step.set(at, even ? q : p);
                    step.set(v, run);
                }
                int value = run > 2 ? run : 1;
                step.run(s);
                if (run <= 2 || !even) {
                    expectP += value;
                } else {
                    expectQ += value;
                }
            }
            assertThat(ints(p)).containsOnly(expectP);
            assertThat(ints(q)).containsOnly(expectQ);
            CapturedStep.Stats st = step.stats();
            assertThat(st.verifications()).isEqualTo(3);
            assertThat(st.mismatches()).isZero();
            assertThat(st.paramSets()).as("one node set at each run after a set").isEqualTo(10);
            assertThat(regionRuns).as("eager, capture and the three verification runs").isEqualTo(5);
            assertThat(reports).isEmpty();
        }
    }

    /**
     * A value the region derives from a parameter is a host value like any other: the nodes that
     * take the parameter follow a set at once; the node that takes the derived value is stale
     * until a verification run finds it and sets it.
     */
    @Test
    void aValueDerivedFromAParameterIsFoundByVerification() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        try (CapturedStep step = gpu.capturedStep("derived", (g, st) -> {
            add(p, v, st);
            add(q, 2 * v.get(), st);
        }, quiet().verifyEvery(2).throwOnMismatch(true))) {
            toReplay(step);
            step.set(v, 3);
            step.run(s);            // replay: p +3, q +2 (stale)
            StepMismatchException e = (StepMismatchException) assertThatThrownBy(() -> step.run(s))
                    .isInstanceOf(StepMismatchException.class).actual();
            assertThat(e.diff()).contains("updated 1 node(s) of the graph in place")
                    .contains("#1 " + MODULE + "::add_i32 [kernel] arg1 0x2 -> 0x6 (Δ 4)")
                    .doesNotContain("#0 ");
            step.run(s);            // replay: p +3, q +6
            assertThat(ints(p)).containsOnly(1 + 1 + 3 + 3 + 3);
            assertThat(ints(q)).containsOnly(2 + 2 + 2 + 6 + 6);
        }
    }

    /**
     * A region that stops passing a parameter, or passes another at that argument, is reported by
     * the next verification run, which moves the step's parameters to where the region passes
     * them; a set of the parameter it dropped is refused after that.
     */
    @Test
    void aParameterTheRegionStopsPassingIsReportedAndItsSetRefused() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        StepParam<Integer> w = StepParam.i32("w", 1);
        boolean[] plain = {false};
        try (CapturedStep step = gpu.capturedStep("moved", (g, st) -> {
            if (plain[0]) {
                add(p, 1, st);
                add(q, v, st);
            } else {
                add(p, v, st);
                add(q, w, st);
            }
        }, quiet())) {
            toReplay(step);
            plain[0] = true;
            step.runTraced(s);
            assertThat(reports).singleElement().asString().contains("0 differing op(s) of 2")
                    .contains("parameters moved:")
                    .contains("#0 " + MODULE + "::add_i32 [kernel] arg1: parameter 'v' -> a plain value")
                    .contains("#1 " + MODULE + "::add_i32 [kernel] arg1: parameter 'w' -> parameter 'v'")
                    .contains("updated 0 node(s) of the graph in place");
            assertThat(driver.count(SET_NODE)).as("the values agree: no node to set").isZero();
            assertThat(step.stats().mismatches()).isEqualTo(1);
            assertThatThrownBy(() -> step.set(w, 5)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no launch of the graph takes parameter 'w'");
            step.set(v, 4);
            step.run(s);
            assertThat(driver.count(SET_NODE)).isEqualTo(1);
            assertThat(ints(p)).containsOnly(4);
            assertThat(ints(q)).as("1 + 1 + 1, then v = 4 on the node of op 1").containsOnly(7);
        }
    }

    /**
     * Before the replay phase a set is what the region's next run passes, and the capture that
     * follows agrees with the eager run before it: no unsteady report.
     */
    @Test
    void aSetBeforeTheReplayPhaseIsWhatTheNextRunPasses() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        try (CapturedStep step = gpu.capturedStep("early", (g, st) -> add(p, v, st), quiet().eagerRuns(2))) {
            step.set(v, 2);         // before the first run: claimed, nothing to check yet
            step.run(s);            // eager +2
            step.set(v, 3);
            step.run(s);            // eager +3
            step.set(v, 4);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            step.run(s);            // capture +4: agrees with the eager run, patched with the set
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            step.run(s);            // replay +4
            assertThat(ints(p)).containsOnly(2 + 3 + 4 + 4);
            assertThat(reports).isEmpty();
            assertThat(driver.count(SET_NODE)).isZero();
        }
    }

    /**
     * Bad use is refused with what is wrong, and changes neither the value nor the graph: another
     * step's parameter, a value of another type or size, a parameter the region does not pass, a
     * closed step.
     */
    @Test
    void badUseIsRefusedAndChangesNothing() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        StepParam<Integer> unused = StepParam.i32("unused", 1);
        StepParam<byte[]> b = StepParam.bytes("b", new byte[4]);
        DevicePtr r = gpu.alloc(8);
        CapturedStep other = gpu.capturedStep("other", (g, st) -> add(q, v, st), quiet());
        try (CapturedStep step = gpu.capturedStep("bad", (g, st) -> {
            add(p, v, st);
            gpu.launch(kernel("put"), LaunchConfig.of(1, 1), st, args.clear().ptr(r).param(b));
        }, quiet())) {
            step.run(s);
            assertThatThrownBy(() -> step.set(unused, 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("the region's last run passed parameter 'unused' to no launch");
            assertThatThrownBy(() -> other.run(s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("captured step 'other': the region passed parameter 'v' to a launch (op #0, argument 1)")
                    .hasMessageContaining("a parameter of captured step 'bad'");
            assertThatThrownBy(() -> other.set(v, 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a parameter of captured step 'bad'");
            step.run(s);
            @SuppressWarnings({"unchecked", "rawtypes"})
            StepParam<Object> raw = (StepParam) v;
            assertThatThrownBy(() -> step.set(raw, 2L)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("parameter 'v' (i32) takes a value of type Integer, not java.lang.Long");
            assertThatThrownBy(() -> step.set(b, new byte[5])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("parameter 'b' holds 4 bytes; the value has 5");
            assertThatThrownBy(() -> step.set(v, null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> step.set(null, 1)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> step.set(unused, 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no launch of the graph takes parameter 'unused'");
            step.run(s);
            assertThat(v.get()).isEqualTo(1);
            assertThat(driver.count(SET_NODE)).as("nothing refused reached the graph").isZero();
            assertThat(ints(p)).containsOnly(3);
            step.close();
            assertThatThrownBy(() -> step.set(v, 2)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("'bad' is closed");
            // Closed, the step gave v up: the other step's region may take it now.
            other.run(s);
            other.run(s);
            other.set(v, 10);
            other.run(s);
            assertThat(ints(q)).containsOnly(1 + 1 + 1 + 10);
        } finally {
            other.close();
            gpu.synchronize();
            gpu.free(r);
        }
    }

    /**
     * Before its first run a step claims a parameter it is set: another step's set is then refused,
     * and a set refused for its value claims nothing, so the parameter stays free for another step.
     */
    @Test
    void aSetBeforeTheFirstRunClaimsTheParameterOnlyWhenItTakes() {
        StepParam<byte[]> b = StepParam.bytes("b", new byte[4]);
        StepParam<Integer> v = StepParam.i32("v", 1);
        DevicePtr r = gpu.alloc(8);
        CapturedStep first = gpu.capturedStep("first", (g, st) -> add(p, v, st), quiet());
        CapturedStep second = gpu.capturedStep("second", (g, st) ->
                gpu.launch(kernel("put"), LaunchConfig.of(1, 1), st, args.clear().ptr(r).param(b)), quiet());
        try {
            assertThatThrownBy(() -> first.set(b, new byte[5])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("parameter 'b' holds 4 bytes; the value has 5");
            // The refused set left b unclaimed: the second step's set claims it and its region passes it.
            second.set(b, new byte[] {7, 0, 0, 0});
            assertThatThrownBy(() -> first.set(b, new byte[4])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a parameter of captured step 'second'");
            first.set(v, 5);
            assertThatThrownBy(() -> second.set(v, 6)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a parameter of captured step 'first'");
            first.run(s);
            second.run(s);
            assertThat(ints(p)).as("the first run passes the value set before it").containsOnly(5);
            assertThat(word(r) & 0xffffffffL).isEqualTo(7);
            assertThat(v.get()).isEqualTo(5);
        } finally {
            first.close();
            second.close();
            gpu.synchronize();
            gpu.free(r);
        }
        // Closed, both steps gave their parameters up: a third may claim them.
        try (CapturedStep third = gpu.capturedStep("third", (g, st) -> add(q, v, st), quiet())) {
            third.set(v, 2);
            third.run(s);
            assertThat(ints(q)).containsOnly(2);
        }
    }

    /**
     * A step whose region names another step's parameter during its capture aborts the capture and
     * throws; so does an {@link CapturedStep#update} whose arguments name it.
     */
    @Test
    void anotherStepsParameterInACaptureAbortsIt() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        boolean[] take = {false};
        try (CapturedStep owner = gpu.capturedStep("owner", (g, st) -> add(p, v, st), quiet());
             CapturedStep thief = gpu.capturedStep("thief", (g, st) -> {
                 if (take[0]) {
                     add(q, v, st);
                 } else {
                     add(q, 1, st);
                 }
             }, quiet())) {
            owner.run(s);
            thief.run(s);
            take[0] = true;
            assertThatThrownBy(() -> thief.run(s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("a parameter of captured step 'owner'");
            assertThat(gpu.streamIsCapturing(s)).isFalse();
            assertThat(thief.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            take[0] = false;
            thief.run(s);
            assertThat(thief.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThatThrownBy(() -> thief.update(0, LaunchConfig.forElements(N, 128), args.clear().ptr(q).param(v).i32(N)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("captured step 'thief': update(0) passed parameter 'v' to a launch (op #0, argument 1)")
                    .hasMessageContaining("a parameter of captured step 'owner'");
            assertThat(driver.count(SET_NODE)).as("the refused update reached no node").isZero();
        }
    }

    /** A recapture (the region's shape changed) rebuilds which nodes take a parameter. */
    @Test
    void aRecaptureRebuildsTheParameterNodes() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        boolean[] longer = {false};
        try (CapturedStep step = gpu.capturedStep("reshape", (g, st) -> {
            if (longer[0]) {
                add(q, 1, st);
            }
            add(p, v, st);
        }, quiet())) {
            toReplay(step);
            longer[0] = true;
            step.runTraced(s);      // the op count changed: the next run captures again
            step.run(s);            // the recapture: v is an argument of op 1 now
            step.set(v, 9);
            step.run(s);
            assertThat(driver.count(SET_NODE)).isEqualTo(1);
            assertThat(ints(p)).containsOnly(1 + 1 + 1 + 1 + 9);
            assertThat(ints(q)).containsOnly(3);
            assertThat(step.stats().recaptures()).isEqualTo(1);
        }
    }

    /**
     * Where the graph cannot be updated in place (its nodes are no chain), a set makes the next
     * run capture the region again, and the capture agrees with what the set asked for.
     */
    @Test
    void withoutInPlaceUpdatesASetRecaptures() {
        driver.noEdges();
        StepParam<Integer> v = StepParam.i32("v", 1);
        try (CapturedStep step = gpu.capturedStep("fork", (g, st) -> {
            add(q, 1, st);
            add(p, v, st);
        }, quiet())) {
            step.run(s);
            step.run(s);
            assertThat(step.inPlaceUnavailable()).isPresent();
            step.set(v, 5);
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.CAPTURE);
            step.run(s);            // recapture: +5
            step.run(s);            // replay: +5
            assertThat(ints(p)).containsOnly(1 + 1 + 5 + 5);
            assertThat(step.stats().recaptures()).isEqualTo(1);
            assertThat(step.stats().paramSets()).isZero();
            assertThat(driver.count(SET_NODE)).isZero();
            assertThat(reports).as("the capture agreed with the set").isEmpty();
        }
    }

    /**
     * A driver that refuses the node set makes the run capture the region instead, reported; a
     * sticky error is thrown.
     */
    @Test
    void aRefusedNodeSetRecapturesAndAStickyOneIsThrown() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        try (CapturedStep step = gpu.capturedStep("refused", (g, st) -> add(p, v, st), quiet())) {
            toReplay(step);
            step.set(v, 2);
            driver.failNext(SET_NODE, CudaError.INVALID_VALUE);
            step.run(s);            // refused: this run captures, +2
            assertThat(reports).singleElement().asString()
                    .contains("run 3: the driver refused setting a parameter's node in place (")
                    .contains("this run captures the region again");
            assertThat(step.phase()).isEqualTo(CapturedStep.Phase.REPLAY);
            assertThat(step.stats().recaptures()).isEqualTo(1);
            assertThat(step.stats().mismatches()).isZero();
            step.run(s);            // replay +2
            assertThat(ints(p)).containsOnly(1 + 1 + 2 + 2);
            step.set(v, 3);
            driver.failNext(SET_NODE, CudaError.ILLEGAL_ADDRESS);
            assertThatThrownBy(() -> step.runTraced(s)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS));
        }
    }

    /**
     * {@link CapturedStep#update} of an op whose parameter was set supersedes the set (one node
     * set, the update's), and the parameters its arguments name are the op's from then on.
     */
    @Test
    void anUpdateSupersedesAPendingSetAndRebindsTheOp() {
        StepParam<Integer> v = StepParam.i32("v", 1);
        StepParam<Integer> w = StepParam.i32("w", 100);
        try (CapturedStep step = gpu.capturedStep("update", (g, st) -> add(p, v, st), quiet())) {
            toReplay(step);
            step.set(v, 2);
            step.update(0, LaunchConfig.forElements(N, 128), args.clear().ptr(p).param(w).i32(N));
            step.run(s);            // +100
            assertThat(driver.count(SET_NODE)).as("the update's, and no set at the run").isEqualTo(1);
            assertThatThrownBy(() -> step.set(v, 3)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no launch of the graph takes parameter 'v'");
            step.set(w, 7);
            step.run(s);            // +7
            assertThat(driver.count(SET_NODE)).isEqualTo(2);
            assertThat(ints(p)).containsOnly(1 + 1 + 100 + 7);
            assertThat(step.stats().paramSets()).isEqualTo(1);
            assertThat(step.stats().updates()).isEqualTo(1);
        }
    }
}
