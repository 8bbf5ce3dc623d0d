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
 *
 * <p>A fault of the plan that never fired fails the run, checked right after the method (before the
 * {@code @AfterEach} methods) and naming the attribute, e.g. {@code @FaultPlan(failAllocation = 3)
 * never fired: the test made 2 device allocation(s)}: the recovery path it was meant to test never
 * ran. Once a sticky fault is latched the rest of the plan is not checked, as the runtime refuses
 * the later work that would have fired it.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FaultPlan {

    /**
     * {@return which device allocations fail with {@code OUT_OF_MEMORY}, counted from 1 at the
     * method's start} Not sticky. A plan with any runs its method with {@code allocator=driver}, so
     * that every allocation is a {@code cuMemAlloc} of its own for the plan to count: a hit of the
     * caching pool, the default allocator, allocates nothing that could fail.
     */
    int[] failAllocation() default {};

    /** {@return kernels, as {@code module::func}, whose next run raises {@code ILLEGAL_ADDRESS} (sticky)} */
    String[] faultKernel() default {};

    /**
     * {@return a sticky error the next synchronize reports; at most one} The runtime's own syncs
     * count: with red zones on (the kit's default) each allocation waits for its red-zone fill and
     * each free synchronizes the context before it reads the freed buffer's red zone back.
     */
    CudaError[] failNextSync() default {};
}
