// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.LeakDetection;
import metrale.gpu.LiveResource;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.StickyFaultException;
import metrale.gpu.sim.SimInitCheck;
import metrale.gpu.sim.UninitializedRead;

/**
 * The checks {@link GpuTest} makes after each run, for tests that open their own runtime.
 *
 * <p>In this order: the runtime's pending work is finished (so a fault no call surfaced yet
 * surfaces now); a latched sticky fault must be one the test declared, and a declared one must
 * have been latched; if none was latched, every live ledger allocation and every live resource of
 * {@link Gpu#liveResources()} (page-locked memory, streams, events, graphs, captured steps,
 * communicators) is a leak and every overwritten red zone is an overflow; with the simulator's initcheck on, every read of device
 * memory never written is a problem. Each problem names its call site: the allocation's, the
 * faulting call's, the buffer's.
 *
 * <pre>{@code
 * @Test
 * void aServiceFreesWhatItAllocates() {
 *     Gpu gpu = TestGpus.sim().redZoneBytes(256).open();
 *     try {
 *         new MyService(gpu).handle(request);
 *     } finally {
 *         // throws GpuCheckFailure listing e.g. "leak: 4096 byte(s) at 0x... allocated at
 *         // MyService.java:42 and never freed", then closes the runtime
 *         GpuChecks.verifyAndClose(gpu);
 *     }
 * }
 * }</pre>
 *
 * <p>A runtime the kit opens walks every site ({@link LeakDetection#ALL}). For another one, whose
 * level may be {@code sampled} or {@code off}, a line {@code "leak sites: 3 of 40 leaked allocations
 * have their site; 37 unsampled (leakDetection=sampled, 1 in 128)"} follows the leaks when some
 * have no site.
 *
 * <p>A leak it reports is marked reported ({@link Gpu#markLeaksReported()}), so closing the
 * runtime frees it without logging it a second time.
 */
public final class GpuChecks {

    private GpuChecks() {
    }

    /**
     * {@return the problems found, one line each; empty when the runtime is clean}
     *
     * <p>For a runtime already closed: a kit runtime ({@link TestGpus}) ran these checks when it
     * was closed and returns what they found then; any other runtime reports the resources its
     * close found still live ({@link Gpu#liveResources()}), as its device memory can no longer be read.
     *
     * @param gpu            a runtime, open or closed
     * @param expectedFaults the sticky errors the test latches on purpose; empty when it latches none
     */
    public static List<String> problems(Gpu gpu, Set<CudaError> expectedFaults) {
        List<String> out = new ArrayList<>();
        if (gpu.isClosed()) {
            Optional<List<String>> atClose = CheckedGpu.problemsAtClose(gpu);
            if (atClose.isPresent() && atClose.get() != null) {
                return atClose.get();
            }
            // Closed elsewhere: the runtime's own inventory at close is all that can still be read.
            resourceLeaks(gpu, gpu.liveResources(), out);
            return out;
        }
        Optional<SimInitCheck> initCheck = gpu.fault().isPresent() ? Optional.empty() : gpu.unwrap(SimInitCheck.class);
        boolean surfacedHere = false;
        if (gpu.fault().isEmpty()) {
            try {
                gpu.synchronize();
            } catch (StickyFaultException e) {
                // Another thread latched it meanwhile; reported below from the latch.
            } catch (GpuException e) {
                surfacedHere = gpu.fault().isPresent();
                if (!surfacedHere) {
                    out.add("finishing the test's pending work failed: " + e.getMessage());
                }
            }
        }
        Optional<StickyFaultException> fault = gpu.fault();
        if (fault.isPresent()) {
            StickyFaultException f = fault.get();
            CudaError error = f.original().error();
            String where = surfacedHere
                    ? "when the check ran the work the test left pending (the test never synchronized it)"
                    : "during " + f.faultCall() + " at " + f.faultSite();
            if (expectedFaults.isEmpty()) {
                out.add("sticky fault " + error.name() + " latched " + where
                        + ", which the test did not declare (@ExpectFault(CudaError." + error.name() + ")): "
                        + f.original().getMessage());
            } else if (!expectedFaults.contains(error)) {
                out.add("sticky fault " + error.name() + " latched " + where + ", but the test declared only "
                        + names(expectedFaults) + ": " + f.original().getMessage());
            }
        } else {
            if (!expectedFaults.isEmpty()) {
                out.add("the test declared a sticky fault " + names(expectedFaults) + " but none was latched");
            }
            leaks(gpu, out);
            for (RedZoneViolation v : gpu.freedRedzoneViolations()) {
                out.add("buffer overflow: " + v + " (found when it was freed)");
            }
            for (RedZoneViolation v : gpu.findRedzoneViolations()) {
                out.add("buffer overflow: " + v);
            }
        }
        initCheck.ifPresent(ic -> {
            for (UninitializedRead r : ic.uninitializedReads()) {
                out.add("uninitialized read: " + r);
            }
        });
        return out;
    }

    private static void leaks(Gpu gpu, List<String> out) {
        List<Allocation> live = gpu.liveAllocations();
        for (Allocation a : live) {
            out.add("leak: " + a.bytes() + " byte(s) at " + a.ptr() + " (allocation #" + a.index()
                    + (a.managed() ? ", managed" : "") + ") allocated at " + a.site() + " and never freed");
        }
        coverage(gpu, live.stream().map(Allocation::site).toList(), "leaked allocations", out);
        resourceLeaks(gpu, gpu.liveResources(), out);
        gpu.markLeaksReported();   // the failure names them: close() frees them without a second WARNING
    }

    private static void resourceLeaks(Gpu gpu, List<LiveResource> live, List<String> out) {
        for (LiveResource r : live) {
            out.add("leak: " + r.kind().label() + " " + r.handle() + " created at " + r.site()
                    + " and never " + r.kind().released());
        }
        coverage(gpu, live.stream().map(LiveResource::site).toList(), "leaked resources", out);
    }

    /** Says how many of the leaks have no site, when some have none: a runtime opened outside the kit may sample. */
    private static void coverage(Gpu gpu, List<String> sites, String things, List<String> out) {
        long named = sites.stream().filter(LeakDetection::hasSite).count();
        String line = gpu.options().leakDetection().coverage(named, sites.size(), things, gpu.options().leakDetectionSample());
        if (!line.isEmpty()) {
            out.add("leak sites: " + line);
        }
    }

    /**
     * Checks the runtime.
     *
     * @param gpu            an open runtime
     * @param expectedFaults the sticky errors the test latches on purpose
     * @throws GpuCheckFailure naming every problem, if there is one
     */
    public static void verify(Gpu gpu, CudaError... expectedFaults) {
        List<String> problems = problems(gpu, asSet(expectedFaults));
        if (!problems.isEmpty()) {
            throw new GpuCheckFailure(problems);
        }
    }

    /**
     * Checks the runtime, then closes it whatever the check found (closing frees what is left).
     *
     * @param gpu            an open runtime
     * @param expectedFaults the sticky errors the test latches on purpose
     * @throws GpuCheckFailure naming every problem, if there is one
     */
    public static void verifyAndClose(Gpu gpu, CudaError... expectedFaults) {
        try {
            verify(gpu, expectedFaults);
        } finally {
            CheckedGpu.closeChecked(gpu);
        }
    }

    private static String names(Set<CudaError> errors) {
        return errors.stream().map(CudaError::name).sorted().toList().toString();
    }

    static Set<CudaError> asSet(CudaError... errors) {
        return errors.length == 0 ? Set.of() : EnumSet.copyOf(Arrays.asList(errors));
    }
}
