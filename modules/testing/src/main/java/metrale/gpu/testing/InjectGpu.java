// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a non-static, non-final field of type {@link metrale.gpu.Gpu} in a test class: before each
 * {@link GpuTest} run it is set to that run's runtime (and {@code @BeforeEach} methods see it).
 *
 * <pre>{@code
 * class CacheTest {
 *     @InjectGpu Gpu gpu;
 *     DeviceCache cache;
 *
 *     @BeforeEach
 *     void fill() {
 *         cache = new DeviceCache(gpu, 1 << 20);
 *     }
 *
 *     @GpuTest
 *     void evictsTheOldest() {
 *         ...
 *     }
 * }
 * }</pre>
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface InjectGpu {
}
