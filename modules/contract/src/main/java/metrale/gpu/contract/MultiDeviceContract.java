// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuDevice;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Several devices: the device list, a runtime per device, peer access, peer copies (synchronous
 * and on a stream, range-checked against the ledger of each side) and events that order work
 * across devices. A backend's subclass says how many devices it has and how to open each; with
 * one device the cases between two devices run between two runtimes on device 0.
 */
public abstract class MultiDeviceContract {

    private final List<Gpu> open = new ArrayList<>();

    /** Creates the contract; subclasses are instantiated by JUnit. */
    protected MultiDeviceContract() {
    }

    /**
     * {@return a builder for a runtime on {@code device}} Every runtime of one test must live in
     * one process (on the simulator: one simulated process).
     *
     * @param device the ordinal
     */
    protected abstract GpuBuilder builder(int device);

    /** {@return how many devices the backend has here} */
    protected abstract int deviceCount();

    /**
     * Makes module {@value GpuContract#MODULE} (the contract kernels) available on {@code gpu}, as
     * {@link GpuContract#prepareKernels(Gpu)} does.
     *
     * @param gpu a runtime just opened
     */
    protected abstract void prepareKernels(Gpu gpu);

    /**
     * {@return whether a kernel's sticky fault stays inside the test's own runtimes} True on the
     * simulator, where each test has a simulated process of its own; false on CUDA, where it would
     * poison the test JVM (CUDA_SEMANTICS section 4), so the faulting case is left out there.
     */
    protected boolean faultsStayInTheTest() {
        return false;
    }

    /** Closes every runtime the test opened. */
    @AfterEach
    void closeAll() {
        for (Gpu g : open.reversed()) {
            g.close();
        }
    }

    private Gpu gpu(int device) {
        Gpu g = builder(device).open();
        open.add(g);
        return g;
    }

    /** {@return the last device, or device 0 again when there is one} */
    private int other() {
        return deviceCount() - 1;
    }

