package metrale.gpu.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.Test;

/** Device addresses and handles are unique in the JVM, across simulated devices and processes. */
class SimIdentityTest {

    private static final String MODULE = "identity_test";

    private static SimDevice fresh() {
        return new SimDevice(new DriverConfig(Map.of(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)));
    }

    /** Every handle and address a device hands out, in one list. */
    private static List<Long> issue(SimDevice d) {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(d.memAlloc(1 + 1000L * i));
        }
        ids.add(d.streamCreate(0));
        ids.add(d.eventCreate(0));
        long s = d.streamCreate(1);
        ids.add(s);
        long m = d.moduleLoadData(MODULE, SimKernels.image(MODULE));
        ids.add(m);
        ids.add(d.moduleGetFunction(m, "k"));
        d.streamBeginCapture(s, 0);
        long g = d.streamEndCapture(s);
        ids.add(g);
        ids.add(d.graphInstantiate(g));
        return ids;
    }

    @Test
    void twoDevicesNeverShareAnAddressOrAHandle() {
        SimKernels.register(MODULE, "k", l -> { });
        try (SimDevice a = fresh(); SimDevice b = fresh();
             SimDevice c = new SimDevice(DriverConfig.empty())) {
            List<Long> all = new ArrayList<>();
            // Interleaved, so neither device gets a contiguous run of its own.
            for (int round = 0; round < 3; round++) {
                all.addAll(issue(a));
                all.addAll(issue(b));
                all.addAll(issue(c));
            }
            Set<Long> distinct = new HashSet<>(all);
            assertThat(distinct).hasSize(all.size());
        } finally {
            SimKernels.unregister(MODULE, "k");
        }
    }

    @Test
    void anotherDevicesPointerIsInvalidValueAndTouchesNothingHere() {
        try (SimDevice a = fresh(); SimDevice b = fresh(); Arena arena = Arena.ofConfined()) {
            long pa = a.memAlloc(256);
            long pb = b.memAlloc(256);
            MemorySegment host = arena.allocate(256);
            host.fill((byte) 7);
            a.memcpyHtoD(pa, host, 256);
            b.memcpyHtoD(pb, host, 256);
            MemorySegment ones = arena.allocate(256).fill((byte) 1);
            assertInvalidValue(() -> a.memcpyHtoD(pb, ones, 256));
            assertInvalidValue(() -> a.memsetD8(pb, 0, 256));
            assertInvalidValue(() -> a.memcpyDtoD(pa, pb, 256));
            assertInvalidValue(() -> a.memFree(pb));
            // A stream of b is not a stream of a.
            long sb = b.streamCreate(0);
            try {
                a.streamSynchronize(sb);
                throw new AssertionError("a accepted b's stream");
            } catch (GpuException e) {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_HANDLE);
            }
            MemorySegment out = arena.allocate(256);
            a.memcpyDtoH(out, pa, 256);
            assertThat(out.toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 7);
            b.memcpyDtoH(out, pb, 256);
            assertThat(out.toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 7);
            assertThat(a.probe()).isEqualTo(CudaError.SUCCESS);
            assertThat(b.probe()).isEqualTo(CudaError.SUCCESS);
        }
    }

    private static void assertInvalidValue(Runnable call) {
        try {
            call.run();
            throw new AssertionError("the call accepted another device's pointer");
        } catch (GpuException e) {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
        }
    }
}
