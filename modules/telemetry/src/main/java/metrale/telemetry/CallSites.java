// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import java.security.CodeSource;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Finds the application's call site ({@code File.java:line}) of a runtime
 * operation: the first stack frame whose class is not registered as
 * runtime-internal. Shared by the kernel audit, the D2H site counter and the
 * runtime core's allocation ledger.
 *
 * <p>A rule registered with {@link #skip(String...)} is either a class name,
 * which matches that class and its nested {@code $} classes, or a prefix ending
 * in {@code .}, which matches a package and its subpackages. Internal by
 * default: JDK packages ({@code java.}, {@code javax.}, {@code jdk.},
 * {@code sun.}, {@code com.sun.}) and this module's own classes, that is the
 * classes of package {@code metrale.telemetry} loaded from this module's code,
 * so tests in that package, which come from another location, still count as
 * callers. Rules are process-wide and can't be removed.
 *
 * <p>A walk is bounded: it reads at most {@value #MAX_DEPTH} frames, so a call with no application
 * frame near the top of its stack (a worker thread of the runtime, a deep framework) costs a bounded
 * walk and is named {@code unknown}.
 */
public final class CallSites {

    /**
     * The most frames a walk reads, the runtime's own and the JDK's included: an application calls
     * the runtime through a handful of its frames (ten to twenty, a stream or a proxy included), so
     * 64 leaves room and still bounds the walk of a stack that holds no application frame.
     */
    public static final int MAX_DEPTH = 64;

    private static final String OWN_PACKAGE = "metrale.telemetry";

    // JDK frames are never an application's site; they sit between runtime
    // frames when the runtime calls back through forEach, streams and the like.
    private static final List<String> RULES =
            new CopyOnWriteArrayList<>(List.of("java.", "javax.", "jdk.", "sun.", "com.sun."));

    private static final StackWalker WALKER =
            StackWalker.getInstance(Set.of(StackWalker.Option.RETAIN_CLASS_REFERENCE));

    private static final ClassValue<Boolean> OWN = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> c) {
            String pkg = c.getPackageName();
            return (pkg.equals(OWN_PACKAGE) || pkg.startsWith(OWN_PACKAGE + "."))
                    && Objects.equals(codeSource(c), codeSource(CallSites.class));
        }
    };

    // The verdict per class, rebuilt whenever a rule is added: a stack walk asks it once per frame.
    private static volatile ClassValue<Boolean> verdicts = newVerdicts();

    private CallSites() {
    }

    private static ClassValue<Boolean> newVerdicts() {
        return new ClassValue<>() {
            @Override
            protected Boolean computeValue(Class<?> c) {
                return decide(c);
            }
        };
    }

    /**
     * Registers runtime-internal classes or packages, whose frames
     * {@link #caller()} passes over.
     *
     * @param classOrPackagePrefixes class names ({@code "metrale.gpu.Gpu"}) or
     *                               package prefixes ending in {@code .} ({@code "metrale.gpu."})
     * @throws NullPointerException     if the array or an element is null
     * @throws IllegalArgumentException if an element is empty
     */
    public static void skip(String... classOrPackagePrefixes) {
        for (String rule : classOrPackagePrefixes) {
            Objects.requireNonNull(rule, "rule");
            if (rule.isEmpty()) {
                throw new IllegalArgumentException("empty skip rule");
            }
        }
        for (String rule : classOrPackagePrefixes) {
            if (!RULES.contains(rule)) {
                RULES.add(rule);
            }
        }
        verdicts = newVerdicts();
    }

    /**
     * The call site of the first frame on the calling thread's stack that is
     * not runtime-internal, among the top {@value #MAX_DEPTH}.
     *
     * @return {@code File.java:line}, or {@code "unknown"} if every frame read is internal
     */
    public static String caller() {
        Optional<StackWalker.StackFrame> frame =
                WALKER.walk(s -> s.limit(MAX_DEPTH).filter(f -> !internal(f.getDeclaringClass())).findFirst());
        return frame.map(CallSites::format).orElse("unknown");
    }

    static boolean internal(Class<?> c) {
        return verdicts.get(c);
    }

    private static boolean decide(Class<?> c) {
        if (OWN.get(c)) {
            return true;
        }
        String name = c.getName();
        for (String rule : RULES) {
            if (matches(name, rule)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code className} falls under {@code rule}.
     */
    static boolean matches(String className, String rule) {
        if (rule.endsWith(".")) {
            return className.startsWith(rule);
        }
        return className.startsWith(rule)
                && (className.length() == rule.length() || className.charAt(rule.length()) == '$');
    }

    private static String format(StackWalker.StackFrame f) {
        String file = f.getFileName();
        if (file == null) {
            String name = f.getClassName();
            file = name.substring(name.lastIndexOf('.') + 1);
        }
        return file + ":" + f.getLineNumber();
    }

    private static CodeSource codeSource(Class<?> c) {
        return c.getProtectionDomain().getCodeSource();
    }
}
