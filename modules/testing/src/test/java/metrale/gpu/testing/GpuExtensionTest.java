// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;
import static org.junit.platform.testkit.engine.EventConditions.displayName;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedSuccessfully;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.skippedWithReason;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import java.util.List;
import metrale.gpu.Gpu;
import metrale.gpu.testing.fixtures.BeforeAfterEachFixture;
import metrale.gpu.testing.fixtures.CleanFixture;
import metrale.gpu.testing.fixtures.CloseItselfFixture;
import metrale.gpu.testing.fixtures.FaultFixture;
import metrale.gpu.testing.fixtures.InitCheckFixture;
import metrale.gpu.testing.fixtures.LeakFixture;
import metrale.gpu.testing.fixtures.MisuseFixture;
import metrale.gpu.testing.fixtures.ParallelFixture;
import metrale.gpu.testing.fixtures.NonBlockingOverflowFixture;
import metrale.gpu.testing.fixtures.PoolFreeOverflowFixture;
import metrale.gpu.testing.fixtures.RedZoneFixture;
import metrale.gpu.testing.fixtures.ResourceLeakFixture;
import metrale.gpu.testing.fixtures.SimOnlyFixture;
import metrale.gpu.testing.fixtures.UnfiredPlanFixture;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/**
 * The extension's verdicts, checked by running fixture classes that use it through the JUnit
 * Platform test kit: the runs that must fail fail with the problem and its site; the rest pass.
 */
class GpuExtensionTest {

    private static Events run(Class<?> fixture) {
        return EngineTestKit.engine("junit-jupiter").selectors(selectClass(fixture)).execute().testEvents();
    }

    private static Events run(Class<?> fixture, String method) {
        return EngineTestKit.engine("junit-jupiter").selectors(selectMethod(fixture, method, Gpu.class.getName()))
                .execute().testEvents();
    }

