package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.sim.internal.SimDevice;
import metrale.gpu.spi.DriverConfig;
import org.assertj.core.api.AbstractThrowableAssert;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** Helpers shared by the simulator's tests. */
final class SimTestSupport {

    private SimTestSupport() {
    }

    /** {@return options for a device in a simulated process of its own, so its sticky faults stay in the test} */
    static DriverConfig fresh() {
        return fresh(Map.of());
    }

    /** {@return {@code options} plus a simulated process of the device's own} */
    static DriverConfig fresh(Map<String, String> options) {
        Map<String, String> all = new HashMap<>(options);
        all.putIfAbsent(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
        return new DriverConfig(all);
    }

    /** {@return {@code config} plus a simulated process of the device's own, unless it names one} */
    static DriverConfig fresh(DriverConfig config) {
        Map<String, String> all = new HashMap<>(config.options());
        all.putIfAbsent(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
        return new DriverConfig(all, config.objects());
    }

    /** Asserts that {@code call} fails with {@code error} and returns the assertion for more checks. */
    static AbstractThrowableAssert<?, ? extends Throwable> fails(CudaError error, ThrowingCallable call) {
        return assertThatThrownBy(call).isInstanceOf(GpuException.class)
                .satisfies(t -> org.assertj.core.api.Assertions.assertThat(((GpuException) t).error()).isEqualTo(error));
    }

    /** {@return a native segment holding {@code values}} */
    static MemorySegment floats(Arena arena, float... values) {
        return arena.allocateFrom(ValueLayout.JAVA_FLOAT, values);
    }

    /** Copies {@code n} floats from device memory to a new array, blocking. */
    static float[] readFloats(SimDevice dev, long ptr, int n) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment host = a.allocate(4L * n);
            dev.memcpyDtoH(host, ptr, 4L * n);
            return host.toArray(ValueLayout.JAVA_FLOAT);
        }
    }

    /** Copies {@code n} ints from device memory to a new array, blocking. */
    static int[] readInts(SimDevice dev, long ptr, int n) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment host = a.allocate(4L * n);
            dev.memcpyDtoH(host, ptr, 4L * n);
            return host.toArray(ValueLayout.JAVA_INT);
        }
    }

    /** Copies {@code values} to device memory, blocking. */
    static void writeFloats(SimDevice dev, long ptr, float... values) {
        dev.memcpyHtoD(ptr, MemorySegment.ofArray(values), 4L * values.length);
    }

    /** Copies {@code values} to device memory, blocking. */
    static void writeInts(SimDevice dev, long ptr, int... values) {
        dev.memcpyHtoD(ptr, MemorySegment.ofArray(values), 4L * values.length);
    }
}
