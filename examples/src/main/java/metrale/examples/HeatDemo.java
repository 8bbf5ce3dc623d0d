// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.DeviceInfo;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.StepOptions;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import metrale.telemetry.Counters;
import metrale.telemetry.GpuAllocEvent;
import metrale.telemetry.GpuCopyEvent;
import metrale.telemetry.GpuFreeEvent;
import metrale.telemetry.GpuGraphLaunchEvent;
import metrale.telemetry.GpuLaunchEvent;
import metrale.telemetry.GpuSyncEvent;
import metrale.telemetry.LaunchTrace;

/**
 * A 2D heat-diffusion (Jacobi) solver that walks through metrale-gpu: opening a backend, owning
 * device memory, a pinned upload, kernels (PTX on CUDA, Java twins on the simulator), a residual
 * reduction, counters, a CUDA graph of the steady-state steps, the launch-trace diff, the
 * allocation report, a red-zone scan and JFR events. It ends by checking the device's grid against
 * {@link HeatReference} and prints PASS or FAIL.
 *
 * <p>Run it with {@code ./demo} from the repository root ({@code ./demo --help} lists the options).
 * The simulator is the default backend; {@code --backend cuda} or {@code METRALE_BACKEND=cuda}
 * picks a GPU.
 *
 * <p>Exit status: 0 on PASS, 1 on FAIL or a device error, 2 on bad options.
 */
public final class HeatDemo {

    private static final int DEFAULT_SIZE = 256;
    private static final int DEFAULT_STEPS = 500;
    private static final int DEFAULT_GRAPH_STEPS = 200;
    private static final int PROGRESS_EVERY = 100;
    /** Every this many runs of the captured step, one runs eagerly and is diffed against the graph. */
    private static final int STEP_VERIFY_EVERY = 250;
    /** Below 0.25, so the explicit scheme is stable. */
    private static final float ALPHA = 0.2f;
    /** Bytes of red zone after every buffer; the planted overflow writes 16 bytes into it. */
    private static final long RED_ZONE_BYTES = 256;
    /** Floats the planted overflow writes past the end of its buffer. */
    private static final int OVERFLOW_FLOATS = 4;
    /**
     * Largest accepted difference from the reference. Both sides perform the same IEEE float
     * operations in the same order, so the expected difference is exactly 0.
     */
    private static final float TOLERANCE = 0f;

    /** Sections printed so far by {@link #run}; the JFR section appears only with {@code --jfr}. */
    private static int sections;

    private HeatDemo() {
    }

    /**
     * The command line.
     *
     * @param size          grid side
     * @param steps         eager steps before the graph
     * @param graphSteps    steps replayed from the graph (even)
     * @param backend       the backend named on the command line, or {@code null}
     * @param plantOverflow whether to write past a buffer for the red-zone scan to find
     * @param jfr           where to write a JFR recording, or {@code null}
     */
    record Options(int size, int steps, int graphSteps, String backend, boolean plantOverflow, Path jfr, boolean noTwins) {

        /** The options with the simulator's twins registered, as the demo runs by default. */
        Options(int size, int steps, int graphSteps, String backend, boolean plantOverflow, Path jfr) {
            this(size, steps, graphSteps, backend, plantOverflow, jfr, false);
        }
    }

