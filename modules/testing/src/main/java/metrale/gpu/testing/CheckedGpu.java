// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import metrale.gpu.CudaError;
import metrale.gpu.Gpu;
import metrale.telemetry.CallSites;

/**
 * The runtime a test gets: every call goes to the real one, except that a {@code close} through it
 * first runs {@link GpuChecks} and keeps what they found, so a test that closes its runtime itself
 * still gets the leak report. (Red zones of freed buffers are scanned by the runtime at each free.)
 *
 * <p>Default methods ({@code allocBuffer}, the array copies) run on the proxy, so a
 * {@link metrale.gpu.DeviceBuffer} closes through it too.
 */
final class CheckedGpu implements InvocationHandler {

    static {
        // Call sites (allocations, kernel lookups, faults) name the test's line, not this class.
        CallSites.skip(CheckedGpu.class.getName());
    }

    private static final Method CLOSE;

    static {
        try {
            CLOSE = Gpu.class.getMethod("close");
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Gpu target;
    // The faults the check a close makes first accepts; set by GpuExtension from @ExpectFault.
    private volatile Set<CudaError> expectedAtClose = Set.of();
    // What GpuChecks found when the runtime was closed through this proxy; null before.
    private volatile List<String> problemsAtClose;
    // Set by a caller that has just run the checks itself: its close need not run them again.
    private volatile boolean checked;

    private CheckedGpu(Gpu target) {
        this.target = target;
    }

    /** {@return a proxy of {@code target} that runs the checks before it closes} */
    static Gpu wrap(Gpu target) {
        return (Gpu) Proxy.newProxyInstance(Gpu.class.getClassLoader(), new Class<?>[] {Gpu.class}, new CheckedGpu(target));
    }

    /**
     * Sets the faults the check that a close through {@code gpu} makes first accepts; a no-op if
     * {@code gpu} is not such a proxy.
     */
    static void expectAtClose(Gpu gpu, Set<CudaError> expected) {
        handler(gpu).ifPresent(c -> c.expectedAtClose = Set.copyOf(expected));
    }

    /**
     * {@return what {@link GpuChecks} found just before the runtime was closed through {@code gpu};
     * empty if it was not closed through such a proxy}
     */
    static Optional<List<String>> problemsAtClose(Gpu gpu) {
        return handler(gpu).map(c -> c.problemsAtClose);
    }

    /** Closes {@code gpu} without the checks a close through the proxy runs first: the caller just ran them. */
    static void closeChecked(Gpu gpu) {
        handler(gpu).ifPresent(c -> c.checked = true);
        gpu.close();
    }

    private static Optional<CheckedGpu> handler(Gpu gpu) {
        if (Proxy.isProxyClass(gpu.getClass()) && Proxy.getInvocationHandler(gpu) instanceof CheckedGpu c) {
            return Optional.of(c);
        }
        return Optional.empty();
    }

    /**
     * Runs the checks before the runtime is closed, while it can still be asked: a test that
     * closes its runtime itself still gets its leak report.
     */
    private void checkBeforeClose(Gpu proxy) {
        synchronized (this) {
            if (checked || problemsAtClose != null || target.isClosed()) {
                return;
            }
            List<String> found;
            try {
                found = GpuChecks.problems(proxy, expectedAtClose);
            } catch (RuntimeException e) {
                found = List.of("the checks made when the test closed its runtime failed: " + e);
            }
            problemsAtClose = List.copyOf(found);
        }
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return switch (method.getName()) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                case "toString" -> "checked " + target;
                default -> method.invoke(target, args);
            };
        }
        if (method.isDefault()) {
            return InvocationHandler.invokeDefault(proxy, method, args);
        }
        if (method.equals(CLOSE)) {
            checkBeforeClose((Gpu) proxy);
        }
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
