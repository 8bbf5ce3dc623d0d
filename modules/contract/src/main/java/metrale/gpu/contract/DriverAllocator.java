// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a contract test, or every test of a contract class, with {@code allocator=driver}: the
 * test is about what {@code cuMemAlloc} and {@code cuMemFree} do (device free memory coming back,
 * a capture a {@code cuMemAlloc} invalidates, an injected allocation failure, a freed range that
 * stays unmapped), which the default allocator, the caching pool, answers otherwise by design.
 * {@link GpuContract} opens {@link GpuContract#gpu} with it, and {@link GpuContract#open} and
 * {@link GpuContract#reopen} keep it unless their options choose another allocator.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface DriverAllocator {

    /** {@return why the test needs {@code cuMemAlloc}'s semantics} */
    String value();
}