    /**
     * Runs the demo; see {@code --help}.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        Options options;
        try {
            Optional<Options> parsed = parse(args);
            if (parsed.isEmpty()) {
                System.out.print(usage());
                return;
            }
            options = parsed.get();
        } catch (IllegalArgumentException e) {
            System.err.println("heat demo: " + e.getMessage());
            System.err.print(usage());
            System.exit(2);
            return;
        }
        int status;
        try {
            status = run(options, System.out);
        } catch (GpuException e) {
            System.out.flush();
            System.err.println("heat demo: " + e.getMessage());
            status = 1;
        } catch (IllegalArgumentException e) {
            // A bad setting, such as a backend name no backend has (--backend cdua).
            System.out.flush();
            System.err.println("heat demo: " + e.getMessage());
            status = 2;
        }
        System.exit(status);
    }

    /** {@return the {@code --help} text} */
    static String usage() {
        return """
                Usage: ./demo [options]
                  A 2D heat-diffusion (Jacobi) solver on metrale-gpu, checked against plain Java.

                Options:
                  --size N           grid side, N x N cells (default %d, 3..8192)
                  --steps N          eager Jacobi steps before the graph (default %d)
                  --graph-steps N    steps replayed from a CUDA graph, even (default %d)
                  --backend NAME     sim or cuda (default: metrale.backend / METRALE_BACKEND, else sim)
                  --plant-overflow   write %d floats past a buffer; the red-zone scan must find it
                  --no-twins         on the simulator, run the kernels' own PTX (no Java twins)
                  --jfr FILE         record metrale.* JFR events to FILE (open it in JDK Mission Control)
                  -h, --help         this text

                Exit status: 0 PASS, 1 FAIL or device error, 2 bad options.
                """.formatted(DEFAULT_SIZE, DEFAULT_STEPS, DEFAULT_GRAPH_STEPS, OVERFLOW_FLOATS);
    }

    /**
     * Parses the command line.
     *
     * @param args the arguments
     * @return the options, or empty when help was asked for
     * @throws IllegalArgumentException naming the bad option
     */
    static Optional<Options> parse(String[] args) {
        int size = DEFAULT_SIZE;
        int steps = DEFAULT_STEPS;
        int graphSteps = DEFAULT_GRAPH_STEPS;
        String backend = null;
        boolean plant = false;
        boolean noTwins = false;
        Path jfr = null;
        for (int k = 0; k < args.length; k++) {
            String a = args[k];
            switch (a) {
                case "-h", "--help" -> {
                    return Optional.empty();
                }
                case "--size" -> size = intArg(args, ++k, a, 3, 8192);
                case "--steps" -> steps = intArg(args, ++k, a, 1, 10_000_000);
                case "--graph-steps" -> {
                    graphSteps = intArg(args, ++k, a, 0, 10_000_000);
                    if (graphSteps % 2 != 0) {
                        throw new IllegalArgumentException("--graph-steps " + graphSteps
                                + ": must be even (one replay is two steps, A->B then B->A)");
                    }
                }
                case "--backend" -> backend = value(args, ++k, a);
                case "--plant-overflow" -> plant = true;
                case "--no-twins" -> noTwins = true;
                case "--jfr" -> jfr = jfrPath(value(args, ++k, a));
                default -> throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        return Optional.of(new Options(size, steps, graphSteps, backend, plant, jfr, noTwins));
    }

    /**
     * The recording's file, checked before the run: a folder that does not exist or cannot be
     * written would otherwise surface only after every step, as a FAIL.
     */
    private static Path jfrPath(String value) {
        Path file = Path.of(value).toAbsolutePath();
        Path dir = file.getParent();
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException("--jfr " + value + ": is a folder; name a file, e.g. " + file.resolve("heat.jfr"));
        }
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--jfr " + value + ": the folder " + dir + " does not exist");
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalArgumentException("--jfr " + value + ": the folder " + dir + " is not writable");
        }
        return file;
    }

