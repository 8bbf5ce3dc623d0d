// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.StepMismatchException;
import metrale.gpu.StepOptions;
import metrale.gpu.StepParam;
import metrale.gpu.Stream;
import metrale.gpu.spi.Driver;
import metrale.telemetry.LaunchTrace;
import metrale.telemetry.OpKind;
import metrale.telemetry.TraceEntry;

/**
 * The runtime's {@link CapturedStep}: a small state machine over the public capture and graph
 * calls of {@link GpuRuntime}, and the step recorder and graph-update calls of its {@link StepPart}.
 *
 * <p>Step parameters: the graph's kernel arguments that came from a {@link StepParam} are indexed
 * by parameter ({@link #binds}); {@link #set} writes the new value into what the step believes the
 * graph holds ({@link #held}, {@link #heldArgs}) and marks the ops it changed, and the next run sets
 * each marked op's node once ({@link #flush}) before it launches the graph.
 */
final class CapturedStepImpl implements CapturedStep {

    private final GpuRuntime rt;
    private final StepPart steps;
    private final String name;
    private final Region region;
    private final StepOptions options;
    private final LaunchTrace names;

    private Phase phase = Phase.EAGER;
    private int eagerLeft;
    /** The run the next capture is diffed against: the last eager run's, with later parameter sets applied. */
    private StepRecorder ref;

    private GraphHandle graph;
    /** What the graph holds, op by op; updated with each in-place update and each parameter set. */
    private TraceEntry[] held;
    /** The kernel arguments of each op of {@link #held}, parameters marked; {@code null} for a memset or copy. */
    private StepRecorder.Args[] heldArgs;
    /** Each parameter among {@link #heldArgs}: its {@code op, argument} pairs, flattened. */
    private IdentityHashMap<StepParam<?>, int[]> binds;
    /** Ops whose node a parameter set changed and the next run sets, in {@link #dirtyOps}. */
    private boolean[] dirty;
    private int[] dirtyOps;
    private int dirtyCount;
    /** The parameters this step claimed; given up at close. */
    private final Set<StepParam<?>> owned = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The node of each op, or {@code null} when the graph cannot be updated in place. */
    private long[] nodes;
    private String noInPlace;
    private KernelArgs scratch;

    private long sinceVerify;
    private long runs;
    private long eagerRunCount;
    private long captures;
    private long replays;
    private long updates;
    private long recaptures;
    private long execUpdates;
    private long verifications;
    private long mismatches;
    private long paramSets;
    private String lastDiff;

