// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static metrale.gpu.sim.SimTestSupport.fails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.internal.SimDevice;
import org.junit.jupiter.api.Test;

/** Sticky faults and fault injection. */
class SimFaultTest {

    @Test
    void anOutOfBoundsStoreIsAnIllegalAddressNamingTheKernelAddressAndAllocation() {
        try (Fixture fx = new Fixture()) {
            long p = fx.dev.memAlloc(64);
            long s = fx.dev.streamCreate(0);
            // The faulting launch itself succeeds; the fault surfaces at the sync.
            fx.launch("oob", LaunchConfig.of(1, 32), s, a -> a.ptr(p).i32(16));
            fails(CudaError.ILLEGAL_ADDRESS, () -> fx.dev.streamSynchronize(s))
                    .hasMessageContaining("cuStreamSynchronize")
                    .hasMessageContaining("t::oob")
                    .hasMessageContaining("write of int [16]")
                    .hasMessageContaining("0x" + Long.toHexString(p + 64))
                    .hasMessageContaining("device allocation [0x" + Long.toHexString(p) + ", +64 bytes)")
                    .hasMessageContaining("0 bytes past the allocation's end");
            assertThat(fx.dev.probe()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
        }
    }

    @Test
    void aStickyFaultFailsEveryLaterCallWithTheSameCode() {
        try (Fixture fx = new Fixture(); KernelArgs args = new KernelArgs()) {
            SimDevice dev = fx.dev;
            long p = dev.memAlloc(64);
            long s = dev.streamCreate(0);
            long e = dev.eventCreate(0);
            long other = dev.streamCreate(1);
            fx.launch("oob", LaunchConfig.of(1, 1), s, a -> a.ptr(p).i32(1000));
            fx.launch("fill", LaunchConfig.of(1, 1), other, a -> a.ptr(p).i32(1).i32(1));
            fx.launch("fill", LaunchConfig.of(1, 1), s, a -> a.ptr(p).i32(2).i32(1));
            assertThat(dev.simControls().pendingOperations()).isEqualTo(3);
            fails(CudaError.ILLEGAL_ADDRESS, dev::ctxSynchronize);
            assertThat(dev.simControls().pendingOperations()).as("work that will never run after the fault").isZero();
            CudaError sticky = CudaError.ILLEGAL_ADDRESS;
            fails(sticky, () -> dev.memAlloc(16)).hasMessageContaining("t::oob").hasMessageContaining("unusable");
            fails(sticky, () -> dev.memFree(p));
            fails(sticky, dev::memGetInfo);
            fails(sticky, () -> dev.memcpyHtoD(p, MemorySegment.ofArray(new byte[4]), 4));
            fails(sticky, () -> dev.streamCreate(0));
            fails(sticky, () -> dev.streamQuery(s));
            fails(sticky, () -> dev.streamSynchronize(s));
            fails(sticky, () -> dev.eventRecord(e, s));
            fails(sticky, () -> dev.eventQuery(e));
            fails(sticky, () -> dev.moduleLoadData("x", SimKernels.image("x")));
            fails(sticky, () -> dev.launchKernel(fx.f("fill"), LaunchConfig.of(1, 1), s, args));
            fails(sticky, dev::ctxSynchronize);
            fails(sticky, dev::ctxSynchronize);
            assertThat(dev.probe()).isEqualTo(sticky);
            assertThat(dev.deviceInfo().name()).isEqualTo("metrale simulator");
            dev.close();
            dev.close();
        }
    }

    @Test
    void faultKernelMakesTheNextRunOfThatKernelFault() {
        try (Fixture fx = new Fixture()) {
            long p = fx.zeros(4);
            fx.dev.simControls().faultKernel("t", "add");
            fx.fill(0, p, 1, 4);
            fx.dev.ctxSynchronize();
            fx.add(0, p, 1, 4);
            fails(CudaError.ILLEGAL_ADDRESS, fx.dev::ctxSynchronize).hasMessageContaining("faultKernel");
            fails(CudaError.ILLEGAL_ADDRESS, () -> fx.dev.memAlloc(4));
        }
    }

    @Test
    void failAllocationFailsTheNthAllocationOnlyAndIsNotSticky() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            dev.simControls().failAllocation(2);
            assertThat(dev.memAlloc(16)).isNotZero();
            fails(CudaError.OUT_OF_MEMORY, () -> dev.memAllocManaged(16, 1)).hasMessageContaining("failAllocation");
            assertThat(dev.memAlloc(16)).isNotZero();
            assertThat(dev.probe()).isEqualTo(CudaError.SUCCESS);
            assertThatThrownBy(() -> dev.simControls().failAllocation(0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void failNextSyncLatchesTheGivenStickyError() {
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh())) {
            assertThatThrownBy(() -> dev.simControls().failNextSync(CudaError.INVALID_VALUE)).isInstanceOf(IllegalArgumentException.class);
            dev.simControls().failNextSync(CudaError.LAUNCH_FAILED);
            long s = dev.streamCreate(0);
            assertThat(dev.streamQuery(s)).isTrue();
            fails(CudaError.LAUNCH_FAILED, () -> dev.streamSynchronize(s)).hasMessageContaining("failNextSync");
            fails(CudaError.LAUNCH_FAILED, () -> dev.memAlloc(1));
            assertThat(dev.probe()).isEqualTo(CudaError.LAUNCH_FAILED);
        }
    }

    @Test
    void aThrowingTwinIsALaunchFailureAndAFailedAssertIsAnAssert() {
        try (Fixture fx = new Fixture()) {
            fx.launch("boom", LaunchConfig.of(1, 1), 0, a -> { });
            fails(CudaError.LAUNCH_FAILED, fx.dev::ctxSynchronize).hasMessageContaining("twin threw on purpose");
        }
        try (Fixture fx = new Fixture()) {
            fx.launch("assertFalse", LaunchConfig.of(1, 1), 0, a -> { });
            fails(CudaError.ASSERT, fx.dev::ctxSynchronize).hasMessageContaining("x > 0");
        }
    }

    @Test
    void aPointerIntoNoAllocationFaultsOnFirstAccess() {
        try (Fixture fx = new Fixture()) {
            long p = fx.dev.memAlloc(64);
            fx.dev.memFree(p);
            fx.fill(0, p, 1, 1);
            fails(CudaError.ILLEGAL_ADDRESS, fx.dev::ctxSynchronize)
                    .hasMessageContaining("argument 0 = 0x" + Long.toHexString(p))
                    .hasMessageContaining("which was freed");
        }
    }

    @Test
    void aMisalignedPointerIsAMisalignedAddress() {
        try (Fixture fx = new Fixture()) {
            long p = fx.dev.memAlloc(64);
            fx.fill(0, p + 2, 1, 1);
            fails(CudaError.MISALIGNED_ADDRESS, fx.dev::ctxSynchronize).hasMessageContaining("not aligned to 4 bytes");
        }
    }

    @Test
    void readingAnArgumentWiderThanPassedIsALaunchFailure() {
        SimKernels.register("faults", "wide", l -> l.i64(0));
        try (SimDevice dev = new SimDevice(SimTestSupport.fresh()); KernelArgs args = new KernelArgs()) {
            long f = dev.moduleGetFunction(dev.moduleLoadData("faults", SimKernels.image("faults")), "wide");
            args.i32(1);
            dev.launchKernel(f, LaunchConfig.of(1, 1), 0, args);
            fails(CudaError.LAUNCH_FAILED, dev::ctxSynchronize)
                    .hasMessageContaining("reads argument 0 as long long (8 bytes) but the launch passed 4 bytes");
        }
    }

    @Test
    void aClosedDeviceRefusesCalls() {
        SimDevice dev = new SimDevice(SimTestSupport.fresh());
        dev.close();
        fails(CudaError.CONTEXT_IS_DESTROYED, () -> dev.memAlloc(1));
        dev.close();
    }
}
