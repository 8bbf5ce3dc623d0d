// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import metrale.gpu.CudaError;

/**
 * Declares the sticky faults a {@link GpuTest} run latches on purpose. The run then fails if no
 * fault was latched, or one not listed; without this annotation any latched fault fails the run.
 * A run whose runtime latched a fault skips the leak and red-zone checks: after a sticky fault
 * CUDA leaves nothing to free but the context.
 *
 * <pre>{@code
 * @GpuTest(backends = Backend.SIM, twins = MyTwins.class)
 * @FaultPlan(faultKernel = "my::scale")        // its next run raises ILLEGAL_ADDRESS
 * @ExpectFault(CudaError.ILLEGAL_ADDRESS)
 * void aFaultingKernelSurfacesAtTheNextSync(Gpu gpu) {
 *     gpu.loadModule("my", MyKernels.ptx());
 *     DeviceBuffer x = gpu.allocBuffer(400);  // not a leak: after the fault nothing can be freed
 *     MyKernels.scale(gpu, x, 2f);
 *     GpuException e = assertThrows(GpuException.class, gpu::synchronize);
 *     assertEquals(CudaError.ILLEGAL_ADDRESS, e.error());
 * }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ExpectFault {

    /** {@return the errors the run may latch; one of them must be latched} */
    CudaError[] value();
}