    CapturedStepImpl(GpuRuntime rt, StepPart steps, String name, Region region, StepOptions options) {
        this.rt = rt;
        this.steps = steps;
        this.name = name;
        this.region = region;
        this.options = options;
        this.names = rt.telemetry().trace();
        this.eagerLeft = options.eagerRuns();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public synchronized void run(Stream stream) {
        Objects.requireNonNull(stream, "stream");
        open();
        runs++;
        if (phase == Phase.REPLAY) {
            flush();
        }
        switch (phase) {
            case EAGER -> {
                ref = eager(stream);
                if (--eagerLeft == 0) {
                    phase = Phase.CAPTURE;
                }
            }
            case CAPTURE -> capture(stream);
            case REPLAY -> {
                if (options.verifyEvery() > 0 && ++sinceVerify >= options.verifyEvery()) {
                    sinceVerify = 0;
                    verify(stream);
                } else {
                    rt.launchGraph(graph, stream);
                    replays++;
                }
            }
            case CLOSED -> throw new AssertionError();
        }
    }

    @Override
    public synchronized void runTraced(Stream stream) {
        Objects.requireNonNull(stream, "stream");
        open();
        if (phase != Phase.REPLAY) {
            run(stream);
            return;
        }
        runs++;
        flush();
        if (phase != Phase.REPLAY) {
            capture(stream);
            return;
        }
        sinceVerify = 0;
        verify(stream);
    }

    @Override
    public synchronized <T> void set(StepParam<T> param, T value) {
        Objects.requireNonNull(param, "param");
        open();
        ParamDoor.Door door = ParamDoor.door();
        Object owner = door.owner(param);
        if (owner != null && owner != this) {
            throw refused(param, "parameter '" + param.name() + "' " + ownedElsewhere(owner));
        }
        if (phase == Phase.REPLAY) {
            int[] slots = binds.get(param);
            if (slots == null) {
                throw refused(param, "no launch of the graph takes parameter '" + param.name()
                        + "' (the region passed it to none with KernelArgs.param in the run the graph was captured from)");
            }
            door.store(param, value);
            setHeld(slots, door.bits(param), door.wide(param));
        } else if (ref != null) {
            if (!takes(ref, param)) {
                throw refused(param, "the region's last run passed parameter '" + param.name() + "' to no launch with KernelArgs.param");
            }
            door.store(param, value);
            ref.patch(param, door.bits(param), door.wide(param));
        } else {
            // Before the first run nothing shows yet whether the region takes it; the set claims it.
            boolean claimed = owner == null;
            if (claimed) {
                Object o = door.claim(param, this);
                if (o != this) {
                    throw refused(param, "parameter '" + param.name() + "' " + ownedElsewhere(o));
                }
            }
            try {
                door.store(param, value);
            } catch (RuntimeException e) {
                if (claimed) {
                    door.release(param, this);
                }
                throw e;
            }
            owned.add(param);
        }
    }

    private IllegalArgumentException refused(StepParam<?> param, String why) {
        return new IllegalArgumentException("captured step '" + name + "': set(" + param.name() + "): " + why);
    }

    /** {@return the end of a refusal: "is a parameter of captured step '...'", and why that matters} */
    private static String ownedElsewhere(Object owner) {
        return "is a parameter of captured step '" + ((CapturedStep) owner).name()
                + "'; a parameter belongs to one step until that step closes";
    }

    @Override
    public synchronized void update(int op, LaunchConfig config, KernelArgs args) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(args, "args");
        open();
        if (phase != Phase.REPLAY) {
            throw new IllegalStateException("captured step '" + name + "': update(" + op + "): the step holds no graph to update ("
                    + (phase == Phase.EAGER ? "still in its eager runs" : "a capture is due") + ")");
        }
        if (nodes == null) {
            throw new IllegalStateException("captured step '" + name + "': update(" + op + "): " + noInPlace);
        }
        Objects.checkIndex(op, held.length);
        TraceEntry e = held[op];
        if (e.kind() != OpKind.KERNEL) {
            throw new IllegalArgumentException("captured step '" + name + "': update(" + op + "): op " + op + " is a "
                    + e.kind().label() + ", not a kernel launch");
        }
        StepRecorder.Args a = StepRecorder.Args.of(args);
        claim(List.of(a), op, "update(" + op + ")");
        steps.setKernelNode(graph, nodes[op], e.func(), config, args);
        held[op] = kernelEntry(e.func(), config, args.words(), args.argKinds());
        boolean rebind = !a.sameParams(heldArgs[op]);
        heldArgs[op] = a;
        dirty[op] = false;
        if (rebind) {
            binds = bindings(heldArgs);
        }
        updates++;
    }

    @Override
    public synchronized Phase phase() {
        return phase;
    }

    @Override
    public synchronized Stats stats() {
        return new Stats(runs, eagerRunCount, captures, replays, updates, recaptures, execUpdates, verifications, mismatches,
                paramSets);
    }

    @Override
    public synchronized Optional<String> lastDiff() {
        return Optional.ofNullable(lastDiff);
    }

    @Override
    public synchronized Optional<String> inPlaceUnavailable() {
        return graph == null ? Optional.empty() : Optional.ofNullable(noInPlace);
    }

    @Override
    public synchronized void close() {
        if (phase == Phase.CLOSED) {
            return;
        }
        phase = Phase.CLOSED;
        steps.gone(this);
        dropGraph();
        ref = null;
        ParamDoor.Door door = owned.isEmpty() ? null : ParamDoor.door();
        for (StepParam<?> p : owned) {
            door.release(p, this);
        }
        owned.clear();
        if (scratch != null) {
            scratch.close();
            scratch = null;
        }
    }

    @Override
    public String toString() {
        return "CapturedStep[" + name + ", " + phase + "]";
    }

    // ---- the runs ----------------------------------------------------------------------------

    private StepRecorder eager(Stream stream) {
        StepRecorder rec = new StepRecorder();
        StepRecorder outer = steps.beginTrace(rec);
        try {
            region.enqueue(rt, stream);
        } finally {
            steps.endTrace(outer);
        }
        eagerRunCount++;
        claim(rec.args, 0, "the region");
        return rec;
    }

