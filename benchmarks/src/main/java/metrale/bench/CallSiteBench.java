// SPDX-License-Identifier: Apache-2.0
package metrale.bench;

import java.util.concurrent.TimeUnit;
import metrale.telemetry.CallSites;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of naming an allocation's call site, measured on the CPU: each benchmark asks for the
 * site through three runtime-internal frames (as {@code Gpu.alloc} → runtime → pool do).
 *
 * <ul>
 *   <li>{@code full}: {@link CallSites#caller()}, a walk and a line-number lookup per call;</li>
 *   <li>{@code cached}: a bounded walk (16 frames, small first batch) with the line cached per frame;</li>
 *   <li>{@code sampled64}: the full walk for one allocation in 64, the others named {@code "(unsampled)"};</li>
 *   <li>{@code classOnly}: a walk without method information (the caller's class, no line): the
 *       cheapest walk, a floor for any walk-based site;</li>
 *   <li>{@code classAndBci}: a walk with method information, without the line-number lookup;</li>
 *   <li>{@code off}: no site ({@code "?"}), the floor.</li>
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks.jar CallSiteBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CallSiteBench {

    static {
        CallSites.skip("metrale.bench.CallSiteBench$Internal");
    }

    private int counter;

    private static final String INTERNAL = "metrale.bench.CallSiteBench$Internal";
    private static final StackWalker CLASSES = StackWalker.getInstance(java.util.Set.of(
            StackWalker.Option.RETAIN_CLASS_REFERENCE, StackWalker.Option.DROP_METHOD_INFO));
    private static final StackWalker METHODS = StackWalker.getInstance(java.util.Set.of(
            StackWalker.Option.RETAIN_CLASS_REFERENCE));

    /** Creates the state; JMH calls it. */
    public CallSiteBench() {
    }

    /** A frame's identity within its class: method, descriptor (overloads) and bytecode index. */
    private record FrameKey(Class<?> owner, String method, String descriptor, int bci) {
    }

    private static final StackWalker SHALLOW = StackWalker.getInstance(java.util.Set.of(
            StackWalker.Option.RETAIN_CLASS_REFERENCE), 8);
    private static final java.util.concurrent.ConcurrentHashMap<FrameKey, String> LINES =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * {@return the site by a walk of at most 16 frames whose {@code File.java:line} is cached per
     * frame} The candidate that was measured and not adopted: the walk, not the line lookup, is
     * what costs.
     */
    static String cachedSite() {
        StackWalker.StackFrame f = SHALLOW.walk(s -> s.limit(16)
                .filter(x -> !x.getDeclaringClass().getName().startsWith(INTERNAL)).findFirst().orElse(null));
        if (f == null) {
            return "unknown";
        }
        FrameKey key = new FrameKey(f.getDeclaringClass(), f.getMethodName(), f.getDescriptor(), f.getByteCodeIndex());
        String site = LINES.get(key);
        if (site == null) {
            site = f.getFileName() + ":" + f.getLineNumber();
            LINES.putIfAbsent(key, site);
        }
        return site;
    }

    /** Three frames the site walk must pass over, as the runtime's are. */
    static final class Internal {
        private Internal() {
        }

        static String a(int mode, CallSiteBench b) {
            return b2(mode, b);
        }

        static String b2(int mode, CallSiteBench b) {
            return c(mode, b);
        }

        static String c(int mode, CallSiteBench b) {
            return switch (mode) {
                case 0 -> CallSites.caller();
                case 1 -> cachedSite();
                case 2 -> (b.counter++ & 63) == 0 ? CallSites.caller() : "(unsampled)";
                case 4 -> CLASSES.walk(s -> s.filter(f -> !f.getDeclaringClass().getName().startsWith(INTERNAL))
                        .findFirst()).map(f -> f.getDeclaringClass().getName()).orElse("unknown");
                case 5 -> METHODS.walk(s -> s.filter(f -> !f.getDeclaringClass().getName().startsWith(INTERNAL))
                        .findFirst()).map(f -> f.getDeclaringClass().getName() + "@" + f.getByteCodeIndex()).orElse("unknown");
                default -> "?";
            };
        }
    }

    /** {@return the site by a full walk} */
    @Benchmark
    public String full() {
        return Internal.a(0, this);
    }

    /** {@return the site by a bounded walk with cached lines} */
    @Benchmark
    public String cached() {
        return Internal.a(1, this);
    }

    /** {@return the site for one call in 64} */
    @Benchmark
    public String sampled64() {
        return Internal.a(2, this);
    }

    /** {@return the caller's class only: a walk without method information, the cheapest walk there is} */
    @Benchmark
    public String classOnly() {
        return Internal.a(4, this);
    }

    /** {@return the caller's class and bytecode index: a walk with method information but no line lookup} */
    @Benchmark
    public String classAndBci() {
        return Internal.a(5, this);
    }

    /** {@return no site} */
    @Benchmark
    public String off() {
        return Internal.a(3, this);
    }
}
