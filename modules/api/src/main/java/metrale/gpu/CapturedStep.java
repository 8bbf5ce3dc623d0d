// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Optional;

/**
 * A steady-state step run as a CUDA graph, kept honest by the launch trace. Made by
 * {@link Gpu#capturedStep}; each {@link #run(Stream)} enqueues one execution of the region.
 *
 * <ul>
 *   <li>The first {@link StepOptions#eagerRuns()} runs execute the region eagerly and record its
 *       ops (kernels, async memsets, device-to-device copies) as a launch trace.</li>
 *   <li>The next run captures the region into a graph, with the trace on, and diffs the captured
 *       trace against the last eager one. While they agree, later runs replay the graph. When they
 *       differ the region is not steady (a host value moved between runs): the diff is reported,
 *       the captured graph runs this once, and the step starts over with eager runs.</li>
 *   <li>A verification run ({@link StepOptions#verifyEvery()}, or {@link #runTraced}) executes the
 *       region eagerly with the trace and diffs it against what the graph holds. A difference is
 *       reported (or thrown, {@link StepOptions#throwOnMismatch()}). If only kernel argument values,
 *       grids, blocks or shared memory sizes changed (same ops, kinds and count), the graph's kernel
 *       nodes are updated in place ({@code cuGraphExecKernelNodeSetParams}), memsets and copies likewise;
 *       otherwise the next run captures again.</li>
 *   <li>{@link #set} changes a {@link StepParam} that the region passes to its launches
 *       ({@link KernelArgs#param}): the next run sets each kernel node that takes it in place, once
 *       per node, and launches the graph; the region does not run. Verification runs still run
 *       the region and diff it, so a value the region derives from a parameter, or a parameter it
 *       stopped passing, is found as any other host value.</li>
 *   <li>{@link #update} sets one kernel op's launch in the graph in place without running the
 *       region: for a host value the application knows has changed.</li>
 * </ul>
 *
 * <p>In-place updates need to know which graph node holds which traced op: that is so when the
 * graph's nodes form one chain (the region enqueues on its stream only) and every node is a traced
 * op. A region that forks onto other streams, or enqueues host copies, is recaptured instead
 * ({@link #inPlaceUnavailable()} says why). A memset node's destination and value, and a
 * device-to-device copy's ranges, are updated in place as well; a changed memset size is
 * recaptured. A recapture whose topology is unchanged updates the existing executable graph
 * ({@code cuGraphExecUpdate}) instead of instantiating a new one.
 *
 * <p>Reports use the launch trace's format ({@link metrale.telemetry.LaunchTrace#endAndDiff}):
 * {@code "#i module::func [kernel] arg2 0x1 -> 0x2 (Δ 1)"}, so the op index {@code i} is the one
 * {@link #update} takes. Only the ops the running thread enqueues are recorded; the runtime's
 * own launch trace is left as it is (if it is on, it records the step's ops too).
 *
 * <p>Threads: the methods are synchronized; a step is meant to be run by one thread at a time.
 * {@link #close()} destroys the graph and is idempotent; a run after it throws
 * {@link IllegalStateException}.
 */
public interface CapturedStep extends AutoCloseable {

    /** The work of one step: enqueue it on {@code stream}. It must be capturable (no syncs, no blocking copies). */
    @FunctionalInterface
    interface Region {
        /**
         * Enqueues the step's work.
         *
         * @param gpu    the runtime the step was made by
         * @param stream the stream the step runs on
         */
        void enqueue(Gpu gpu, Stream stream);
    }

    /** Where a step is in its life. */
    enum Phase {
        /** Runs execute the region eagerly with the trace. */
        EAGER,
        /** The next run captures the region. */
        CAPTURE,
        /** Runs replay the graph. */
        REPLAY,
        /** Closed. */
        CLOSED
    }