    private static String value(String[] args, int k, String option) {
        if (k >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[k];
    }

    private static int intArg(String[] args, int k, String option, int min, int max) {
        String v = value(args, k, option);
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " '" + v + "' is not a whole number");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(option + " " + n + ": must be in [" + min + ", " + max + "]");
        }
        return n;
    }

    /** The backend to open: the command line, else the property or environment, else the simulator. */
    private static String backendName(Options o) {
        if (o.backend() != null) {
            return o.backend();
        }
        // The settings table's rule (property, then environment); the demo's own default is the simulator.
        return metrale.gpu.Setting.BACKEND.text(null).orElse("sim");
    }

    /** Counter values at one moment, so a phase can report what it did. */
    private record Counts(long launches, long syncs, long d2h, long h2d) {
        static Counts of(Counters c) {
            return new Counts(c.launches(), c.streamSyncs(), c.d2hCopies(), c.h2dCopies());
        }

        Counts minus(Counts o) {
            return new Counts(launches - o.launches, syncs - o.syncs, d2h - o.d2h, h2d - o.h2d);
        }
    }

    /**
     * Runs the demo and prints what it does.
     *
     * @param o   the options
     * @param out where to print
     * @return the exit status: 0 PASS, 1 FAIL
     */
    static int run(Options o, PrintStream out) {
        sections = 0;
        Recording jfr = o.jfr() != null ? startJfr() : null;
        String backend = backendName(o);
        int n = o.size();
        long cells = (long) n * n;
        long gridBytes = 4 * cells;
        float[] initial = HeatReference.initialGrid(n);

        // ---- backend -----------------------------------------------------------------
        section(out, "Backend");
        for (Gpu.BackendInfo b : Gpu.backends()) {
            out.printf(Locale.ROOT, "  found %-5s priority %3d  %s%n", b.name(), b.priority(),
                    b.available() ? "available" : "unavailable: " + b.reason());
        }
        // Every allocation's site, as the test kit records them: the demo shows the reports that name them.
        GpuBuilder builder = Gpu.builder().backend(backend).redZoneBytes(RED_ZONE_BYTES).d2hTrace(true)
                .leakDetection(LeakDetection.ALL);
        if (o.noTwins()) {
            // Ignored by CUDA, which always runs the real kernels.
            builder.backendOption(SimOptions.TWINS, SimTwinMode.OFF.option());
        }
        // The simulator's engine, running the kernels' PTX, faults at a store into a red zone: the
        // planted overflow then latches a sticky fault, which stays in a simulated process of its own.
        boolean engineCatchesOverflow = o.plantOverflow() && o.noTwins() && "sim".equalsIgnoreCase(backend);
        if (engineCatchesOverflow) {
            builder.backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
        }
        boolean ok = true;
        float[] result = new float[(int) cells];
        int totalSteps = 0;
        try (Gpu gpu = builder.open(); KernelArgs args = new KernelArgs()) {
            DeviceInfo dev = gpu.device();
            Counters counters = gpu.telemetry().counters();
            out.printf(Locale.ROOT, "  opened  %s: %s%n", gpu.backendName(), dev.name());
            out.printf(Locale.ROOT, "  memory  %,d MiB total, %,d MiB free%n", dev.totalMemory() >> 20, gpu.deviceFreeMemory() >> 20);
            out.printf(Locale.ROOT, "  SMs     %d (compute capability %d.%d)%n", dev.smCount(), dev.computeMajor(), dev.computeMinor());
            out.printf(Locale.ROOT, "  red zones of %d bytes after every buffer%n", gpu.options().redZoneBytes());

            // ---- memory ----------------------------------------------------------------
            section(out, "Memory");
            Stream stream = gpu.createStream();
            int reduceBlocks = HeatKernels.reduceBlocks(cells);
            try (DeviceBuffer a = allocGrid(gpu, gridBytes);
                 DeviceBuffer b = allocGrid(gpu, gridBytes);
                 DeviceBuffer partial = gpu.allocBuffer(4L * reduceBlocks)) {
                out.printf(Locale.ROOT, "  grid %d x %d floats: A %s and B %s, %,d KiB each (ping-pong)%n",
                        n, n, a.ptr(), b.ptr(), gridBytes >> 10);
                out.printf(Locale.ROOT, "  residual partials: %s, %d floats%n", partial.ptr(), reduceBlocks);

                MemorySegment pinned = gpu.allocHostPinned(gridBytes);
                MemorySegment.copy(initial, 0, pinned, ValueLayout.JAVA_FLOAT, 0, initial.length);
                long t0 = System.nanoTime();
                // Retained: the pinned source stays alive and unchanged until the sync below, so no wait per copy.
                gpu.copyH2DAsyncRetained(pinned, a.ptr(), stream);
                gpu.copyH2DAsyncRetained(pinned, b.ptr(), stream);
                gpu.synchronize(stream);
                long t1 = System.nanoTime();
                out.printf(Locale.ROOT, "  uploaded the initial grid to A and B from pinned host memory (isPinned=%b) in %.2f ms%n",
                        gpu.isPinned(pinned), (t1 - t0) / 1e6);
                gpu.freeHostPinned(pinned);
                MemorySegment partialHost = gpu.allocHostPinned(4L * reduceBlocks);

                // ---- kernels -------------------------------------------------------------
                section(out, "Kernels");
                byte[] ptx = HeatKernels.ptx();
                boolean twins = gpu.backendName().equals("sim") && !o.noTwins();
                if (twins) {
                    HeatKernels.registerTwins();
                    out.println("  registered Java twins of jacobi_step, residual_reduce and fill (SimKernels)");
                } else if (gpu.backendName().equals("sim")) {
                    out.println("  no twins: the simulator runs the kernels' own PTX on its engine (sim.twins=off)");
                }
                gpu.loadModule(HeatKernels.MODULE, ptx);
                KernelHandle jacobi = gpu.kernel(HeatKernels.MODULE, HeatKernels.JACOBI);
                KernelHandle reduce = gpu.kernel(HeatKernels.MODULE, HeatKernels.RESIDUAL);
                int tiles = (n + HeatKernels.TILE - 1) / HeatKernels.TILE;
                LaunchConfig jacobiCfg = LaunchConfig.of(Dim3.of(tiles, tiles), Dim3.of(HeatKernels.TILE, HeatKernels.TILE));
                LaunchConfig reduceCfg = LaunchConfig.of(reduceBlocks, HeatKernels.REDUCE_THREADS)
                        .withSharedMem(4 * HeatKernels.REDUCE_THREADS);
                out.printf(Locale.ROOT, "  loaded module '%s' from heat.ptx (%,d bytes of PTX)%n", HeatKernels.MODULE, ptx.length);
                out.printf(Locale.ROOT, "  %-32s %s%n", "heat::jacobi_step", jacobiCfg);
                out.printf(Locale.ROOT, "  %-32s %s (one float per thread, tree reduction)%n", "heat::residual_reduce", reduceCfg);
                out.print(indent(gpu.telemetry().audit().report()));

                Solver solver = new Solver(gpu, stream, args, jacobi, jacobiCfg, reduce, reduceCfg,
                        a, b, partial, partialHost, n, reduceBlocks);

                // ---- iterate -------------------------------------------------------------
                section(out, "Iterating " + o.steps() + " steps");
                Counts before = Counts.of(counters);
                long e0 = System.nanoTime();
                for (int s = 1; s <= o.steps(); s++) {
                    solver.step();
                    if (s % PROGRESS_EVERY == 0 || s == o.steps()) {
                        out.printf(Locale.ROOT, "  step %6d  residual %.6e%n", solver.steps, solver.residual());
                    }
                }
                gpu.synchronize(stream);
                long eagerNanos = System.nanoTime() - e0;
                Counts eager = Counts.of(counters).minus(before);
                double eagerMsPerStep = eagerNanos / 1e6 / o.steps();
                out.println();
                out.printf(Locale.ROOT, "  %-16s %12d%n", "steps", o.steps());
                out.printf(Locale.ROOT, "  %-16s %12.6e  (max |u_new - u_old| of the last step)%n", "residual", solver.lastResidual);
                out.printf(Locale.ROOT, "  %-16s %12.4f ms%n", "time per step", eagerMsPerStep);
                out.printf(Locale.ROOT, "  %-16s %12d  (jacobi_step + residual_reduce)%n", "launches", eager.launches());
                out.printf(Locale.ROOT, "  %-16s %12d%n", "stream syncs", eager.syncs());
                out.printf(Locale.ROOT, "  %-16s %12d  (each one a hidden sync point)%n", "D2H copies", eager.d2h());
                out.print(indent(counters.d2hSiteReport(3)));

                // ---- captured step -------------------------------------------------------
                section(out, "Captured step of two Jacobi steps (A->B, then B->A) as a CUDA graph");
                // Two steps per run, so each run ends where it began and the graph's pointers stay
                // right; a step of one would be found by the verification runs (its pointers swap).
                StepOptions stepOptions = StepOptions.defaults().verifyEvery(STEP_VERIFY_EVERY)
                        .reporter(r -> out.print(indent(r)));
                before = Counts.of(counters);
                long g0 = System.nanoTime();
                CapturedStep.Stats stats;
                try (CapturedStep step = gpu.capturedStep("heat", (g, s) -> {
                    solver.enqueueStep(solver.cur, solver.next);
                    solver.enqueueStep(solver.next, solver.cur);
                }, stepOptions)) {
                    for (int r = 1; r <= o.graphSteps() / 2; r++) {
                        step.run(stream);
                        solver.steps += 2;
                        if (solver.steps % PROGRESS_EVERY == 0 || r == o.graphSteps() / 2) {
                            out.printf(Locale.ROOT, "  step %6d  residual %.6e%n", solver.steps, solver.residual());
                        }
                    }
                    gpu.synchronize(stream);
                    stats = step.stats();
                }
                long graphNanos = System.nanoTime() - g0;
                Counts replay = Counts.of(counters).minus(before);
                out.printf(Locale.ROOT, "  %d runs: %d eager (%d of them verification runs), %d capture(s), %d replays,"
                        + " %d in-place update(s), %d recapture(s)%n", stats.runs(), stats.eagerRuns(), stats.verifications(),
                        stats.captures(), stats.replays(), stats.updates(), stats.recaptures());
                if (o.graphSteps() > 0) {
                    double graphMsPerStep = graphNanos / 1e6 / o.graphSteps();
                    out.printf(Locale.ROOT, "  time per step: %.4f ms eager, %.4f ms from the captured step (%.2fx)%n",
                            eagerMsPerStep, graphMsPerStep, eagerMsPerStep / graphMsPerStep);
                    out.printf(Locale.ROOT, "  during the captured step: %d launches counted (eager runs and residual checks),"
                            + " %d syncs, %d D2H copies%n", replay.launches(), replay.syncs(), replay.d2h());
                }

                // ---- launch trace --------------------------------------------------------
                section(out, "Launch trace: two consecutive steps, diffed");
                LaunchTrace trace = gpu.telemetry().trace();
                trace.begin();
                solver.step();
                Optional<String> first = trace.endAndDiff(8);
                trace.begin();
                solver.step();
                Optional<String> diff = trace.endAndDiff(8);
                out.println("  first endAndDiff: " + (first.isEmpty() ? "(nothing to compare yet)" : first.get()));
                out.print(indent(diff.orElse("(no report)\n")));
                out.println("  The in and out pointers swap every step (same |delta|, opposite signs). A graph");
                out.println("  replays the argument values it captured, so a graph of one step would read A and");
                out.println("  write B on every replay; capturing both steps makes each replay end where it began.");

                // ---- allocations ---------------------------------------------------------
                section(out, "Allocations by call site");
                DeviceBuffer victim = null;
                if (o.plantOverflow() && !engineCatchesOverflow) {
                    victim = gpu.allocBuffer(4L * 64); // the buffer --plant-overflow writes past
                }
                out.printf(Locale.ROOT, "  %d live allocations, %,d bytes%n", gpu.liveAllocCount(), gpu.liveBytes());
                out.print(indent(gpu.allocReport(10, 0)));

                // ---- red zones -----------------------------------------------------------
                section(out, "Red-zone scan");
                if (victim != null) {
                    KernelHandle fill = gpu.kernel(HeatKernels.MODULE, HeatKernels.FILL);
                    int count = 64 + OVERFLOW_FLOATS;
                    gpu.launch(fill, LaunchConfig.forElements(count, 64), stream, args.clear().ptr(victim.ptr()).i32(count).f32(-1f));
                    gpu.synchronize(stream);
                    out.printf(Locale.ROOT, "  planted: heat::fill wrote %d floats into %s, a buffer of 64 floats%n", count, victim.ptr());
                }
                int corrupted = gpu.scanRedzones();
                List<RedZoneViolation> violations = gpu.findRedzoneViolations();
                out.printf(Locale.ROOT, "  scanRedzones(): %d buffer(s) with a corrupted red zone%n", corrupted);
                for (RedZoneViolation v : violations) {
                    out.println("    " + v);
                }
                boolean redZonesAsExpected = o.plantOverflow()
                        ? violations.size() == 1 && victim != null && violations.getFirst().allocation().ptr().equals(victim.ptr())
                        : corrupted == 0;
                if (engineCatchesOverflow) {
                    out.println("  (the kernels run as PTX on the simulator's engine, which stops a store into a red zone");
                    out.println("  at the store itself: the planted overflow runs last, below)");
                    ok &= corrupted == 0;
                } else if (o.plantOverflow()) {
                    out.println(redZonesAsExpected ? "  overflow found, as planted"
                            : "  planted overflow NOT found (exactly one violation, in the planted buffer, was expected)");
                    ok &= redZonesAsExpected;
                } else if (!redZonesAsExpected) {
                    out.println("  UNEXPECTED: a red zone was overwritten");
                    ok = false;
                } else {
                    out.println("  (run with --plant-overflow to see one found)");
                }
                if (victim != null) {
                    gpu.poisonRedzones(0, Long.MAX_VALUE);
                    victim.close();
                }

                // ---- final grid -------------------------------------------------------------
                solver.cur.copyTo(result);
                totalSteps = solver.steps;
                gpu.freeHostPinned(partialHost);
                gpu.destroyStream(stream);
            } finally {
                if (gpu.backendName().equals("sim") && !o.noTwins()) {
                    HeatKernels.unregisterTwins();
                }
            }
            if (engineCatchesOverflow) {
                ok &= plantCaughtAtTheStore(gpu, args, out);
            }
        }

        // ---- JFR -----------------------------------------------------------------------
        if (jfr != null) {
            section(out, "JFR");
            ok &= stopJfr(jfr, o.jfr(), out);
        }

        // ---- check ----------------------------------------------------------------------
        section(out, "Check against plain Java");
        long r0 = System.nanoTime();
        float[] expected = HeatReference.run(initial, n, ALPHA, totalSteps);
        long r1 = System.nanoTime();
        float diff = HeatReference.maxAbsDiff(result, expected);
        boolean match = diff <= TOLERANCE;
        out.printf(Locale.ROOT, "  reference: %d steps on %d x %d in %.0f ms%n", totalSteps, n, n, (r1 - r0) / 1e6);
        out.printf(Locale.ROOT, "  max |device - reference| = %.3e (tolerance %.1e)%n", diff, TOLERANCE);
        ok &= match;
        out.println(ok ? "PASS" : "FAIL");
        return ok ? 0 : 1;
    }

    /**
     * Writes {@value #OVERFLOW_FLOATS} floats past a 64-float buffer with the kernels' own PTX on the
     * simulator's engine, which stops the first store into the red zone as an {@code ILLEGAL_ADDRESS}
     * naming the thread, the PTX line and the buffer. The fault is sticky: nothing runs after it,
     * and close gives the memory back.
     *
     * @return whether the overflow was caught at the store
     */
    private static boolean plantCaughtAtTheStore(Gpu gpu, KernelArgs args, PrintStream out) {
        section(out, "Overflow caught at the store");
        DevicePtr victim = gpu.alloc(4L * 64); // the buffer --plant-overflow writes past
        int count = 64 + OVERFLOW_FLOATS;
        gpu.launch(gpu.kernel(HeatKernels.MODULE, HeatKernels.FILL), LaunchConfig.forElements(count, 64), Stream.DEFAULT,
                args.clear().ptr(victim).i32(count).f32(-1f));
        out.printf(Locale.ROOT, "  planted: heat::fill writes %d floats into %s, a buffer of 64 floats%n", count, victim);
        try {
            gpu.synchronize();
        } catch (GpuException e) {
            boolean caught = e.error() == CudaError.ILLEGAL_ADDRESS && e.getMessage().contains("into the red zone");
            // The engine's words: from the kernel and thread to the red zone it ran into.
            String why = e.getMessage();
            int from = why.indexOf("kernel heat::fill, ");
            int to = why.indexOf("into the red zone after it");
            out.println("  " + (from >= 0 && to > from ? why.substring(from, to + "into the red zone after it".length()) : why));
            out.println(caught ? "  overflow found, as planted" : "  planted overflow NOT found (a different fault)");
            return caught;
        }
        out.println("  planted overflow NOT found: the store past the buffer ran");
        return false;
    }

    /** Both grids are allocated here, so the allocation report shows them as one site with two buffers. */
    private static DeviceBuffer allocGrid(Gpu gpu, long bytes) {
        return gpu.allocBuffer(bytes);
    }

    /** The ping-pong state and the two kernels' launches. */
    private static final class Solver {
        final Gpu gpu;
        final Stream stream;
        final KernelArgs args;
        final KernelHandle jacobi;
        final LaunchConfig jacobiCfg;
        final KernelHandle reduce;
        final LaunchConfig reduceCfg;
        final DeviceBuffer partial;
        final MemorySegment partialHost;
        final int n;
        final int reduceBlocks;
        /** Holds the latest grid. */
        DeviceBuffer cur;
        /** Holds the grid one step older; the next step writes here. */
        DeviceBuffer next;
        int steps;
        float lastResidual = Float.NaN;

        Solver(Gpu gpu, Stream stream, KernelArgs args, KernelHandle jacobi, LaunchConfig jacobiCfg,
               KernelHandle reduce, LaunchConfig reduceCfg, DeviceBuffer a, DeviceBuffer b,
               DeviceBuffer partial, MemorySegment partialHost, int n, int reduceBlocks) {
            this.gpu = gpu;
            this.stream = stream;
            this.args = args;
            this.jacobi = jacobi;
            this.jacobiCfg = jacobiCfg;
            this.reduce = reduce;
            this.reduceCfg = reduceCfg;
            this.partial = partial;
            this.partialHost = partialHost;
            this.n = n;
            this.reduceBlocks = reduceBlocks;
            this.cur = a;
            this.next = b;
        }

        void enqueueStep(DeviceBuffer in, DeviceBuffer out) {
            gpu.launch(jacobi, jacobiCfg, stream, args.clear().ptr(in.ptr()).ptr(out.ptr()).i32(n).f32(ALPHA));
        }

        void step() {
            enqueueStep(cur, next);
            DeviceBuffer t = cur;
            cur = next;
            next = t;
            steps++;
        }

        /** Max |cur - next|: how much the last step changed the grid. Waits for the stream. */
        float residual() {
            gpu.launch(reduce, reduceCfg, stream,
                    args.clear().ptr(cur.ptr()).ptr(next.ptr()).ptr(partial.ptr()).i32(n * n));
            gpu.copyD2HOnStream(partial.ptr(), partialHost, stream);
            float m = 0f;
            for (int k = 0; k < reduceBlocks; k++) {
                m = Math.max(m, partialHost.getAtIndex(ValueLayout.JAVA_FLOAT, k));
            }
            lastResidual = m;
            return m;
        }
    }

    private static Recording startJfr() {
        Recording r = new Recording();
        r.setName("metrale heat demo");
        r.enable(GpuLaunchEvent.class);
        r.enable(GpuGraphLaunchEvent.class);
        r.enable(GpuAllocEvent.class);
        r.enable(GpuFreeEvent.class);
        r.enable(GpuCopyEvent.class);
        r.enable(GpuSyncEvent.class);
        r.start();
        return r;
    }

    private static boolean stopJfr(Recording r, Path file, PrintStream out) {
        try (r) {
            r.stop();
            r.dump(file);
            Map<String, Integer> byType = new TreeMap<>();
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                byType.merge(e.getEventType().getName(), 1, Integer::sum);
            }
            out.printf(Locale.ROOT, "  wrote %s (%,d bytes); metrale events by type:%n", file, Files.size(file));
            byType.forEach((type, count) -> out.printf(Locale.ROOT, "    %-18s %,8d%n", type, count));
            out.println("  open it in JDK Mission Control (Event Browser, metrale) or: jfr print --events metrale.Launch " + file);
            return true;
        } catch (IOException e) {
            out.println("  JFR: could not write " + file + ": " + e.getMessage());
            return false;
        }
    }

    private static void section(PrintStream out, String title) {
        sections++;
        out.println();
        out.println("== " + sections + ". " + title);
    }

    private static String indent(String text) {
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (!line.isEmpty()) {
                sb.append("  ").append(line).append('\n');
            }
        }
        return sb.toString();
    }
}
