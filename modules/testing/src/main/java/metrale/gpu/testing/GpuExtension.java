// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.gpu.sim.SimControls;
import metrale.gpu.sim.SimTwins;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The extension behind {@link GpuTest}: one run of the method per backend, each on a fresh runtime
 * that is checked and closed afterwards. Use it through {@link GpuTest}; registering it with
 * {@code @ExtendWith} alone runs nothing.
 *
 * <p>Parameters it resolves in a run: {@link Gpu} (the run's runtime), {@link Backend}, and on the
 * simulator {@link SimTwins} (the run's twin table) and {@link SimControls}.
 * Stateless and thread-safe: the state of a run lives in that run's extension context.
 *
 * <pre>{@code
 * @GpuTest(backends = Backend.SIM)               // GpuTest registers this extension
 * void fillsOnTheSimulator(Gpu gpu, SimControls sim, Backend backend) {
 *     sim.setKernelDuration("my", "fill", 500_000);  // parameters this extension resolves
 *     assertThat(backend).isEqualTo(Backend.SIM);
 * }
 * }</pre>
 */
public final class GpuExtension implements TestTemplateInvocationContextProvider {

    /** The system property that turns a CUDA run's skip into a failure where no driver loads. */
    public static final String REQUIRED_PROPERTY = "metrale.gpu.required";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(GpuExtension.class);

    /** Creates the extension; JUnit does this. */
    public GpuExtension() {
    }

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return context.getTestMethod().map(m -> AnnotationSupport.isAnnotated(m, GpuTest.class)).orElse(false);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        Method m = context.getRequiredTestMethod();
        GpuTest test = AnnotationSupport.findAnnotation(m, GpuTest.class).orElseThrow();
        RunOptions options = RunOptions.of(m, context.getRequiredTestClass(), test);
        if (test.backends().length == 0) {
            throw new ExtensionConfigurationException("@GpuTest(backends = {}) on " + m + " names no backend to run on");
        }
        return Stream.of(test.backends()).distinct().map(b -> new Invocation(new Run(b, options)));
    }

    /** The options of every run of one method, read from its annotations. */
    record RunOptions(GpuTest test, Optional<FaultPlan> plan, Set<CudaError> expected, List<KernelDuration> durations) {

        static RunOptions of(Method m, Class<?> testClass, GpuTest test) {
            Optional<FaultPlan> plan = find(m, testClass, FaultPlan.class);
            Set<CudaError> expected = find(m, testClass, ExpectFault.class)
                    .map(e -> GpuChecks.asSet(e.value())).orElse(Set.of());
            if (plan.isPresent() && plan.get().failNextSync().length > 1) {
                throw new ExtensionConfigurationException("@FaultPlan(failNextSync) on " + m + " names "
                        + plan.get().failNextSync().length + " errors; a plan arms at most one");
            }
            List<KernelDuration> durations =
                    new ArrayList<>(AnnotationSupport.findRepeatableAnnotations(testClass, KernelDuration.class));
            durations.addAll(AnnotationSupport.findRepeatableAnnotations(m, KernelDuration.class));
            for (KernelDuration d : durations) {
                splitKernel(d.kernel(), "@KernelDuration(kernel");
                if (d.nanos() < 0) {
                    throw new ExtensionConfigurationException("@KernelDuration(kernel = \"" + d.kernel() + "\", nanos = "
                            + d.nanos() + ") on " + m + ": nanos must be at least 0");
                }
            }
            if (plan.isPresent()) {
                for (String k : plan.get().faultKernel()) {
                    splitKernel(k, "@FaultPlan(faultKernel");
                }
            }
            return new RunOptions(test, plan, expected, List.copyOf(durations));
        }

        private static <A extends java.lang.annotation.Annotation> Optional<A> find(Method m, Class<?> c, Class<A> type) {
            Optional<A> a = AnnotationSupport.findAnnotation(m, type);
            return a.isPresent() ? a : AnnotationSupport.findAnnotation((AnnotatedElement) c, type);
        }

        /** {@return why a run of these options needs the simulator, or empty} */
        Optional<String> simulatorOnly(Method m) {
            List<String> why = new ArrayList<>();
            for (Class<?> p : m.getParameterTypes()) {
                if (p == SimTwins.class || p == SimControls.class) {
                    why.add("a " + p.getSimpleName() + " parameter");
                }
            }
            if (plan.isPresent()) {
                why.add("a @FaultPlan");
            }
            if (!durations.isEmpty()) {
                why.add("a @KernelDuration");
            }
            if (test.initCheck()) {
                why.add("initCheck = true");
            }
            if (test.capacity() > 0) {
                why.add("capacity = " + test.capacity());
            }
            return why.isEmpty() ? Optional.empty() : Optional.of(String.join(", ", why));
        }
    }

    private record Invocation(Run run) implements TestTemplateInvocationContext {
        @Override
        public String getDisplayName(int invocationIndex) {
            return "[" + run.backend.id() + "]";
        }

        @Override
        public List<Extension> getAdditionalExtensions() {
            return List.of(run);
        }
    }

    /** One run: opens the runtime before it, checks and closes it after. */
    static final class Run implements ExecutionCondition, BeforeEachCallback, BeforeTestExecutionCallback,
            AfterTestExecutionCallback, AfterEachCallback, ParameterResolver {

        final Backend backend;
        private final RunOptions options;

        Run(Backend backend, RunOptions options) {
            this.backend = backend;
            this.options = options;
        }

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            if (backend == Backend.SIM) {
                return ConditionEvaluationResult.enabled("the simulator is always available");
            }
            Optional<String> simOnly = options.simulatorOnly(context.getRequiredTestMethod());
            if (simOnly.isPresent()) {
                return ConditionEvaluationResult.disabled("needs the simulator: " + simOnly.get());
            }
            Optional<String> missing = unavailable(backend);
            if (missing.isEmpty()) {
                return ConditionEvaluationResult.enabled(backend.id() + " is available");
            }
            if (metrale.gpu.Setting.GPU_REQUIRED.bool(null)) {
                return ConditionEvaluationResult.enabled(backend.id() + " is unavailable but " + REQUIRED_PROPERTY
                        + "=true: the run fails");
            }
            return ConditionEvaluationResult.disabled(backend.id() + " is unavailable: " + missing.get());
        }

        @Override
        public void beforeEach(ExtensionContext context) {
            Optional<String> missing = backend == Backend.SIM ? Optional.empty() : unavailable(backend);
            if (missing.isPresent()) {
                throw new AssertionError(REQUIRED_PROPERTY + "=true but " + backend.id() + " is unavailable: " + missing.get());
            }
            GpuTest t = options.test();
            TestGpus.Builder b = TestGpus.on(backend).redZoneBytes(t.redZoneBytes());
            if (options.plan().map(p -> p.failAllocation().length > 0).orElse(false)) {
                // The plan fails the nth cuMemAlloc: every allocation is one only with allocator=driver.
                b.allocator("driver");
            }
            if (backend == Backend.SIM) {
                SimTwins table = new SimTwins();
                context.getStore(NS).put(SimTwins.class, table);
                b.seed(t.seed()).capacity(t.capacity()).initCheck(t.initCheck()).blocks(t.blocks()).twinMode(t.twinMode()).twinTable(table);
                for (Class<? extends Twins> c : t.twins()) {
                    b.twins(instantiate(c));
                }
            }
            Gpu gpu = b.open();
            CheckedGpu.expectAtClose(gpu, options.expected());
            // Closed by JUnit with the context if afterEach is never reached; close is idempotent.
            context.getStore(NS).put(Gpu.class, gpu);
            if (!options.durations().isEmpty()) {
                SimControls sim = gpu.unwrap(SimControls.class).orElseThrow();
                for (KernelDuration d : options.durations()) {
                    String[] k = splitKernel(d.kernel(), "@KernelDuration(kernel");
                    sim.setKernelDuration(k[0], k[1], d.nanos());
                }
            }
            inject(context, gpu);
        }

        /** Arms the fault plan after the {@code @BeforeEach} methods, so its counts start at the method. */
        @Override
        public void beforeTestExecution(ExtensionContext context) {
            Gpu gpu = context.getStore(NS).get(Gpu.class, Gpu.class);
            if (gpu != null) {
                options.plan().ifPresent(p -> context.getStore(NS).put(Armed.class, arm(gpu, p)));
            }
        }

        /** Checks, right after the method and before the {@code @AfterEach} methods, that every fault of the plan fired. */
        @Override
        public void afterTestExecution(ExtensionContext context) {
            Armed armed = context.getStore(NS).remove(Armed.class, Armed.class);
            Gpu gpu = context.getStore(NS).get(Gpu.class, Gpu.class);
            if (armed != null && gpu != null) {
                context.getStore(NS).put(Unfired.class, new Unfired(armed.unfired(gpu)));
            }
        }

        private static Twins instantiate(Class<? extends Twins> c) {
            try {
                var ctor = c.getDeclaredConstructor();
                ctor.setAccessible(true);
                return ctor.newInstance();
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw new ExtensionConfigurationException("@GpuTest(twins = " + c.getName() + ".class): cannot create it "
                        + "with its no-argument constructor (" + e + ")", e);
            }
        }

        private static Armed arm(Gpu gpu, FaultPlan p) {
            SimControls sim = gpu.unwrap(SimControls.class).orElseThrow(() ->
                    new ExtensionConfigurationException("@FaultPlan needs the simulator, but the runtime is " + gpu.backendName()));
            Armed armed = new Armed(p, sim, sim.allocationAttempts());
            for (int nth : p.failAllocation()) {
                sim.failAllocation(nth);
            }
            for (String k : p.faultKernel()) {
                String[] mf = splitKernel(k, "@FaultPlan(faultKernel");
                sim.faultKernel(mf[0], mf[1]);
            }
            for (CudaError e : p.failNextSync()) {
                sim.failNextSync(e);
            }
            return armed;
        }

        private static void inject(ExtensionContext context, Gpu gpu) {
            for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
                for (Class<?> c = instance.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                    for (Field f : c.getDeclaredFields()) {
                        if (!f.isAnnotationPresent(InjectGpu.class)) {
                            continue;
                        }
                        if (f.getType() != Gpu.class || Modifier.isStatic(f.getModifiers()) || Modifier.isFinal(f.getModifiers())) {
                            throw new ExtensionConfigurationException("@InjectGpu field " + c.getName() + "." + f.getName()
                                    + " must be a non-static, non-final field of type metrale.gpu.Gpu");
                        }
                        try {
                            f.setAccessible(true);
                            f.set(instance, gpu);
                        } catch (InaccessibleObjectException | IllegalAccessException e) {
                            throw new ExtensionConfigurationException("cannot set @InjectGpu field " + c.getName() + "."
                                    + f.getName() + ": open its package to metrale.gpu.testing (" + e.getMessage() + ")", e);
                        }
                    }
                }
            }
        }

        @Override
        public void afterEach(ExtensionContext context) {
            Gpu gpu = context.getStore(NS).remove(Gpu.class, Gpu.class);
            if (gpu == null) {
                return;
            }
            Unfired unfired = context.getStore(NS).remove(Unfired.class, Unfired.class);
            List<String> problems = new ArrayList<>(unfired == null ? List.of() : unfired.problems());
            try {
                problems.addAll(GpuChecks.problems(gpu, options.expected()));
            } finally {
                CheckedGpu.closeChecked(gpu);
            }
            if (!problems.isEmpty()) {
                throw new GpuCheckFailure(problems);
            }
        }

        @Override
        public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
            Class<?> type = parameterContext.getParameter().getType();
            return type == Gpu.class || type == Backend.class
                    || (backend == Backend.SIM && (type == SimTwins.class || type == SimControls.class));
        }

        @Override
        public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
            Class<?> type = parameterContext.getParameter().getType();
            if (type == Backend.class) {
                return backend;
            }
            if (type == SimTwins.class) {
                return extensionContext.getStore(NS).get(SimTwins.class, SimTwins.class);
            }
            Gpu gpu = extensionContext.getStore(NS).get(Gpu.class, Gpu.class);
            if (gpu == null) {
                throw new ParameterResolutionException("no runtime is open for " + parameterContext.getParameter()
                        + ": a Gpu parameter is resolved only for a @GpuTest method");
            }
            if (type == SimControls.class) {
                return gpu.unwrap(SimControls.class).orElseThrow(() ->
                        new ParameterResolutionException("the runtime of " + backend.id() + " has no SimControls"));
            }
            return gpu;
        }
    }

    /** What the problems of a plan that did not fully fire are, kept from the method's end to the run's checks. */
    private record Unfired(List<String> problems) {
    }

    /**
     * A plan armed on a runtime's simulator, with the device's allocation count when it was armed.
     * Readable after the test closed the runtime: the simulator's controls answer after close.
     */
    private record Armed(FaultPlan plan, SimControls sim, long allocsAtArm) {

        /**
         * {@return one problem per fault of the plan that never fired} Nothing is reported once a
         * sticky fault is latched: the runtime then refuses the later work that would have fired
         * the rest, and the fault check names the fault itself.
         */
        List<String> unfired(Gpu gpu) {
            List<String> out = new ArrayList<>();
            if (gpu.fault().isPresent()) {
                return out;
            }
            long made = sim.allocationAttempts() - allocsAtArm;
            for (int nth : plan.failAllocation()) {
                if (made < nth) {
                    out.add("@FaultPlan(failAllocation = " + nth + ") never fired: the test made " + made
                            + " device allocation(s)");
                }
            }
            for (String k : plan.faultKernel()) {
                String[] mf = splitKernel(k, "@FaultPlan(faultKernel");
                if (sim.kernelFaultArmed(mf[0], mf[1])) {
                    out.add("@FaultPlan(faultKernel = \"" + k + "\") never fired: " + k + " never ran");
                }
            }
            for (CudaError e : plan.failNextSync()) {
                if (sim.syncFailureArmed().isPresent()) {
                    out.add("@FaultPlan(failNextSync = CudaError." + e.name() + ") never fired: the test never synchronized");
                }
            }
            return out;
        }
    }

    /** {@return {@code module::func} split in two} */
    static String[] splitKernel(String k, String where) {
        int sep = k.indexOf("::");
        if (sep <= 0 || sep + 2 >= k.length()) {
            throw new ExtensionConfigurationException(where + " = \"" + k + "\"): expected module::func");
        }
        return new String[] {k.substring(0, sep), k.substring(sep + 2)};
    }

    /** {@return why {@code backend} cannot be opened here, or empty when it can} */
    static Optional<String> unavailable(Backend backend) {
        for (Gpu.BackendInfo info : Gpu.backends()) {
            if (info.name().equals(backend.id())) {
                return info.available() ? Optional.empty() : Optional.of(info.reason());
            }
        }
        return Optional.of("no backend named '" + backend.id() + "' is on the module or class path (add metrale-gpu-"
                + backend.id() + " as a test dependency)");
    }
}
