// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * How long each launch of a kernel runs on the simulator's virtual clock in a {@link GpuTest} run,
 * so timing code (event queries that answer {@code NOT_READY} until the work is done,
 * {@code elapsedMillis}) is tested without a GPU. A twin may declare its own duration instead; the
 * clock itself is read and moved through a {@link metrale.gpu.sim.SimControls} parameter. A run
 * with a duration is skipped on CUDA, whose kernels take the time they take.
 *
 * <pre>{@code
 * @GpuTest(backends = Backend.SIM, twins = MyTwins.class)
 * @KernelDuration(kernel = "my::scale", nanos = 2_000_000)   // 2 ms of virtual time per launch
 * void timesTheStep(Gpu gpu) {
 *     assertThat(new Pipeline(gpu).timedStepMillis()).isCloseTo(2f, within(0.01f));
 * }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(KernelDuration.List.class)
public @interface KernelDuration {

    /** {@return the kernel, as {@code module::func}} */
    String kernel();

    /** {@return how long each launch runs, in virtual nanoseconds} */
    long nanos();

    /** The container of repeated {@link KernelDuration}s. */
    @Target({ElementType.METHOD, ElementType.TYPE})
    @Retention(RetentionPolicy.RUNTIME)
    @Documented
    @interface List {
        /** {@return the durations} */
        KernelDuration[] value();
    }
}
