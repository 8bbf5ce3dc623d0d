// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import metrale.gpu.CudaError;

/**
 * Faults the simulator injects into a {@link GpuTest} run, armed after the {@code @BeforeEach} methods
 * and before the method itself (so counts start there), so an
 * application's recovery path is tested without a GPU. A run with a plan is skipped on CUDA.
 *
 * <p>A sticky fault the plan causes must also be declared with {@link ExpectFault}, or the run
 * fails: {@code faultKernel} latches {@code ILLEGAL_ADDRESS}, {@code failNextSync} the error it
 * names.
 *
 * <pre>{@code
 * @GpuTest(backends = Backend.SIM, twins = MyTwins.class)
 * @FaultPlan(failAllocation = 2)              // the method's 2nd allocation fails, not sticky
 * void retriesAfterOutOfMemory(Gpu gpu) {
 *     assertThat(new Pipeline(gpu).runWithRetry(input)).isEqualTo(expected);
 * }
 *
 * @GpuTest(backends = Backend.SIM, twins = MyTwins.class)
 * @FaultPlan(failNextSync = CudaError.LAUNCH_FAILED)
 * @ExpectFault(CudaError.LAUNCH_FAILED)        // the error the plan latches
 * void reportsALostDevice(Gpu gpu) {
 *     assertThatThrownBy(() -> new Pipeline(gpu).run(input)).hasMessageContaining("LAUNCH_FAILED");
 * }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FaultPlan {

    /**
     * {@return which device allocations fail with {@code OUT_OF_MEMORY}, counted from 1 at the
     * method's start} Not sticky.
     */
    int[] failAllocation() default {};

    /** {@return kernels, as {@code module::func}, whose next run raises {@code ILLEGAL_ADDRESS} (sticky)} */
    String[] faultKernel() default {};

    /** {@return a sticky error the next synchronize reports; at most one} */
    CudaError[] failNextSync() default {};
}