    /**
     * The step's counters.
     *
     * @param runs          every {@link #run} and {@link #runTraced}
     * @param eagerRuns     runs that executed the region eagerly, verification runs included
     * @param captures      captures into a graph, the first one included
     * @param replays       runs that replayed the graph
     * @param updates       in-place updates: verification runs that updated the graph, and {@link #update} calls
     * @param recaptures    captures after the first, because a diff showed a structural change or an unsteady region
     * @param execUpdates   recaptures applied to the existing executable graph ({@code cuGraphExecUpdate},
     *                      the topology being the same) instead of instantiating a new one
     * @param verifications verification runs
     * @param mismatches    diffs that were not empty (captured against eager, verification against graph)
     * @param paramSets     kernel nodes set in place for {@link #set}: one per node whose arguments a
     *                      set changed, at the run after it
     */
    record Stats(long runs, long eagerRuns, long captures, long replays, long updates, long recaptures,
                 long execUpdates, long verifications, long mismatches, long paramSets) {
    }

    /** {@return the name the step was made with} */
    String name();

    /**
     * Runs the step once on {@code stream}: eagerly, as a capture, or as a replay (see the class comment).
     *
     * @param stream a stream from {@link Gpu#createStream} (captures cannot use the legacy default stream)
     * @throws StepMismatchException on a verification run that found a difference, with
     *                               {@link StepOptions#throwOnMismatch()} on; the graph is already reconciled
     */
    void run(Stream stream);

    /**
     * Runs the step once as a verification run now (eagerly with the trace, diffed against the
     * graph, the graph updated in place or recapture scheduled), whatever the verification
     * interval. Before the first graph exists this is {@link #run}.
     *
     * @param stream the stream
     * @throws StepMismatchException as {@link #run}
     */
    void runTraced(Stream stream);

    /**
     * Sets kernel op {@code op}'s grid, block, shared memory and arguments in the graph, in place,
     * for replays after this call; the function stays.
     *
     * @param op     the op's index in the step's trace (the {@code #i} of a report)
     * @param config the launch configuration
     * @param args   the arguments; copied, so they may be refilled once this returns
     * @throws IllegalStateException     if the step holds no graph (not yet captured, or a recapture is due)
     *                                   or its graph cannot be updated in place (named why)
     * @throws IndexOutOfBoundsException if {@code op} is not an op of the graph
     * @throws IllegalArgumentException  if op {@code op} is not a kernel launch
     */
    void update(int op, LaunchConfig config, KernelArgs args);

    /**
     * Gives a parameter of the region a new value, without running the region. In the replay phase
     * the next run ({@link #run} or {@link #runTraced}) first sets the graph's kernel nodes whose
     * arguments changed, one {@code cuGraphExecKernelNodeSetParams} per node however many of its
     * arguments this and other sets changed, then launches the graph; a value equal to the one a
     * node holds changes nothing. Before the replay phase the value is what the region's next run
     * passes. Where the graph cannot be updated in place ({@link #inPlaceUnavailable()}), or the
     * driver refuses the node set (reported), the next run captures the region again.
     *
     * @param param a parameter the region passes to its launches with {@link KernelArgs#param}
     * @param value the new value; a bytes parameter's is copied
     * @param <T>   the parameter's value type
     * @throws IllegalStateException    if the step is closed
     * @throws IllegalArgumentException if {@code param} belongs to another step, if no launch of the
     *                                  graph (or, before the graph, of the region's last run) took it,
     *                                  or if {@code value} is of another type or, for a bytes parameter,
     *                                  another size; nothing is changed then
     * @throws NullPointerException     if {@code param} or {@code value} is null
     */
    <T> void set(StepParam<T> param, T value);

    /** {@return where the step is} */
    Phase phase();

    /** {@return the counters} */
    Stats stats();

    /** {@return the last non-empty diff report, with a first line saying which runs were compared} */
    Optional<String> lastDiff();

    /** {@return why the graph cannot be updated in place, or empty when it can (or no graph exists)} */
    Optional<String> inPlaceUnavailable();

    /** Destroys the graph. Idempotent; never throws. */
    @Override
    void close();
}
