// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

class SimGraphTest {

    @Test
    void aGraphReplaysTheArgumentValuesItCaptured() {
        try (Fixture fx = new Fixture(); KernelArgs args = new KernelArgs()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(8);
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, 0);
            args.clear().ptr(p).i32(5).i32(8);
            dev.launchKernel(fx.f("add"), LaunchConfig.of(1, 32), s, args);
            // Refilling the buffer after the launch must not change the captured values.
            args.clear().ptr(p).i32(1000).i32(1);
            args.clear().ptr(p).i32(3).i32(8);
            dev.launchKernel(fx.f("scale"), LaunchConfig.of(1, 32), s, args);
            args.clear().ptr(0).i32(-1).i32(-1);
            long g = dev.streamEndCapture(s);
            long x = dev.graphInstantiate(g);
            dev.graphLaunch(x, s);
            dev.graphLaunch(x, s);
            dev.streamSynchronize(s);
            // ((0 + 5) * 3 + 5) * 3
            assertThat(fx.ints(p, 8)).containsOnly(60);
        }
    }

    @Test
    void graphLaunchesRunLateAndOrderAfterEarlierLaunchesOfTheSameExec() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(1);
            long s = dev.streamCreate(1);
            long s2 = dev.streamCreate(1);
            dev.streamBeginCapture(s, 0);
            fx.add(s, p, 1, 1);
            long x = dev.graphInstantiate(dev.streamEndCapture(s));
            dev.graphLaunch(x, s);
            dev.graphLaunch(x, s2);
            long e = dev.eventCreate(0);
            dev.eventRecord(e, s2);
            assertThat(dev.eventQuery(e)).isFalse();
            dev.eventSynchronize(e);
            // The launch on s2 waited for the launch on s, so s is done too.
            assertThat(dev.streamQuery(s)).isTrue();
            assertThat(fx.ints(p, 1)[0]).isEqualTo(2);
        }
    }

    @Test
    void destroyingTheGraphLeavesTheExecUsableAndDestroyingARunningExecCompletesIt() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(1);
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, 0);
            fx.add(s, p, 1, 1);
            long g = dev.streamEndCapture(s);
            long x = dev.graphInstantiate(g);
            dev.graphDestroy(g);
            fails(CudaError.INVALID_VALUE, () -> dev.graphDestroy(g));
            fails(CudaError.INVALID_VALUE, () -> dev.graphInstantiate(g));
            dev.graphLaunch(x, s);
            dev.graphExecDestroy(x);
            fails(CudaError.INVALID_VALUE, () -> dev.graphLaunch(x, s));
            fails(CudaError.INVALID_VALUE, () -> dev.graphExecDestroy(x));
            dev.ctxSynchronize();
            assertThat(fx.ints(p, 1)[0]).isEqualTo(1);
        }
    }

    @Test
    void aCapturedPageableHostToDeviceCopyReadsTheHostAtLaunchTime() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(2);
            int[] host = {1, 2};
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, 0);
            dev.memcpyHtoDAsync(p, MemorySegment.ofArray(host), 8, s);
            long x = dev.graphInstantiate(dev.streamEndCapture(s));
            host[0] = 7;
            host[1] = 8;
            dev.graphLaunch(x, s);
            dev.streamSynchronize(s);
            assertThat(fx.ints(p, 2)).containsExactly(7, 8);
        }
    }

    @Test
    void eventRecordsAddNoNodesAndAnEmptyCaptureIsAValidGraph() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            long s = dev.streamCreate(0);
            long e = dev.eventCreate(0);
            dev.streamBeginCapture(s, 0);
            dev.eventRecord(e, s);
            long x = dev.graphInstantiate(dev.streamEndCapture(s));
            dev.graphLaunch(x, s);
            assertThat(dev.simControls().pendingOperations()).isEqualTo(1);
            dev.streamSynchronize(s);
            fails(CudaError.INVALID_VALUE, () -> dev.graphInstantiate(0));
            fails(CudaError.INVALID_VALUE, () -> dev.graphLaunch(0, s));
        }
    }

    @Test
    void aGraphLaunchedIntoACaptureBecomesAChildNode() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(1);
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, 0);
            fx.add(s, p, 1, 1);
            long inner = dev.graphInstantiate(dev.streamEndCapture(s));
            dev.streamBeginCapture(s, 0);
            dev.graphLaunch(inner, s);
            dev.graphLaunch(inner, s);
            long outer = dev.graphInstantiate(dev.streamEndCapture(s));
            dev.graphLaunch(outer, s);
            dev.streamSynchronize(s);
            assertThat(fx.ints(p, 1)[0]).isEqualTo(2);
        }
    }

    @Test
    void replayingAGraphWhoseMemoryWasFreedIsAnIllegalAddress() {
        try (Fixture fx = new Fixture()) {
            SimDevice dev = fx.dev;
            long p = fx.zeros(4);
            long s = dev.streamCreate(0);
            dev.streamBeginCapture(s, 0);
            dev.memsetD8Async(p, 1, 16, s);
            long x = dev.graphInstantiate(dev.streamEndCapture(s));
            dev.memFree(p);
            dev.graphLaunch(x, s);
            fails(CudaError.ILLEGAL_ADDRESS, () -> dev.streamSynchronize(s)).hasMessageContaining("freed");
            assertThat(dev.probe()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        }
    }
}