    private void capture(Stream stream) {
        StepRecorder rec = new StepRecorder();
        rt.beginCapture(stream, options.captureMode());
        StepRecorder outer = steps.beginTrace(rec);
        try {
            region.enqueue(rt, stream);
            claim(rec.args, 0, "the region");
        } catch (RuntimeException | Error e) {
            steps.endTrace(outer);
            try {
                rt.abortCaptureIfActive(stream);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        steps.endTrace(outer);
        GraphHandle old = graph;
        int[] result = new int[1];
        GraphHandle g;
        try {
            g = steps.endCaptureInto(stream, old, result);
        } catch (RuntimeException | Error e) {
            dropGraph();
            throw e;
        }
        if (captures++ > 0) {
            recaptures++;
        }
        if (g == old) {
            // cuGraphExecUpdate applied the new graph to the exec; its nodes, which in-place updates
            // address, are still those of the graph it was instantiated from, paired op by op.
            hold(rec);
            execUpdates++;
        } else {
            dropGraph();
            install(g, rec);
        }
        // The capture ran nothing: this run's work is the graph's first replay.
        rt.launchGraph(g, stream);
        String d = diff(ref == null ? null : ref.entries, rec.entries);
        if (d == null) {
            phase = Phase.REPLAY;
            sinceVerify = 0;
            return;
        }
        mismatches++;
        // The region enqueued other values while being captured than in the eager run before:
        // replaying would repeat this run's values, so the step is not steady yet.
        dropGraph();
        phase = Phase.EAGER;
        eagerLeft = options.eagerRuns();
        report("run " + runs + " (captured) differs from the eager run before it, so the region is not steady: "
                + "the captured graph ran once and was dropped; the next " + eagerLeft + " run(s) are eager again", d, false);
    }

    private void verify(Stream stream) {
        verifications++;
        Saved before = options.checkReplay() ? save(held) : null;
        StepRecorder rec = eager(stream);
        String d = diff(Arrays.asList(held), rec.entries);
        String moved = movedParams(rec);
        String what = null;
        if (d != null || moved != null) {
            mismatches++;
            what = reconcile(rec);
            if (d == null) {
                d = "0 differing op(s) of " + rec.entries.size() + " in the trace";
            }
            if (moved != null) {
                d = d + "\n" + moved;
            }
        }
        if (before != null && phase == Phase.REPLAY) {
            String wrong = checkReplay(before, rec, stream);
            if (wrong != null) {
                if (d == null) {
                    mismatches++;
                }
                phase = Phase.CAPTURE;
                ref = rec;
                what = (what == null ? "" : what + "; and ") + wrong + "; the next run captures again";
                if (d == null) {
                    d = "0 differing op(s) of " + held.length + " in the trace";
                }
            }
        }
        if (what != null) {
            report("verification run " + runs + " differs from what the graph holds: " + what, d, true);
        }
    }

    /** Brings the graph to the verification trace: in place where it can, else by a recapture. {@return what it did} */
    private String reconcile(StepRecorder rec) {
        String action;
        String structural = structuralChange(rec);
        GpuException refused = null;
        if (structural == null && nodes != null) {
            int k = 0;
            try {
                for (int i = 0; i < held.length; i++) {
                    TraceEntry c = rec.entries.get(i);
                    StepRecorder.Args ca = rec.args.get(i);
                    if (c.equals(held[i])) {
                        if (ca != null && !ca.sameParams(heldArgs[i])) {
                            // Same values, other parameters: the node holds the values already.
                            heldArgs[i] = heldArgs[i].withParams(ca.params());
                        }
                        continue;
                    }
                    if (c.kind() == OpKind.MEMSET) {
                        steps.setMemsetNode(graph, nodes[i], c.arg(0), (int) c.arg(1), c.arg(2));
                    } else if (c.kind() == OpKind.D2D) {
                        steps.setCopyNode(graph, nodes[i], c.arg(0), c.arg(1), c.arg(2));
                    } else {
                        LaunchConfig cfg = new LaunchConfig(Dim3.of(c.gridX(), c.gridY(), c.gridZ()),
                                Dim3.of(c.blockX(), c.blockY(), c.blockZ()), c.sharedMemBytes());
                        steps.setKernelNode(graph, nodes[i], c.func(), cfg, ca.fill(scratch()));
                    }
                    held[i] = c;
                    heldArgs[i] = ca;
                    k++;
                }
            } catch (GpuException e) {
                if (e.error().isSticky()) {
                    throw e;
                }
                refused = e;
            }
            if (refused == null) {
                if (k > 0) {
                    updates++;
                }
                binds = bindings(heldArgs);
            }
            action = refused == null ? "updated " + k + " node(s) of the graph in place" : null;
        } else {
            action = null;
        }
        if (action == null) {
            phase = Phase.CAPTURE;
            ref = rec;
            action = (structural != null ? structural
                    : refused != null ? "the driver refused the in-place update (" + refused.getMessage() + ")"
                    : "only arguments changed, but " + noInPlace)
                    + "; the next run captures again";
        }
        return action;
    }

    // ---- the replay check ----------------------------------------------------------------------

    /** The device allocations a graph's ops name, and their bytes before a verification run. */
    private record Saved(long[][] ranges, byte[][] bytes) {
    }

    /** Every argument word of {@code ops}: the pointers among them are matched against the ledger. */
    private static long[] words(TraceEntry[] ops) {
        int n = 0;
        for (TraceEntry e : ops) {
            n += e.argc();
        }
        long[] out = new long[n];
        int k = 0;
        for (TraceEntry e : ops) {
            for (int i = 0; i < e.argc(); i++) {
                out[k++] = e.arg(i);
            }
        }
        return out;
    }

    /** {@return the allocations {@code ops} name, saved; {@code null} when the check cannot run} */
    private Saved save(TraceEntry[] ops) {
        boolean[] unsaveable = new boolean[1];
        long[][] ranges = steps.stepBuffers(words(ops), unsaveable);
        if (unsaveable[0] || ranges.length == 0) {
            return null;
        }
        return new Saved(ranges, steps.stepRead(ranges));
    }

    /**
     * Replays the graph from the state the eager run started from and compares the device memory
     * both leave; then puts back what the eager run left, so the run's effect is the eager run's.
     * {@return what differs, naming the allocation and the ops whose arguments name it, or
     * {@code null} when the results agree or the check cannot run (the eager run named memory the
     * graph's ops did not, which was not saved)}
     */
    private String checkReplay(Saved before, StepRecorder rec, Stream stream) {
        boolean[] unsaveable = new boolean[1];
        long[][] now = steps.stepBuffers(words(rec.entries.toArray(new TraceEntry[0])), unsaveable);
        if (unsaveable[0] || !covered(before.ranges(), now)) {
            return null;
        }
        byte[][] eagerLeft = steps.stepRead(before.ranges());
        steps.stepWrite(before.ranges(), before.bytes());
        steps.stepReplay(graph, stream);
        byte[][] replayLeft = steps.stepRead(before.ranges());
        steps.stepWrite(before.ranges(), eagerLeft);
        for (int b = 0; b < before.ranges().length; b++) {
            int at = Arrays.mismatch(eagerLeft[b], replayLeft[b]);
            if (at >= 0) {
                long base = before.ranges()[b][0];
                return "a replay of the graph leaves other bytes than the eager run in the allocation at 0x"
                        + Long.toHexString(base) + " (" + before.ranges()[b][1] + " bytes), first at +" + at
                        + " (eager 0x" + Integer.toHexString(eagerLeft[b][at] & 0xff) + ", replay 0x"
                        + Integer.toHexString(replayLeft[b][at] & 0xff) + "), so a node does not hold what the trace says: "
                        + touching(rec.entries, base, before.ranges()[b][1]);
            }
        }
        return null;
    }

    private static boolean covered(long[][] saved, long[][] ranges) {
        for (long[] r : ranges) {
            boolean in = false;
            for (long[] s : saved) {
                in |= s[0] == r[0];
            }
            if (!in) {
                return false;
            }
        }
        return true;
    }

    /** {@return the ops and argument positions that name memory in {@code [base, base + bytes)}} */
    private String touching(List<TraceEntry> ops, long base, long bytes) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < ops.size(); i++) {
            TraceEntry e = ops.get(i);
            for (int a = 0; a < e.argc(); a++) {
                if (Long.compareUnsigned(e.arg(a) - base, bytes) < 0) {
                    if (!sb.isEmpty()) {
                        sb.append(", ");
                    }
                    sb.append("the node of op #").append(i).append(' ').append(names.nameOf(e.func()))
                            .append(" [").append(e.kind().label()).append("] whose argument ").append(a)
                            .append(" names it");
                }
            }
        }
        return sb.isEmpty() ? "no op names it" : sb.toString();
    }

