// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a {@link CapturedStep} runs.
 *
 * @param eagerRuns       eager traced runs before the first capture, at least 1
 * @param verifyEvery     every Nth replay-phase run is a verification run; 0 for none
 * @param throwOnMismatch whether a verification run that finds a difference throws
 *                        {@link StepMismatchException} (after reconciling the graph)
 * @param maxReport       the most differing ops a report details, at least 0
 * @param reporter        receives every non-empty diff report; the default logs it as a warning
 * @param captureMode     the capture mode of the step's captures
 * @param checkReplay     whether a verification run also replays the graph from the state the
 *                        eager run started from and compares the device memory both leave, so a
 *                        graph whose nodes do not hold what the trace says is reported
 */
public record StepOptions(int eagerRuns, int verifyEvery, boolean throwOnMismatch, int maxReport,
                          Consumer<String> reporter, CaptureMode captureMode, boolean checkReplay) {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException if a count is out of range
     * @throws NullPointerException     if {@code reporter} or {@code captureMode} is null
     */
    public StepOptions {
        if (eagerRuns < 1) {
            throw new IllegalArgumentException("StepOptions: eagerRuns must be at least 1, got " + eagerRuns);
        }
        if (verifyEvery < 0) {
            throw new IllegalArgumentException("StepOptions: verifyEvery must be 0 (off) or positive, got " + verifyEvery);
        }
        if (maxReport < 0) {
            throw new IllegalArgumentException("StepOptions: maxReport must be at least 0, got " + maxReport);
        }
        Objects.requireNonNull(reporter, "reporter");
        Objects.requireNonNull(captureMode, "captureMode");
    }

    /** {@return one eager run, no verification, reports logged, 8 ops detailed, global capture mode, no replay check} */
    public static StepOptions defaults() {
        return new StepOptions(1, 0, false, 8,
                report -> LOG.log(System.Logger.Level.WARNING, "metrale-gpu: " + report), CaptureMode.GLOBAL, false);
    }

    /**
     * {@return these options with another count of eager runs}
     *
     * @param n at least 1
     */
    public StepOptions eagerRuns(int n) {
        return new StepOptions(n, verifyEvery, throwOnMismatch, maxReport, reporter, captureMode, checkReplay);
    }

    /**
     * {@return these options with a verification run every {@code n} runs of the replay phase}
     *
     * @param n 0 for none
     */
    public StepOptions verifyEvery(int n) {
        return new StepOptions(eagerRuns, n, throwOnMismatch, maxReport, reporter, captureMode, checkReplay);
    }

    /**
     * {@return these options with verification differences thrown or only reported}
     *
     * @param b whether to throw
     */
    public StepOptions throwOnMismatch(boolean b) {
        return new StepOptions(eagerRuns, verifyEvery, b, maxReport, reporter, captureMode, checkReplay);
    }

    /**
     * {@return these options with another report length}
     *
     * @param n the most differing ops to detail
     */
    public StepOptions maxReport(int n) {
        return new StepOptions(eagerRuns, verifyEvery, throwOnMismatch, n, reporter, captureMode, checkReplay);
    }

    /**
     * {@return these options with another receiver of reports}
     *
     * @param r receives each report
     */
    public StepOptions reporter(Consumer<String> r) {
        return new StepOptions(eagerRuns, verifyEvery, throwOnMismatch, maxReport, r, captureMode, checkReplay);
    }

    /**
     * {@return these options with another capture mode}
     *
     * @param m the mode
     */
    public StepOptions captureMode(CaptureMode m) {
        return new StepOptions(eagerRuns, verifyEvery, throwOnMismatch, maxReport, reporter, m, checkReplay);
    }

    /**
     * {@return these options with the replay check of verification runs on or off}
     *
     * <p>With it on, a verification run saves the device allocations the graph's ops name (kernel
     * pointer arguments, memset and copy ranges, matched against the ledger) and synchronizes the
     * device; runs the region eagerly; saves what that left; restores the saved state, replays the
     * graph and compares. Memory the region's kernels reach only through pointers held in device
     * memory is neither saved nor restored, so the replay writes it a second time: turn the check
     * on only for steps whose kernels write what their arguments name.
     *
     * @param b whether to check
     */
    public StepOptions checkReplay(boolean b) {
        return new StepOptions(eagerRuns, verifyEvery, throwOnMismatch, maxReport, reporter, captureMode, b);
    }
}
