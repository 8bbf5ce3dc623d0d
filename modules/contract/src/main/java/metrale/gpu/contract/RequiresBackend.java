// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that needs a backend that can be opened here (a CUDA driver that loads, for
 * {@code "cuda"}): where {@link metrale.gpu.Gpu#backends()} says it cannot, the class is skipped
 * with the backend's reason, unless the system property {@value BackendCondition#REQUIRED_PROPERTY}
 * is {@code true} (GPU hosts set it), which makes the class run and fail in {@code @BeforeAll}
 * with that reason instead, so a host that lost its driver cannot pass by skipping everything.
 *
 * <pre>{@code
 * @RequiresBackend("cuda")
 * class CudaCollectiveGraphTest {
 *     // ...
 * }
 * }</pre>
 */
@Documented
@Inherited
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(BackendCondition.class)
public @interface RequiresBackend {

    /** {@return the backend's name, as {@link metrale.gpu.GpuBuilder#backend(String)} takes it} */
    String value();
}