    // ---- the graph ---------------------------------------------------------------------------

    private void install(GraphHandle g, StepRecorder rec) {
        graph = g;
        hold(rec);
        nodes = null;
        noInPlace = null;
        long[][] nt;
        try {
            nt = steps.graphNodes(g);
        } catch (GpuException e) {
            if (e.error() != CudaError.NOT_SUPPORTED) {
                throw e;
            }
            noInPlace = "the graph cannot be updated in place: " + e.getMessage();
            return;
        }
        if (nt[0].length != held.length) {
            noInPlace = "the graph cannot be updated in place: it has " + nt[0].length + " node(s) for " + held.length
                    + " traced op(s) (the region enqueues work the trace does not record, such as a host copy or a graph launch)";
            return;
        }
        int[] order = chain(nt[0], nt[2], nt[3]);
        if (order == null) {
            noInPlace = "the graph cannot be updated in place: its nodes are not one chain (the region forks onto"
                    + " other streams), so which node holds which traced op is unknown";
            return;
        }
        long[] n = new long[order.length];
        long[] types = new long[order.length];
        for (int i = 0; i < order.length; i++) {
            n[i] = nt[0][order[i]];
            types[i] = nt[1][order[i]];
        }
        for (int i = 0; i < n.length; i++) {
            int want = switch (held[i].kind()) {
                case KERNEL -> Driver.NODE_KERNEL;
                case MEMSET -> Driver.NODE_MEMSET;
                case D2D -> Driver.NODE_MEMCPY;
            };
            if (types[i] != want) {
                noInPlace = "the graph cannot be updated in place: node " + i + " has type " + types[i]
                        + " where op #" + i + " is a " + held[i].kind().label();
                return;
            }
        }
        nodes = n;
    }

