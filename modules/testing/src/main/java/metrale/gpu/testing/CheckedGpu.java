// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.RedZoneViolation;
import metrale.telemetry.CallSites;

/**
 * The runtime a test gets: every call goes to the real one, except that a {@code free} first reads
 * the freed buffer's red zone back, so an overflow of a buffer the test freed before it ended is
 * still found. A runtime only scans live buffers, and most buffers are freed by then.
 *
 * <p>A {@code close} through it first runs {@link GpuChecks} and keeps what they found, so a test
 * that closes its runtime itself still gets the leak report.
 *
 * <p>Default methods ({@code allocBuffer}, the array copies) run on the proxy, so a
 * {@link metrale.gpu.DeviceBuffer} frees through it too.
 *
 * <p>The scan reads the pad as the red-zone scan does, with a blocking copy on the legacy default
 * stream: it sees the work of that stream and of blocking streams, not yet the work of a
 * non-blocking stream, which only the free itself waits for. It adds no stream sync and no D2H
 * copy to the runtime's counters, so a test's assertions on them hold under the kit.
 */
final class CheckedGpu implements InvocationHandler {

    static {
        // Call sites (allocations, kernel lookups, faults) name the test's line, not this class.
        CallSites.skip(CheckedGpu.class.getName());
    }

    private static final Method FREE;
    private static final Method BEGIN_CAPTURE;
    private static final Method BEGIN_CAPTURE_MODE;
    private static final Method END_CAPTURE;
    private static final Method ABORT_CAPTURE;
    private static final Method CLOSE;

    static {
        try {
            FREE = Gpu.class.getMethod("free", DevicePtr.class);
            BEGIN_CAPTURE = Gpu.class.getMethod("beginCapture", metrale.gpu.Stream.class);
            BEGIN_CAPTURE_MODE = Gpu.class.getMethod("beginCapture", metrale.gpu.Stream.class, metrale.gpu.CaptureMode.class);
            END_CAPTURE = Gpu.class.getMethod("endCapture", metrale.gpu.Stream.class);
            ABORT_CAPTURE = Gpu.class.getMethod("abortCaptureIfActive", metrale.gpu.Stream.class);
            CLOSE = Gpu.class.getMethod("close");
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Gpu target;
    private final boolean redZones;
    private final List<RedZoneViolation> freedViolations = new ArrayList<>();
    // Captures begun and not yet ended: a free then fails anyway, and a scan would break the capture.
    private final AtomicInteger capturing = new AtomicInteger();
    // The faults the check a close makes first accepts; set by GpuExtension from @ExpectFault.
    private volatile Set<CudaError> expectedAtClose = Set.of();
    // What GpuChecks found when the runtime was closed through this proxy; null before.
    private volatile List<String> problemsAtClose;
    // Set by a caller that has just run the checks itself: its close need not run them again.
    private volatile boolean checked;

    private CheckedGpu(Gpu target) {
        this.target = target;
        this.redZones = target.options().redZoneBytes() > 0;
    }

    /** {@return a proxy of {@code target} that checks red zones at each free} */
    static Gpu wrap(Gpu target) {
        return (Gpu) Proxy.newProxyInstance(Gpu.class.getClassLoader(), new Class<?>[] {Gpu.class}, new CheckedGpu(target));
    }

    /** {@return the red-zone damage found in buffers freed through {@code gpu}; empty if it is not such a proxy} */
    static List<RedZoneViolation> freedViolations(Gpu gpu) {
        if (Proxy.isProxyClass(gpu.getClass()) && Proxy.getInvocationHandler(gpu) instanceof CheckedGpu c) {
            synchronized (c.freedViolations) {
                return List.copyOf(c.freedViolations);
            }
        }
        return List.of();
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
        if (method.equals(FREE)) {
            beforeFree((DevicePtr) args[0]);
        } else if (method.equals(CLOSE)) {
            checkBeforeClose((Gpu) proxy);
        }
        Object result;
        try {
            result = method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        if (method.equals(BEGIN_CAPTURE) || method.equals(BEGIN_CAPTURE_MODE)) {
            capturing.incrementAndGet();
        } else if (method.equals(END_CAPTURE) || method.equals(ABORT_CAPTURE)) {
            capturing.updateAndGet(n -> Math.max(0, n - 1));
        }
        return result;
    }

    private void beforeFree(DevicePtr ptr) {
        if (!redZones || ptr == null || ptr.isNull() || capturing.get() > 0 || target.fault().isPresent() || target.isClosed()) {
            return;
        }
        try {
            for (RedZoneViolation v : target.findRedzoneViolations()) {
                if (v.allocation().ptr().equals(ptr)) {
                    synchronized (freedViolations) {
                        freedViolations.add(v);
                    }
                }
            }
        } catch (RuntimeException e) {
            // The free reports the same failure to the application.
        }
    }
}
