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
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ExpectFault {

    /** {@return the errors the run may latch; one of them must be latched} */
    CudaError[] value();
}