    /** Makes {@code rec}'s ops what the graph holds, with their parameters indexed and no node pending a set. */
    private void hold(StepRecorder rec) {
        held = rec.entries.toArray(new TraceEntry[0]);
        heldArgs = rec.args.toArray(new StepRecorder.Args[0]);
        binds = bindings(heldArgs);
        dirty = new boolean[held.length];
        dirtyOps = new int[held.length];
        dirtyCount = 0;
    }

    /** {@return each parameter among {@code args} with its {@code op, argument} pairs, flattened} */
    private static IdentityHashMap<StepParam<?>, int[]> bindings(StepRecorder.Args[] args) {
        IdentityHashMap<StepParam<?>, int[]> m = new IdentityHashMap<>();
        for (int op = 0; op < args.length; op++) {
            StepRecorder.Args a = args[op];
            if (a == null || a.params() == null) {
                continue;
            }
            for (int i = 0; i < a.params().length; i++) {
                StepParam<?> p = a.params()[i];
                if (p != null) {
                    int[] had = m.get(p);
                    int[] now = had == null ? new int[2] : Arrays.copyOf(had, had.length + 2);
                    now[now.length - 2] = op;
                    now[now.length - 1] = i;
                    m.put(p, now);
                }
            }
        }
        return m;
    }

    /**
     * Gives the arguments at {@code slots} a parameter's new value in {@link #held} and
     * {@link #heldArgs}, and marks each op whose arguments changed for the next run's
     * {@link #flush}; where the graph cannot be updated in place, the next run captures again.
     */
    private void setHeld(int[] slots, long bits, byte[] wide) {
        boolean changed = false;
        for (int k = 0; k < slots.length; k += 2) {
            int op = slots[k];
            int arg = slots[k + 1];
            StepRecorder.Args a = heldArgs[op];
            if (a.holds(arg, bits, wide)) {
                continue;
            }
            a = a.with(arg, bits, wide);
            heldArgs[op] = a;
            held[op] = StepRecorder.withWord(held[op], arg, a.word(arg));
            changed = true;
            if (!dirty[op]) {
                dirty[op] = true;
                dirtyOps[dirtyCount++] = op;
            }
        }
        if (changed && nodes == null) {
            // The region's trace with the new value is what the capture must find.
            phase = Phase.CAPTURE;
            ref = StepRecorder.of(held, heldArgs);
            clearDirty();
        }
    }