    private static byte[] pattern(int n, int salt) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + salt);
        }
        return b;
    }

    @Test
    void devicesListsEveryOrdinalWithItsPeers() {
        List<GpuDevice> devices = builder(0).devices();
        assertThat(devices).hasSize(deviceCount());
        for (int i = 0; i < devices.size(); i++) {
            GpuDevice d = devices.get(i);
            assertThat(d.ordinal()).isEqualTo(i);
            assertThat(d.name()).isNotBlank();
            assertThat(d.totalMemory()).isPositive();
            assertThat(d.computeMajor()).isPositive();
            assertThat(d.pciBusId()).matches("[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-9a-fA-F]");
            assertThat(d.peers()).doesNotContain(i).allMatch(p -> p >= 0 && p < deviceCount()).isSorted();
        }
        assertThat(devices.stream().map(GpuDevice::pciBusId).distinct()).hasSize(deviceCount());
    }

    @Test
    void eachDeviceOpensByOrdinal() {
        for (int i = 0; i < deviceCount(); i++) {
            Gpu g = gpu(i);
            assertThat(g.deviceOrdinal()).isEqualTo(i);
            assertThat(g.device().name()).isEqualTo(builder(0).devices().get(i).name());
        }
    }

    @Test
    void anOrdinalPastTheLastIsInvalidDevice() {
        GpuException e = catchThrowableOfType(GpuException.class, () -> gpu(deviceCount()));
        assertThat(e).isNotNull();
        assertThat(e.error()).isEqualTo(CudaError.INVALID_DEVICE);
    }

    @Test
    void aNegativeOrdinalIsRefusedByTheBuilder() {
        assertThatThrownBy(() -> builder(0).device(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
    }

    @Test
    void peerCopyToItselfIsACopy() {
        Gpu g = gpu(0);
        byte[] data = pattern(4096, 1);
        DevicePtr a = g.alloc(data.length);
        DevicePtr b = g.alloc(data.length);
        try {
            g.copyH2D(data, a);
            g.copyToPeer(a, g, b, data.length);
            byte[] back = new byte[data.length];
            g.copyD2H(b, back);
            assertThat(back).isEqualTo(data);

            Stream s = g.createStream();
            g.memset(b, 0, data.length);
            g.copyToPeerAsync(a.plus(1024), g, b, 1024, s);
            g.synchronize(s);
            g.destroyStream(s);
            byte[] part = new byte[1024];
            g.copyD2H(b, part);
            assertThat(part).isEqualTo(java.util.Arrays.copyOfRange(data, 1024, 2048));
        } finally {
            g.free(a);
            g.free(b);
        }
    }

    @Test
    void peerCopyBetweenTwoRuntimesBothWays() {
        Gpu g0 = gpu(0);
        Gpu g1 = gpu(other());
        byte[] data = pattern(1 << 16, 7);
        DevicePtr a = g0.alloc(data.length);
        DevicePtr b = g1.alloc(data.length);
        try {
            g0.copyH2D(data, a);
            g0.copyToPeer(a, g1, b, data.length);
            byte[] back = new byte[data.length];
            g1.copyD2H(b, back);
            assertThat(back).isEqualTo(data);

            byte[] second = pattern(data.length, 99);
            g1.copyH2D(second, b);
            Stream s = g1.createStream();
            g1.copyToPeerAsync(b, g0, a, data.length, s);
            g1.synchronize(s);
            g1.destroyStream(s);
            g0.copyD2H(a, back);
            assertThat(back).isEqualTo(second);
        } finally {
            g0.free(a);
            g1.free(b);
        }
    }

    @Test
    void peerCopyRangesAreCheckedAgainstEachSidesLedger() {
        Gpu g0 = gpu(0);
        Gpu g1 = gpu(other());
        DevicePtr a = g0.alloc(256);
        DevicePtr b = g1.alloc(128);
        try {
            GpuException dst = catchThrowableOfType(GpuException.class, () -> g0.copyToPeer(a, g1, b, 256));
            assertThat(dst.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(dst.getMessage()).contains("dst");
            GpuException src = catchThrowableOfType(GpuException.class, () -> g1.copyToPeer(b, g0, a, 256));
            assertThat(src.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(src.getMessage()).contains("src");
            // The other runtime's pointer as the source: not this runtime's memory.
            GpuException foreign = catchThrowableOfType(GpuException.class, () -> g0.copyToPeer(b, g1, b, 64));
            assertThat(foreign.error()).isEqualTo(CudaError.INVALID_VALUE);
            Stream s = g0.createStream();
            GpuException async = catchThrowableOfType(GpuException.class, () -> g0.copyToPeerAsync(a, g1, b, 256, s));
            assertThat(async.error()).isEqualTo(CudaError.INVALID_VALUE);
            g0.destroyStream(s);
        } finally {
            g0.free(a);
            g1.free(b);
        }
    }

    @Test
    void aPeerOfAnotherKindOrClosedIsRefused() {
        Gpu g0 = gpu(0);
        Gpu closed = builder(0).open();
        closed.close();
        DevicePtr a = g0.alloc(64);
        try {
            assertThatThrownBy(() -> g0.copyToPeer(a, closed, a, 64)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("closed");
            assertThatThrownBy(() -> g0.enablePeerAccess(g0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("own device");
            assertThat(g0.canAccessPeer(g0)).isFalse();
        } finally {
            g0.free(a);
        }
    }

    @Test
    void peerAccessFollowsTheDeviceList() {
        List<GpuDevice> devices = builder(0).devices();
        for (int i = 0; i < deviceCount(); i++) {
            for (int j = 0; j < deviceCount(); j++) {
                if (i == j) {
                    continue;
                }
                Gpu gi = gpu(i);
                Gpu gj = gpu(j);
                assertThat(gi.canAccessPeer(gj)).isEqualTo(devices.get(i).canAccessPeer(j));
                if (gi.canAccessPeer(gj)) {
                    gi.enablePeerAccess(gj);
                    gi.enablePeerAccess(gj); // the second time is a no-op
                    assertThat(gi.fault()).as("a repeated enable latches nothing").isEmpty();
                }
            }
        }
    }

    /**
     * The first enable reaches the driver; a repeated one, which CUDA answers with
     * PEER_ACCESS_ALREADY_ENABLED, is a no-op; any other error of the driver's is the caller's to
     * see, not swallowed with the repeat.
     */
    @Test
    void aRepeatedEnableIsANoOpButOtherErrorsOfTheEnableAreThrown() {
        org.junit.jupiter.api.Assumptions.assumeTrue(deviceCount() > 1, "two devices");
        Gpu g0 = CountingDriver.over(builder(0)).open();
        open.add(g0);
        Gpu g1 = CountingDriver.over(builder(1)).open();
        open.add(g1);
        org.junit.jupiter.api.Assumptions.assumeTrue(g0.canAccessPeer(g1), "device 0 can access device 1");
        CountingDriver d0 = CountingDriver.of(g0);
        CountingDriver d1 = CountingDriver.of(g1);
        g0.enablePeerAccess(g1);
        assertThat(d0.calls("enablePeerAccess")).as("the first enable reached the driver").isEqualTo(1);
        g0.enablePeerAccess(g1);
        assertThat(d0.calls("enablePeerAccess")).as("driver enables after the repeat").isBetween(1L, 2L);
        assertThat(g0.fault()).isEmpty();
        if (g1.canAccessPeer(g0)) {
            d1.failNext("enablePeerAccess", CudaError.PEER_ACCESS_UNSUPPORTED);
            GpuException e = catchThrowableOfType(GpuException.class, () -> g1.enablePeerAccess(g0));
            assertThat(e).as("an enable the driver refused for another reason").isNotNull();
            assertThat(e.error()).isEqualTo(CudaError.PEER_ACCESS_UNSUPPORTED);
            assertThat(g1.fault()).isEmpty();
            g1.enablePeerAccess(g0);
        }
        DevicePtr a = g0.alloc(64);
        DevicePtr b = g1.alloc(64);
        try {
            g0.copyH2D(pattern(64, 3), a);
            g0.copyToPeer(a, g1, b, 64);
            byte[] back = new byte[64];
            g1.copyD2H(b, back);
            assertThat(back).as("a peer copy after the repeated enable").isEqualTo(pattern(64, 3));
        } finally {
            g0.free(a);
            g1.free(b);
        }
    }

    /** {@return x on {@code g0}, y (all 1) on {@code g1}, and axpy(2, x, y) launched on {@code g1}} */
    private DevicePtr[] axpyReadingThePeer(Gpu g0, Gpu g1, int n) {
        prepareKernels(g1);
        float[] xs = new float[n];
        float[] ys = new float[n];
        for (int i = 0; i < n; i++) {
            xs[i] = i;
            ys[i] = 1;
        }
        DevicePtr x = g0.alloc(4L * n);
        DevicePtr y = g1.alloc(4L * n);
        g0.copyH2D(xs, x);
        g1.copyH2D(ys, y);
        g1.launch(g1.kernel(GpuContract.MODULE, "axpy_f32"), LaunchConfig.of((n + 127) / 128, 128), Stream.DEFAULT,
                new KernelArgs().f32(2f).ptr(x).ptr(y).i32(n));
        return new DevicePtr[] {x, y};
    }

    /** With peer access enabled, a kernel on one device reads another device's buffer through its pointer. */
    @Test
    void aKernelReadsAPeersMemoryOnceAccessIsEnabled() {
        assumeTrue(deviceCount() >= 2, "needs two devices");
        Gpu g0 = gpu(0);
        Gpu g1 = gpu(1);
        assumeTrue(g1.canAccessPeer(g0), "device 1 cannot access device 0");
        g1.enablePeerAccess(g0);
        int n = 1000;
        DevicePtr[] xy = axpyReadingThePeer(g0, g1, n);
        g1.synchronize();
        float[] out = new float[n];
        g1.copyD2H(xy[1], out);
        for (int i = 0; i < n; i++) {
            assertThat(out[i]).as("y[%d]", i).isEqualTo(2f * i + 1);
        }
        g0.free(xy[0]);
        g1.free(xy[1]);
    }

    /** Without peer access, the same kernel faults: the peer's memory is not this context's to address. */
    @Test
    void aKernelReadingAPeersMemoryWithoutAccessFaults() {
        assumeTrue(deviceCount() >= 2, "needs two devices");
        assumeTrue(faultsStayInTheTest(), "a sticky fault would poison every later test of this process");
        Gpu g0 = gpu(0);
        Gpu g1 = gpu(1);
        g0.enablePeerAccess(g1); // the other direction does not count
        GpuException e = catchThrowableOfType(GpuException.class, () -> {
            axpyReadingThePeer(g0, g1, 1000);
            g1.synchronize();
        });
        assertThat(e).as("the kernel on device 1 read device 0's memory without peer access").isNotNull();
        assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        assertSimulatorSaysWhy(e);
    }

    /**
     * Checks the backend's own words for a kernel that read a peer's memory without peer access;
     * nothing by default (CUDA says only ILLEGAL_ADDRESS).
     *
     * @param e the fault
     */
    protected void assertSimulatorSaysWhy(GpuException e) {
    }

    @Test
    void anEventOnOneDeviceOrdersAStreamOnAnother() {
        Gpu g0 = gpu(0);
        Gpu g1 = gpu(other());
        int n = 1 << 20;
        DevicePtr a = g0.alloc(n);
        DevicePtr b = g1.alloc(n);
        DevicePtr c = g1.alloc(n);
        Stream s0 = g0.createStream(true);
        Stream s1 = g1.createStream(true);
        Event done = g0.createEvent();
        try {
            g1.memset(c, 0, n);
            g1.synchronize(); // s1 is non-blocking: nothing orders it after the legacy stream's memset
            g0.memsetAsync(a, 0x5A, n, s0);
            g0.copyToPeerAsync(a, g1, b, n, s0);
            g0.recordEvent(done, s0);
            g1.streamWaitEvent(s1, g0, done);
            g1.copyD2DAsync(b, c, n, s1);
            g1.synchronize(s1);
            byte[] back = new byte[n];
            g1.copyD2H(c, back);
            for (int i = 0; i < n; i += 4099) {
                assertThat(back[i]).isEqualTo((byte) 0x5A);
            }
            assertThat(back[n - 1]).isEqualTo((byte) 0x5A);
        } finally {
            g0.synchronize();
            g0.destroyEvent(done);
            g0.destroyStream(s0);
            g1.destroyStream(s1);
            g0.free(a);
            g1.free(b);
            g1.free(c);
        }
    }
}
