// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import metrale.gpu.CaptureMode;
import metrale.gpu.CapturedStep;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LiveResource;
import metrale.gpu.StepOptions;
import metrale.gpu.Stream;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.MemInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every public method of {@link GpuRuntime} (each {@link Gpu} method and the doors of
 * {@link metrale.gpu.internal.access.RuntimeAccess}) passes the gate before it does anything: on a
 * closed runtime each one throws the closed gate's refusal and reaches no driver, and on an open
 * one every driver call it makes is made while it is inside the gate. The few methods meant to
 * answer after close are listed in {@link #UNGATED}, each with why, and must keep answering.
 *
 * <p>The runtimes run over a driver made with {@link Proxy}: it answers every call with a zero
 * value (a device, memory and success where the runtime needs one) and records the call, so a
 * door that skips the gate shows up as another outcome, as a driver call after close, or as a
 * driver call with no call in flight.
 */
class EveryDoorEntersTheGateTest {

    /** The methods that answer on a closed runtime, and why. */
    private static final Map<String, String> UNGATED = Map.of(
            "close", "closing a closed runtime does nothing",
            "isClosed", "the gate's own state",
            "fault", "the latched fault stays readable after close, for reports",
            "liveResources", "after close it returns the inventory close took",
            "options", "an immutable value fixed at open",
            "telemetry", "the trace and counters stay readable after close, for reports",
            "toString", "names the device and whether the runtime is closed");

    /**
     * Driver calls made outside the gate on purpose: the peer doors compare the two runtimes'
     * backends and ordinals before they enter either gate.
     */
    private static final List<String> IDENTITY_CALLS = List.of("name", "ordinal");

    /** Every string argument, among them the call name {@code onDriverStream} enters under. */
    private static final String DUMMY_CALL = "ncclAllReduce";

    /** The calls the closed runtime's driver received, by name. */
    private final List<String> closedCalls = new ArrayList<>();
    /** The open runtime's driver calls made while no call was in its gate, each with the door that made it. */
    private final List<String> outsideTheGate = new ArrayList<>();
    /** The doors that reached the open runtime's driver. */
    private final Set<String> reachedTheDriver = new TreeSet<>();
    private final AtomicReference<Gate> openGate = new AtomicReference<>();
    private final AtomicReference<String> currentDoor = new AtomicReference<>();
    private final Arena arena = Arena.ofConfined();
    private final KernelArgs args = new KernelArgs();
    /** What the doors and {@link #fresh()} made on the open runtime, released before it closes. */
    private final List<Object> made = new ArrayList<>();
    private GpuRuntime closed;
    private GpuRuntime open;
    private Dummies dummies;

    /** Handles of the open runtime, so that a door's own checks pass and it reaches the driver. */
    private record Dummies(DevicePtr ptr, Stream stream, Event event, KernelHandle kernel, GraphHandle graph) {
    }

    @BeforeEach
    void openTwoAndCloseOne() {
        closed = new GpuRuntime(Gpu.builder().backend("doors").allocator("driver").options(), driver(0, (name, proxy) -> closedCalls.add(name)));
        open = new GpuRuntime(Gpu.builder().backend("doors").allocator("driver").options(), driver(1, (name, proxy) -> {
            Gate g = openGate.get();
            if (currentDoor.get() != null) {
                reachedTheDriver.add(currentDoor.get());
            }
            if (g != null && g.inFlight() == 0 && !IDENTITY_CALLS.contains(name)) {
                outsideTheGate.add(name + " (during " + currentDoor.get() + ")");
            }
        }));
        openGate.set(open.core().gate());
        dummies = fresh();
        closed.close();
        assertThat(closed.isClosed()).isTrue();
        assertThat(closedCalls).as("close released the driver").contains("close");
        closedCalls.clear();
    }

    @AfterEach
    void closeTheRest() {
        openGate.set(null);
        // Released, so that close has nothing to report; a door may have destroyed some already.
        for (Object o : made) {
            try {
                switch (o) {
                    case Stream s -> open.destroyStream(s);
                    case Event e -> open.destroyEvent(e);
                    case GraphHandle g -> open.destroyGraph(g);
                    case CapturedStep c -> c.close();
                    case Runnable untrack -> untrack.run();
                    // Memory (a DeviceBuffer too) is left to close, as leaks reported below.
                    case null, default -> { }
                }
            } catch (Exception alreadyGone) {
                // destroyed by the door under test
            }
        }
        open.markLeaksReported();
        open.close();
        args.close();
        arena.close();
    }

    @Test
    void everyDoorOfAClosedRuntimeIsRefusedBeforeItReachesTheDriver() {
        List<String> wrong = new ArrayList<>();
        for (Method m : doors()) {
            if (UNGATED.containsKey(m.getName())) {
                continue;
            }
            Throwable thrown = invoke(closed, m);
            List<String> calls = closedCalls.stream().filter(c -> !IDENTITY_CALLS.contains(c)).toList();
            closedCalls.clear();
            String refusal = "Gpu is closed: ";
            if (!(thrown instanceof IllegalStateException) || !thrown.getMessage().startsWith(refusal)
                    || !thrown.getMessage().contains(" refused; close() was called at ")) {
                wrong.add(signature(m) + (thrown == null ? " returned" : " threw " + thrown)
                        + " instead of the closed gate's refusal");
            } else if (!m.isDefault() && !thrown.getMessage().startsWith(refusal + refusedAs(m) + " ")) {
                // A default method is refused by the door it calls; a door names itself.
                wrong.add(signature(m) + " was refused under another name: " + thrown.getMessage());
            }
            if (!calls.isEmpty()) {
                wrong.add(signature(m) + " reached the closed runtime's driver: " + calls);
            }
        }
        assertThat(wrong).as("doors that do not pass the gate first").isEmpty();
    }

    @Test
    void everyDriverCallOfAnOpenRuntimeIsMadeInsideItsGate() {
        for (Method m : doors()) {
            if (m.getName().equals("close")) {
                continue;
            }
            dummies = fresh();
            currentDoor.set(signature(m));
            invoke(open, m);
            currentDoor.set(null);
        }
        assertThat(reachedTheDriver).as("doors whose dummy arguments reach the driver, so the check says something")
                .hasSizeGreaterThan(65);
        assertThat(outsideTheGate).as("driver calls made with no call in the gate: a door that only checks the gate,"
                + " or none, while it reaches the driver").isEmpty();
    }

    @Test
    void theUngatedMethodsStillAnswerAfterClose() {
        for (Method m : doors()) {
            if (UNGATED.containsKey(m.getName())) {
                assertThat(invoke(closed, m)).as("%s is listed as ungated (%s)", signature(m), UNGATED.get(m.getName()))
                        .isNull();
            }
        }
        List<String> names = doors().stream().map(Method::getName).toList();
        assertThat(names).as("every ungated name is a method of the runtime").containsAll(UNGATED.keySet());
    }

    // ---- the doors and their arguments -----------------------------------------------------------

    /** {@return the runtime's public instance methods: Gpu's, the trusted doors and toString} */
    private static List<Method> doors() {
        List<Method> out = new ArrayList<>();
        for (Method m : GpuRuntime.class.getMethods()) {
            boolean own = m.getDeclaringClass() == GpuRuntime.class || m.getDeclaringClass() == Gpu.class;
            if (own && !Modifier.isStatic(m.getModifiers())) {
                out.add(m);
            }
        }
        out.sort(Comparator.comparing(EveryDoorEntersTheGateTest::signature));
        assertThat(out).as("the doors found").hasSizeGreaterThan(90);
        return out;
    }

    /** {@return what {@code m} threw, or {@code null} if it returned} What it returned is released after the test. */
    private Throwable invoke(GpuRuntime rt, Method m) {
        Object[] values = Arrays.stream(m.getParameterTypes()).map(this::dummy).toArray();
        try {
            made.add(m.invoke(rt, values));
            return null;
        } catch (InvocationTargetException e) {
            return e.getCause();
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    /** {@return a stream, event, buffer, kernel and graph of the open runtime, new for each door} */
    private Dummies fresh() {
        Stream s = open.createStream();
        open.loadModule("doors", new byte[16]);
        open.beginCapture(s);
        // 4096 bytes: what the largest dummy copy spans (a 64 x 64 2D copy of 64-byte pitch).
        Dummies d = new Dummies(open.alloc(4096), s, open.createEvent(), open.kernel("doors", "f"), open.endCapture(s));
        made.addAll(List.of(d.graph(), d.event(), d.stream()));
        return d;
    }

    /** A value of {@code type} that passes a door's own argument checks on the open runtime, where it can. */
    private Object dummy(Class<?> type) {
        if (type == long.class) {
            return 64L;
        } else if (type == int.class) {
            return 1;
        } else if (type == boolean.class) {
            return false;
        } else if (type == DevicePtr.class) {
            return dummies.ptr();
        } else if (type == Stream.class) {
            return dummies.stream();
        } else if (type == Event.class) {
            return dummies.event();
        } else if (type == GraphHandle.class) {
            return dummies.graph();
        } else if (type == KernelHandle.class) {
            return dummies.kernel();
        } else if (type == LaunchConfig.class) {
            return LaunchConfig.of(1, 1);
        } else if (type == KernelArgs.class) {
            return args;
        } else if (type == CaptureMode.class) {
            return CaptureMode.GLOBAL;
        } else if (type == StepOptions.class) {
            return StepOptions.defaults();
        } else if (type == CapturedStep.Region.class) {
            return (CapturedStep.Region) (gpu, stream) -> { };
        } else if (type == MemorySegment.class) {
            return arena.allocate(64);
        } else if (type == Gpu.class) {
            // For the closed runtime another, open one; for the open one itself.
            return open;
        } else if (type == String.class) {
            return DUMMY_CALL;
        } else if (type == String[].class) {
            return new String[0];
        } else if (type == Class.class) {
            return Object.class;
        } else if (type == LiveResource.Kind.class) {
            return LiveResource.Kind.values()[0];
        } else if (type == LongConsumer.class) {
            return (LongConsumer) stream -> { };
        } else if (type.isArray() && type.getComponentType().isPrimitive()) {
            return Array.newInstance(type.getComponentType(), type == long[].class ? 0 : 16);
        }
        return fail("no dummy value for a parameter of type " + type.getName() + ": add one");
    }

    /** {@return the call a door's refusal names} {@code onDriverStream} enters as the trusted module's call. */
    private static String refusedAs(Method m) {
        return m.getName().equals("onDriverStream") ? DUMMY_CALL : m.getName();
    }

    private static String signature(Method m) {
        return m.getName() + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName).toList();
    }

    /** Sees each driver call before it is answered. */
    private interface Watch {
        void call(String name, Object proxy);
    }

    /** A driver that answers every call with a zero value, a device, memory or success, after {@code watch} saw it. */
    private static Driver driver(int ordinal, Watch watch) {
        DeviceInfo info = new DeviceInfo("doors", "doors device " + ordinal, 1L << 30, 1, 9, 0, 0);
        long[] handles = {0x100000};
        return (Driver) Proxy.newProxyInstance(Driver.class.getClassLoader(), new Class<?>[] {Driver.class},
                (proxy, method, a) -> {
                    String name = method.getName();
                    if (method.getDeclaringClass() != Object.class) {
                        watch.call(name, proxy);
                    }
                    return switch (name) {
                        case "name" -> "doors";
                        case "ordinal" -> ordinal;
                        case "deviceInfo" -> info;
                        case "memGetInfo" -> new MemInfo(1L << 30, 1L << 30);
                        case "probe" -> CudaError.SUCCESS;
                        case "controls" -> Optional.empty();
                        // Distinct handles and addresses, as a driver's are.
                        case "memAlloc", "memAllocManaged", "streamCreate", "eventCreate", "moduleLoadData",
                             "moduleGetFunction", "streamEndCapture", "graphInstantiate" -> handles[0] += 0x10000;
                        case "toString" -> "doors driver " + ordinal;
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == a[0];
                        default -> zero(method.getReturnType());
                    };
                });
    }

    private static Object zero(Class<?> type) {
        if (type == boolean.class) {
            return false;
        } else if (type == int.class) {
            return 0;
        } else if (type == long.class) {
            return 0L;
        } else if (type == float.class) {
            return 0f;
        }
        return null;
    }
}