    /**
     * Sets the node of every op a parameter set changed, once each, for the launch that follows.
     * A driver that refuses makes this run capture the region instead (reported); any other
     * failure is thrown, the next run capturing again.
     */
    private void flush() {
        if (dirtyCount == 0) {
            return;
        }
        try {
            for (int k = 0; k < dirtyCount; k++) {
                int op = dirtyOps[k];
                if (!dirty[op]) {
                    continue;   // an update() of the op since set the whole launch
                }
                TraceEntry e = held[op];
                LaunchConfig cfg = new LaunchConfig(Dim3.of(e.gridX(), e.gridY(), e.gridZ()),
                        Dim3.of(e.blockX(), e.blockY(), e.blockZ()), e.sharedMemBytes());
                steps.setKernelNode(graph, nodes[op], e.func(), cfg, heldArgs[op].fill(scratch()));
                dirty[op] = false;
                paramSets++;
            }
        } catch (GpuException e) {
            if (e.error().isSticky()) {
                throw e;
            }
            recaptureHeld();
            String r = "captured step '" + name + "': run " + runs + ": the driver refused setting a parameter's node in place ("
                    + e.getMessage() + "); this run captures the region again";
            lastDiff = r;
            options.reporter().accept(r);
            return;
        } catch (RuntimeException e) {
            recaptureHeld();
            throw e;
        }
        clearDirty();
    }

    /** The graph may not hold what {@link #held} says: the next capture takes it as the trace to find. */
    private void recaptureHeld() {
        clearDirty();
        phase = Phase.CAPTURE;
        ref = StepRecorder.of(held, heldArgs);
    }

    private void clearDirty() {
        for (int k = 0; k < dirtyCount; k++) {
            dirty[dirtyOps[k]] = false;
        }
        dirtyCount = 0;
    }

    /**
     * Claims for this step every parameter among {@code args}, the arguments of ops {@code firstOp} on.
     *
     * @throws IllegalArgumentException if one belongs to another step
     */
    private void claim(List<StepRecorder.Args> args, int firstOp, String who) {
        ParamDoor.Door door = null;
        for (int op = 0; op < args.size(); op++) {
            StepRecorder.Args a = args.get(op);
            if (a == null || a.params() == null) {
                continue;
            }
            for (int i = 0; i < a.params().length; i++) {
                StepParam<?> p = a.params()[i];
                if (p == null || owned.contains(p)) {
                    continue;
                }
                door = door == null ? ParamDoor.door() : door;
                Object o = door.claim(p, this);
                if (o != this) {
                    throw new IllegalArgumentException("captured step '" + name + "': " + who + " passed parameter '"
                            + p.name() + "' to a launch (op #" + (firstOp + op) + ", argument " + i + "), but it " + ownedElsewhere(o));
                }
                owned.add(p);
            }
        }
    }