    private static String failureMessage(Events events) {
        List<Event> failed = events.failed().list();
        assertThat(failed).hasSize(1);
        return failed.getFirst().getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class)
                .getThrowable().orElseThrow().getMessage();
    }

    @Test
    void aLeakFailsNamingTheAllocationSite() {
        Events events = run(LeakFixture.class);
        events.assertStatistics(s -> s.started(1).failed(1));
        String msg = failureMessage(events);
        assertThat(msg).contains("1 problem(s)")
                .contains("leak: 512 byte(s) at 0x")
                .contains("allocated at LeakFixture.java:" + LeakFixture.leakLine + " and never freed")
                .doesNotContain("256 byte(s)");
    }

    private static void assertLeak(String method, String kind, String released) {
        Events events = run(ResourceLeakFixture.class, method);
        events.assertStatistics(s -> s.started(1).failed(1));
        assertThat(failureMessage(events)).as(method).contains("1 problem(s)")
                .contains("leak: " + kind + " " + ResourceLeakFixture.handle + " created at ResourceLeakFixture.java:"
                        + ResourceLeakFixture.line + " and never " + released);
    }

    @Test
    void leakedPinnedMemoryFailsNamingItsAddressAndSite() {
        assertLeak("leaksPinnedMemory", "page-locked host memory", "freed");
        assertThat(ResourceLeakFixture.handle).endsWith("(4096 B)");
    }

    @Test
    void aLeakedStreamFailsNamingItsHandleAndSite() {
        assertLeak("leaksAStream", "stream", "destroyed");
        assertThat(ResourceLeakFixture.handle).startsWith("stream");
    }

    @Test
    void aLeakedEventFailsNamingItsHandleAndSite() {
        assertLeak("leaksAnEvent", "event", "destroyed");
        assertThat(ResourceLeakFixture.handle).startsWith("event@0x");
    }

    @Test
    void aLeakedGraphFailsNamingItsHandleAndSite() {
        assertLeak("leaksAGraph", "graph and its exec", "destroyed");
        assertThat(ResourceLeakFixture.handle).startsWith("graph@0x");
    }

    @Test
    void aLeakedCapturedStepFailsNamingItsNameAndSite() {
        assertLeak("leaksACapturedStep", "captured step", "closed");
        assertThat(ResourceLeakFixture.handle).isEqualTo("'kept'");
    }

    @Test
    void aLeakedCommunicatorFailsNamingItsRankAndSite() {
        assertLeak("leaksACommunicator", "communicator", "closed");
        assertThat(ResourceLeakFixture.handle).isEqualTo("rank 0 of 1 (sim)");
    }

    @Test
    void resourcesOfBeforeEachReleasedInAfterEachAreNoLeak() {
        run(BeforeAfterEachFixture.class).assertStatistics(s -> s.started(1).succeeded(1).failed(0));
    }

    @Test
    void aTestThatClosesItsRuntimeStillGetsTheLeakReport() {
        Events events = run(CloseItselfFixture.class, "closesTheInjectedRuntime");
        events.assertStatistics(s -> s.started(1).failed(1));
        assertThat(failureMessage(events)).contains("2 problem(s)")
                .contains("leak: 512 byte(s) at 0x")
                .contains("allocated at CloseItselfFixture.java:" + CloseItselfFixture.bufferLine + " and never freed")
                .contains("leak: stream stream")
                .contains("created at CloseItselfFixture.java:" + CloseItselfFixture.streamLine + " and never destroyed")
                .doesNotContain("is closed");
        run(CloseItselfFixture.class, "closesACleanRuntime").assertStatistics(s -> s.started(1).succeeded(1).failed(0));
    }

    @Test
    void aFaultPlanThatNeverFiredFailsNamingThePlan() {
        assertThat(failureMessage(run(UnfiredPlanFixture.class, "makesTwoAllocations")))
                .contains("1 problem(s)")
                .contains("@FaultPlan(failAllocation = 3) never fired: the test made 2 device allocation(s)");
        assertThat(failureMessage(run(UnfiredPlanFixture.class, "neverLaunchesTheKernel")))
                .contains("1 problem(s)")
                .contains("@FaultPlan(faultKernel = \"kit::fill\") never fired: kit::fill never ran");
        assertThat(failureMessage(run(UnfiredPlanFixture.class, "neverSynchronizes")))
                .contains("1 problem(s)")
                .contains("@FaultPlan(failNextSync = CudaError.LAUNCH_FAILED) never fired: the test never synchronized");
        assertThat(failureMessage(run(UnfiredPlanFixture.class, "closesTheRuntimeBeforeAllocating")))
                .contains("1 problem(s)")
                .contains("@FaultPlan(failAllocation = 1) never fired: the test made 0 device allocation(s)");
    }

    @Test
    void aDamagedRedZoneFailsNamingTheBuffersSite() {
        Events events = run(RedZoneFixture.class);
        events.assertStatistics(s -> s.started(1).failed(1));
        assertThat(failureMessage(events))
                .contains("buffer overflow: red zone of 0x")
                .contains("(400 B, #0, allocated at RedZoneFixture.java:" + RedZoneFixture.bufferLine + ")")
                .contains("found when it was freed")
                .contains("overwritten: 16 byte(s), first at +400");
    }

    @Test
    void aNonBlockingStreamsOverflowFailsNamingTheBuffersSite() {
        Events events = run(NonBlockingOverflowFixture.class);
        events.assertStatistics(s -> s.started(1).failed(1));
        assertThat(failureMessage(events))
                .contains("buffer overflow: red zone of 0x")
                .contains("(400 B, #0, allocated at NonBlockingOverflowFixture.java:" + NonBlockingOverflowFixture.bufferLine + ")")
                .contains("found when it was freed")
                .contains("overwritten: 16 byte(s), first at +400");
    }

    @Test
    void anOverflowOfAPoolBlockFreedInStreamOrderFailsNamingItsSite() {
        Events events = run(PoolFreeOverflowFixture.class);
        events.assertStatistics(s -> s.started(1).failed(1));
        assertThat(failureMessage(events))
                .contains("buffer overflow: red zone of 0x")
                .contains("(400 B, #0, allocated at PoolFreeOverflowFixture.java:" + PoolFreeOverflowFixture.bufferLine + ")")
                .contains("found when it was freed")
                .contains("overwritten: 16 byte(s), first at +400");
    }

    @Test
    void anUndeclaredFaultFailsNamingTheCallItSurfacedIn() {
        Events events = run(FaultFixture.class, "undeclaredFault");
        events.assertStatistics(s -> s.started(1).failed(1));
        assertThat(failureMessage(events))
                .contains("sticky fault ILLEGAL_ADDRESS latched during synchronize")
                .contains("at FaultFixture.java:" + FaultFixture.syncLine)
                .contains("which the test did not declare (@ExpectFault(CudaError.ILLEGAL_ADDRESS))")
                .contains("injected by SimControls.faultKernel(\"kit\", \"fill\")");
    }

    @Test
    void aDeclaredFaultPasses() {
        run(FaultFixture.class, "declaredFault").assertStatistics(s -> s.started(1).succeeded(1).failed(0));
    }

    @Test
    void aDeclaredFaultThatNeverHappensFails() {
        Events events = run(FaultFixture.class, "declaredButAbsent");
        assertThat(failureMessage(events)).contains("the test declared a sticky fault [ILLEGAL_ADDRESS] but none was latched");
    }

    @Test
    void anOverflowWithoutRedZonesIsAnUndeclaredIllegalAddress() {
        Events events = run(FaultFixture.class, "overflowWithoutRedZones");
        assertThat(failureMessage(events))
                .contains("sticky fault ILLEGAL_ADDRESS latched when the check ran the work the test left pending")
                .contains("kit::overflow")
                .contains("bytes past the allocation's end");
    }

    @Test
    void uninitializedReadsFailNamingTheAllocationAndTheOffset() {
        Events events = run(InitCheckFixture.class, "kernelReadsUnwrittenTail");
        assertThat(failureMessage(events))
                .contains("uninitialized read: kernel kit::copy")
                .contains("through argument 0 read 4 uninitialized byte(s) at offset 224 of device allocation 0x")
                .contains("allocated at InitCheckFixture.java:" + InitCheckFixture.inLine + ")")
                .contains("8 such reads");
    }

    @Test
    void uninitializedCopiesAreReportedOnceWhereTheGarbageEntered() {
        Events events = run(InitCheckFixture.class, "copiesReadUnwrittenMemory");
        String msg = failureMessage(events);
        assertThat(msg).contains("1 problem(s)")
                .contains("uninitialized read: cuMemcpyDtoD_v2(")
                .contains("read 256 uninitialized byte(s) at offset 0")
                .contains("allocated at InitCheckFixture.java:" + InitCheckFixture.inLine + ")");
    }

    @Test
    void memoryWrittenBeforeItIsReadPassesTheInitCheck() {
        run(InitCheckFixture.class, "everythingWrittenFirst").assertStatistics(s -> s.started(1).succeeded(1));
    }

    private static Events runRequired(Class<?> fixture, boolean required) {
        String before = System.getProperty(GpuExtension.REQUIRED_PROPERTY);
        System.setProperty(GpuExtension.REQUIRED_PROPERTY, Boolean.toString(required));
        try {
            return run(fixture);
        } finally {
            if (before == null) {
                System.clearProperty(GpuExtension.REQUIRED_PROPERTY);
            } else {
                System.setProperty(GpuExtension.REQUIRED_PROPERTY, before);
            }
        }
    }

    @Test
    void eachBackendIsARunAndCudaIsSkippedWithTheReasonWhereItCannotLoad() {
        Events events = runRequired(CleanFixture.class, false);
        events.assertThatEvents().haveExactly(1, event(displayName("[sim]"), finishedSuccessfully()));
        if (GpuExtension.unavailable(Backend.CUDA).isEmpty()) {
            events.assertThatEvents().haveExactly(1, event(displayName("[cuda]"), finishedSuccessfully()));
        } else {
            String why = GpuExtension.unavailable(Backend.CUDA).get();
            events.assertThatEvents().haveExactly(1, event(displayName("[cuda]"),
                    skippedWithReason(r -> r.equals("cuda is unavailable: " + why))));
        }
    }

    @Test
    void requiredCudaFailsWhereItCannotLoad() {
        Events events = runRequired(CleanFixture.class, true);
        events.assertThatEvents().haveExactly(1, event(displayName("[sim]"), finishedSuccessfully()));
        if (GpuExtension.unavailable(Backend.CUDA).isEmpty()) {
            events.assertThatEvents().haveExactly(1, event(displayName("[cuda]"), finishedSuccessfully()));
        } else {
            events.assertThatEvents().haveExactly(1, event(displayName("[cuda]"), finishedWithFailure(
                    instanceOf(AssertionError.class),
                    message(m -> m.startsWith("metrale.gpu.required=true but cuda is unavailable: ")))));
        }
    }

    @Test
    void aMisconfiguredRunFailsNamingTheMistake() {
        List<String> messages = EngineTestKit.engine("junit-jupiter").selectors(selectClass(MisuseFixture.class)).execute()
                .allEvents().failed().stream()
                .map(e -> e.getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class).getThrowable().orElseThrow()
                        .getMessage())
                .toList();
        assertThat(messages).hasSize(2).anySatisfy(m -> assertThat(m)
                        .isEqualTo("@FaultPlan(faultKernel = \"no_separator\"): expected module::func"))
                .anySatisfy(m -> assertThat(m).startsWith("@GpuTest(backends = {}) on ").endsWith("names no backend to run on"));
    }

    @Test
    void runsInParallelEachHaveTheirOwnTwins() {
        EngineTestKit.engine("junit-jupiter").selectors(selectClass(ParallelFixture.class))
                .configurationParameter("junit.jupiter.execution.parallel.enabled", "true")
                .configurationParameter("junit.jupiter.execution.parallel.config.strategy", "fixed")
                .configurationParameter("junit.jupiter.execution.parallel.config.fixed.parallelism",
                        Integer.toString(ParallelFixture.RUNS))
                .execute().testEvents()
                .assertStatistics(s -> s.started(ParallelFixture.RUNS).succeeded(ParallelFixture.RUNS));
    }

    @Test
    void aRunThatNeedsTheSimulatorIsSkippedOnCudaWithTheReason() {
        runRequired(SimOnlyFixture.class, true).assertThatEvents()
                .haveExactly(1, event(displayName("[sim]"), finishedSuccessfully()))
                .haveExactly(1, event(displayName("[cuda]"),
                        skippedWithReason("needs the simulator: a SimControls parameter, initCheck = true")));
    }
}
