// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * The base of the backend-agnostic contract suite: every backend runs the same abstract test
 * classes ({@link MemoryContract}, {@link CopyContract}, ...) through a small subclass per class
 * that says how to open that backend and how to give it the contract kernels.
 *
 * <p>Each test gets a fresh {@link Gpu} in {@link #gpu}, opened from {@link #builder()} with the
 * kernels of {@code contract.cu} loaded as module {@value #MODULE}, and a fresh {@link KernelArgs}
 * in {@link #args}. Every runtime the suite opens walks every call site
 * ({@link LeakDetection#ALL}), since its tests assert on sites; a test of another level asks for it. After the test the ledger must be empty (unless the test called
 * {@link #allowLeaks()} or the runtime latched a sticky fault) and the runtime is closed.
 *
 * <p>A backend's subclass implements {@link #builder()} and {@link #prepareKernels(Gpu)}, and
 * answers {@link #observableAsync()} when its asynchronous work is guaranteed to wait for a
 * synchronization (the simulator), so staleness can be asserted there and nowhere else.
 */
public abstract class GpuContract {

    /** The module name the contract kernels are loaded under. */
    public static final String MODULE = "contract";

    /**
     * A second name the same PTX is loaded as by {@link KernelContract}: backends that bind
     * kernels by module name (the simulator's twins) provide the contract kernels under it too.
     */
    public static final String SECOND_MODULE = "contract2";

    /**
     * PTX that the JIT refuses: a valid header and a body that is not PTX. On an H200 (driver
     * 580.159.04) {@code cuModuleLoadData} returns INVALID_PTX (218) for it.
     */
    public static final String BROKEN_PTX = ".version 8.0\n.target sm_90\n.address_size 64\n"
            + ".visible .entry broken(\n)\n{\n  this is not ptx;\n}\n";

    /**
     * Text with a PTX entry but no {@code .version} header: on an H200 (driver 580.159.04)
     * {@code cuModuleLoadData} returns INVALID_IMAGE (200) for it, not INVALID_PTX.
     */
    public static final String HEADERLESS_PTX = ".visible .entry f()\n{\n ret;\n}\n";

    /** The classpath resource holding the PTX of {@code contract.cu}. */
    public static final String PTX_RESOURCE = "/metrale/gpu/contract/contract.ptx";

    /** The runtime under test; fresh for each test. */
    protected Gpu gpu;
    /** The allocator a {@link DriverAllocator} test asks for, or {@code null} for the backend's default. */
    private String allocator;

    /** Launch arguments for the helpers and the test; fresh for each test. */
    protected KernelArgs args;

    private boolean leakCheck;
    private final Map<String, KernelHandle> handles = new HashMap<>();
    private final Map<Gpu, CountingDriver> counting = new IdentityHashMap<>();

    /** Creates the base; subclasses are instantiated by JUnit. */
    protected GpuContract() {
    }

    // ---- what a backend supplies --------------------------------------------------------------

    /**
     * {@return a new builder for the backend under test} Called once per runtime a test opens;
     * tests may add options to it (red zones, debug sync, timing) before opening.
     */
    protected abstract GpuBuilder builder();

    /**
     * Makes module {@value #MODULE} available on {@code gpu} so {@code gpu.kernel("contract", f)}
     * finds every function of {@code contract.cu}. A backend that runs the PTX calls
     * {@link #loadContractModule(Gpu)}; the simulator registers its kernel twins first.
     *
     * @param gpu a runtime just opened
     */
    protected abstract void prepareKernels(Gpu gpu);

    /**
     * {@return whether asynchronous work on this backend is guaranteed not to run before the
     * host synchronizes with it} True for the simulator, which runs async work at the latest
     * moment CUDA allows; false for a real GPU, where an async copy may already be done on return.
     * Tests assert stale-before-sync results only when this is true.
     */
    protected boolean observableAsync() {
        return false;
    }

    /**
     * {@return whether a kernel's store past its buffer into the runtime's red zone reaches the pad,
     * for the red-zone scan to find} True on a GPU and for a simulator twin, whose views reach the
     * pad; false where the simulator's engine runs the kernel's PTX: the pad is out of bounds for
     * it, so the store faults at the access instead, naming the thread and line.
     */
    protected boolean kernelsReachRedZones() {
        return true;
    }

    /** Skips a test whose kernel writes into a red zone for the scan to find, where kernels cannot reach one. */
    protected final void assumeKernelsReachRedZones() {
        if (!kernelsReachRedZones()) {
            // What the test allocated before it found out is freed by close.
            allowLeaks();
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(kernelsReachRedZones(),
                "the simulator's engine faults at a store into a red zone instead (PtxFrontEndKitTest covers that)");
    }

    /**
     * Checks, after {@code closed} was closed, that the backend released what the runtime held:
     * every device allocation, page-locked host block, stream, event, module and graph, including
     * what the test leaked on purpose, which {@link Gpu#close()} must free. The API cannot see the
     * device once closed, so each backend answers from what its driver can observe; a backend
     * whose driver it cannot look into opens through {@link CountingDriver#over(GpuBuilder)} and
     * calls {@link #assertCountedReleases(Gpu)}. After a latched sticky fault the driver refuses
     * releases, so only the asking is required then.
     *
     * @param closed a runtime after {@link Gpu#close()}
     */
    protected abstract void assertBackendReleased(Gpu closed);

    /**
     * Asserts that the runtime asked its {@link CountingDriver} to release every handle it had
     * obtained before it closed the driver, and, unless it latched a sticky fault, that the driver
     * accepted each release.
     *
     * @param closed a runtime opened through {@link CountingDriver#over(GpuBuilder)}, after close
     */
    protected final void assertCountedReleases(Gpu closed) {
        CountingDriver d = counting.get(closed);
        assertThat(d).as("the counting driver of %s (opened through CountingDriver.over?)", closed).isNotNull();
        assertThat(d.closed()).as("the runtime closed its driver").isTrue();
        assertThat(d.leftAtClose()).as("handles the runtime never released before closing the driver").isEmpty();
        if (closed.fault().isEmpty()) {
            assertThat(d.failedReleases()).as("releases the driver refused").isEmpty();
        }
    }

    /**
     * {@return whether a missing optional capability (NVRTC for {@link Gpu#compileCuda}) fails the
     * test instead of being accepted} False by default, where the backend may lack it (the
     * simulator has no compiler); CUDA answers true on a GPU host run with
     * {@code -Dmetrale.gpu.required=true}, which must have everything the tests exercise.
     */
    protected boolean capabilitiesRequired() {
        return false;
    }

    // ---- lifecycle ----------------------------------------------------------------------------

    /**
     * Opens the runtime and the arguments for one test: with {@code allocator=driver} where the
     * test or its class is {@link DriverAllocator}, else with the backend's default allocator.
     *
     * @param info the test, for its {@link DriverAllocator}
     */
    @BeforeEach
    public final void openRuntime(TestInfo info) {
        boolean driver = info.getTestMethod().map(m -> m.isAnnotationPresent(DriverAllocator.class)).orElse(false)
                || info.getTestClass().map(c -> c.isAnnotationPresent(DriverAllocator.class)).orElse(false);
        allocator = driver ? "driver" : null;
        leakCheck = true;
        handles.clear();
        counting.clear();
        gpu = open(UnaryOperator.identity());
        args = new KernelArgs();
    }

    /** Checks the ledger and closes the runtime after one test. */
    @AfterEach
    public final void closeRuntime() {
        try {
            if (gpu != null && !gpu.isClosed() && leakCheck && gpu.fault().isEmpty()) {
                assertThat(gpu.liveAllocations()).as("allocations the test left on the ledger").isEmpty();
            }
        } finally {
            if (args != null) {
                args.close();
            }
            if (gpu != null) {
                gpu.close();
                assertThat(gpu.isClosed()).isTrue();
                assertBackendReleased(gpu);
            }
        }
    }

    /**
     * Opens another runtime of the backend under test, with the contract kernels loaded and every
     * site walked ({@link LeakDetection#ALL}, unless {@code options} set another level); the caller
     * closes it.
     *
     * @param options adds options to the backend's builder
     * @return the runtime
     */
    protected final Gpu open(UnaryOperator<GpuBuilder> options) {
        GpuBuilder b = builder().leakDetection(LeakDetection.ALL);
        if (allocator != null) {
            b.allocator(allocator);
        }
        Gpu g = options.apply(b).open();
        g.unwrap(CountingDriver.class).ifPresent(d -> counting.put(g, d));
        try {
            prepareKernels(g);
        } catch (RuntimeException | Error e) {
            g.close();
            throw e;
        }
        return g;
    }

    /**
     * Closes {@link #gpu} and replaces it with a runtime opened with more options.
     *
     * @param options adds options to the backend's builder
     */
    protected final void reopen(UnaryOperator<GpuBuilder> options) {
        gpu.close();
        assertBackendReleased(gpu);
        handles.clear();
        gpu = open(options);
    }

    /**
     * {@return the {@link CountingDriver} under {@link #gpu}} Reopens {@link #gpu} through it
     * first (with the backend's plain options) where the backend does not open through it already.
     */
    protected final CountingDriver counted() {
        if (gpu.unwrap(CountingDriver.class).isEmpty()) {
            reopen(CountingDriver::over);
        }
        return CountingDriver.of(gpu);
    }

    /** Skips the after-test check that the ledger is empty: for tests that leave entries on purpose. */
    protected final void allowLeaks() {
        leakCheck = false;
    }

    /** {@return the PTX of {@code contract.cu}, a resource of this module} */
    public static byte[] contractPtx() {
        try (InputStream in = GpuContract.class.getResourceAsStream(PTX_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(PTX_RESOURCE + " is missing from the metrale-gpu-contract jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads the PTX of {@code contract.cu} as module {@value #MODULE}.
     *
     * @param gpu the runtime
     */
    public static void loadContractModule(Gpu gpu) {
        gpu.loadModule(MODULE, contractPtx());
    }

    // ---- kernels ------------------------------------------------------------------------------

    /**
     * {@return the handle of a contract kernel} Looked up once per test and runtime, so the
     * kernel audit of a test that counts lookups sees only its own.
     *
     * @param func the function's name in {@code contract.cu}
     */
    protected final KernelHandle kernel(String func) {
        return handles.computeIfAbsent(func, f -> gpu.kernel(MODULE, f));
    }

    /**
     * Enqueues {@code fill_f32}: {@code p[i] = v} for {@code i < n}.
     *
     * @param p      the buffer
     * @param v      the value
     * @param n      how many floats
     * @param stream the stream
     */
    protected final void fill(DevicePtr p, float v, int n, Stream stream) {
        gpu.launch(kernel("fill_f32"), LaunchConfig.forElements(n, 128), stream, args.clear().ptr(p).f32(v).i32(n));
    }

    /**
     * Enqueues {@code add_i32}: {@code p[i] += v} for {@code i < n}.
     *
     * @param p      the buffer
     * @param v      the addend
     * @param n      how many ints
     * @param stream the stream
     */
    protected final void addI32(DevicePtr p, int v, int n, Stream stream) {
        gpu.launch(kernel("add_i32"), LaunchConfig.forElements(n, 128), stream, args.clear().ptr(p).i32(v).i32(n));
    }

    /**
     * Enqueues {@code spin}: about {@code millis} of device time on a GPU, nothing on the simulator.
     *
     * @param millis how long
     * @param stream the stream
     */
    protected final void spin(int millis, Stream stream) {
        gpu.launch(kernel("spin"), LaunchConfig.of(1, 1), stream, args.clear().i64(millis * 1_000_000L));
    }

    /**
     * Enqueues {@code noop} with one block of one thread.
     *
     * @param stream the stream
     */
    protected final void noop(Stream stream) {
        gpu.launch(kernel("noop"), LaunchConfig.of(1, 1), stream, args.clear());
    }

    // ---- memory helpers -----------------------------------------------------------------------

    /**
     * {@return {@code n} floats read from the device with a blocking copy}
     *
     * @param p the source
     * @param n how many
     */
    protected final float[] readFloats(DevicePtr p, int n) {
        float[] out = new float[n];
        gpu.copyD2H(p, out);
        return out;
    }

    /**
     * {@return {@code n} ints read from the device with a blocking copy}
     *
     * @param p the source
     * @param n how many
     */
    protected final int[] readInts(DevicePtr p, int n) {
        int[] out = new int[n];
        gpu.copyD2H(p, out);
        return out;
    }

    /**
     * {@return {@code n} bytes read from the device with a blocking copy}
     *
     * @param p the source
     * @param n how many
     */
    protected final byte[] readBytes(DevicePtr p, int n) {
        byte[] out = new byte[n];
        gpu.copyD2H(p, out);
        return out;
    }

    /**
     * {@return {@code n} copies of {@code v}}
     *
     * @param n how many
     * @param v the value
     */
    protected static float[] floats(int n, float v) {
        float[] a = new float[n];
        Arrays.fill(a, v);
        return a;
    }

    /**
     * {@return {@code n} copies of {@code v}}
     *
     * @param n how many
     * @param v the value
     */
    protected static int[] ints(int n, int v) {
        int[] a = new int[n];
        Arrays.fill(a, v);
        return a;
    }

    /**
     * {@return {@code n} copies of {@code v}}
     *
     * @param n how many
     * @param v the value
     */
    protected static byte[] bytes(int n, int v) {
        byte[] a = new byte[n];
        Arrays.fill(a, (byte) v);
        return a;
    }

    /**
     * {@return {@code 0, 1, ..., n-1} plus {@code base}}
     *
     * @param n    how many
     * @param base the first value
     */
    protected static int[] iota(int n, int base) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = base + i;
        }
        return a;
    }

    /**
     * Proves the runtime still works: allocates, runs a kernel, reads the result and frees.
     */
    protected final void assertStillWorks() {
        DevicePtr p = gpu.alloc(256);
        try {
            fill(p, 3.5f, 64, Stream.DEFAULT);
            assertThat(readFloats(p, 64)).as("a kernel's result after the error").containsOnly(3.5f);
        } finally {
            gpu.free(p);
        }
    }

    // ---- error assertions ---------------------------------------------------------------------

    /**
     * Asserts that {@code call} throws a {@link GpuException} with {@code expected}, whose message
     * names the CUDA error (name and number) and whose operation names the call.
     *
     * @param expected the CUDA error
     * @param call     the call
     * @return the exception
     */
    protected static GpuException assertCuda(CudaError expected, ThrowingCallable call) {
        Throwable t = catchThrowable(call);
        if (t == null) {
            fail("expected a GpuException with " + expected + " but the call succeeded");
        }
        assertThat(t).as("expected a GpuException with %s", expected).isInstanceOf(GpuException.class);
        GpuException e = (GpuException) t;
        assertThat(e.error()).as("the CUDA error of: %s", e.getMessage()).isEqualTo(expected);
        assertThat(e.getMessage()).as("the message names the error").contains(expected.cudaName())
                .contains(String.valueOf(expected.code()));
        assertThat(e.operation()).as("the operation of: %s", e.getMessage()).isNotBlank();
        return e;
    }

    /**
     * Asserts that {@code call} throws a {@link GpuException} with one of {@code allowed}: for
     * inputs CUDA itself cannot receive (a destroyed graph), where either code is a fair answer.
     *
     * @param call    the call
     * @param allowed the acceptable errors
     * @return the exception
     */
    protected static GpuException assertCudaOneOf(ThrowingCallable call, CudaError... allowed) {
        Throwable t = catchThrowable(call);
        if (t == null) {
            fail("expected a GpuException with one of " + Arrays.toString(allowed) + " but the call succeeded");
        }
        assertThat(t).isInstanceOf(GpuException.class);
        GpuException e = (GpuException) t;
        assertThat(e.error()).as("the CUDA error of: %s", e.getMessage()).isIn((Object[]) allowed);
        return e;
    }

    /**
     * Asserts that a host-side bad argument that CUDA cannot express (a negative size, a value
     * out of range) is refused, either by the runtime before the driver
     * ({@link IllegalArgumentException} or {@link IndexOutOfBoundsException}, as {@link Gpu}
     * documents for bad host input) or as {@code INVALID_VALUE}, with a message that names the
     * offending value.
     *
     * @param mention text the message must contain (the bad value)
     * @param call    the call
     * @return the exception
     */
    protected static RuntimeException assertBadArgument(String mention, ThrowingCallable call) {
        Throwable t = catchThrowable(call);
        if (t == null) {
            fail("expected the bad argument " + mention + " to be refused, but the call succeeded");
        }
        assertThat(t).as("a refusal of %s", mention)
                .isInstanceOfAny(IllegalArgumentException.class, IndexOutOfBoundsException.class, GpuException.class);
        if (t instanceof GpuException e) {
            assertThat(e.error()).as("the CUDA error of: %s", e.getMessage()).isEqualTo(CudaError.INVALID_VALUE);
        }
        assertThat(t.getMessage()).as("the message names the bad value").contains(mention);
        return (RuntimeException) t;
    }

    /**
     * Runs {@code check} and asserts that the ledger is exactly as before: nothing held was lost
     * and nothing was added.
     *
     * @param check the failing call and its assertions
     */
    protected final void assertLedgerUnchanged(Runnable check) {
        List<Allocation> before = gpu.liveAllocations();
        long bytes = gpu.liveBytes();
        check.run();
        assertThat(gpu.liveAllocations()).as("the ledger after a refused call").isEqualTo(before);
        assertThat(gpu.liveBytes()).isEqualTo(bytes);
    }

    // ---- call sites ---------------------------------------------------------------------------

    /**
     * {@return {@code File.java:line} of the caller} Put it on the same line as the call whose
     * site the runtime records: {@code DevicePtr p = gpu.alloc(8); String site = here();}.
     */
    protected static String here() {
        StackWalker.StackFrame f = StackWalker.getInstance()
                .walk(s -> s.skip(1).findFirst())
                .orElseThrow();
        return f.getFileName() + ":" + f.getLineNumber();
    }

    /**
     * {@return polls {@code condition} until it holds or about ten seconds pass}
     *
     * @param condition the condition, for example an event query
     */
    protected static boolean pollUntil(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }
}