    /** {@return whether a launch of {@code rec} took {@code p}} */
    private static boolean takes(StepRecorder rec, StepParam<?> p) {
        for (StepRecorder.Args a : rec.args) {
            if (a != null && a.params() != null) {
                for (StepParam<?> q : a.params()) {
                    if (q == p) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * {@return the arguments where the verification run passes another parameter, or a plain value
     * for a parameter, than the graph's launch, one line each; {@code null} if none (or the op
     * count differs, a structural change)}
     */
    private String movedParams(StepRecorder rec) {
        if (rec.entries.size() != held.length) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (int op = 0; op < held.length; op++) {
            StepRecorder.Args h = heldArgs[op];
            StepRecorder.Args c = rec.args.get(op);
            if (h == null || c == null || h.sameParams(c)) {
                continue;
            }
            int n = Math.min(h.kinds().length, c.kinds().length);
            for (int i = 0; i < n; i++) {
                if (h.param(i) != c.param(i)) {
                    sb.append(sb.isEmpty() ? "" : "\n").append('#').append(op).append(' ').append(names.nameOf(held[op].func()))
                            .append(" [kernel] arg").append(i).append(": ").append(describe(h.param(i))).append(" -> ")
                            .append(describe(c.param(i)));
                }
            }
        }
        return sb.isEmpty() ? null : "parameters moved:\n" + sb;
    }

    private static String describe(StepParam<?> p) {
        return p == null ? "a plain value" : "parameter '" + p.name() + "'";
    }

    /**
     * {@return the node indices in dependency order if the edges make one chain, else {@code null}}
     * Work captured on one stream is a chain in enqueue order, which is the trace's order; the
     * order {@code cuGraphGetNodes} returns is not documented, so the edges decide.
     */
    static int[] chain(long[] nodes, long[] from, long[] to) {
        int n = nodes.length;
        if (from.length != Math.max(0, n - 1)) {
            return null;
        }
        HashMap<Long, Integer> index = new HashMap<>();
        for (int i = 0; i < n; i++) {
            index.put(nodes[i], i);
        }
        int[] next = new int[n];
        boolean[] hasPrev = new boolean[n];
        Arrays.fill(next, -1);
        for (int e = 0; e < from.length; e++) {
            Integer a = index.get(from[e]);
            Integer b = index.get(to[e]);
            if (a == null || b == null || next[a] != -1 || hasPrev[b]) {
                return null;
            }
            next[a] = b;
            hasPrev[b] = true;
        }
        int[] order = new int[n];
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (!hasPrev[i]) {
                for (int c = i; c != -1 && k <= n; c = next[c]) {
                    if (k == n) {
                        return null;
                    }
                    order[k++] = c;
                }
                break;
            }
        }
        return k == n ? order : null;
    }

    private void dropGraph() {
        if (graph == null) {
            return;
        }
        GraphHandle g = graph;
        graph = null;
        held = null;
        heldArgs = null;
        binds = null;
        dirty = null;
        dirtyOps = null;
        dirtyCount = 0;
        nodes = null;
        noInPlace = null;
        try {
            rt.destroyGraph(g);
        } catch (IllegalStateException | GpuException e) {
            // The runtime is closed (it destroyed the graph) or faulted: nothing left to release here.
        }
    }

    private KernelArgs scratch() {
        if (scratch == null) {
            scratch = new KernelArgs();
        }
        return scratch;
    }

    // ---- diffs -------------------------------------------------------------------------------

    /** {@return the launch trace's report of {@code prev} against {@code cur}, or {@code null} if they agree} */
    private String diff(List<TraceEntry> prev, List<TraceEntry> cur) {
        if (prev == null || prev.equals(cur)) {
            return null;
        }
        return names.diff(prev, cur, options.maxReport());
    }

    /** {@return why the verification trace cannot be applied to the graph node by node, or {@code null}} */
    private String structuralChange(StepRecorder rec) {
        List<TraceEntry> cur = rec.entries;
        if (cur.size() != held.length) {
            return "the op count changed (" + held.length + " -> " + cur.size() + ")";
        }
        for (int i = 0; i < held.length; i++) {
            TraceEntry p = held[i];
            TraceEntry c = cur.get(i);
            if (p.equals(c)) {
                continue;
            }
            if (p.kind() != c.kind() || p.func() != c.func()) {
                return "op #" + i + " is another op (" + names.nameOf(p.func()) + " [" + p.kind().label() + "] -> "
                        + names.nameOf(c.func()) + " [" + c.kind().label() + "])";
            }
            if (c.kind() == OpKind.MEMSET && c.arg(2) != p.arg(2)) {
                return "op #" + i + " is a memset whose size changed (" + p.arg(2) + " -> " + c.arg(2)
                        + " bytes; only a memset's destination and value are updated in place)";
            }
            if (p.argc() != c.argc()) {
                return "op #" + i + " takes another argument count (" + p.argc() + " -> " + c.argc() + ")";
            }
        }
        return null;
    }

    private void report(String what, String diff, boolean verification) {
        String r = "captured step '" + name + "': " + what + "\n" + diff;
        lastDiff = r;
        options.reporter().accept(r);
        if (options.throwOnMismatch() && verification) {
            throw new StepMismatchException(name, what + "\n" + diff);
        }
    }

    /** {@return the trace entry a launch with these values records, argument kinds included, as the runtime's trace does} */
    private static TraceEntry kernelEntry(long func, LaunchConfig c, long[] words, String kinds) {
        return TraceEntry.kernel(func, c.grid().x(), c.grid().y(), c.grid().z(),
                c.block().x(), c.block().y(), c.block().z(), c.sharedMemBytes(), words, kinds);
    }

    private void open() {
        if (phase == Phase.CLOSED) {
            throw new IllegalStateException("captured step '" + name + "' is closed");
        }
    }
}
