// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that needs a CUDA device: skipped with the reason where no driver loads,
 * failed instead when {@code -Dmetrale.gpu.required=true} (GPU hosts), see {@link CudaCondition}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(CudaCondition.class)
public @interface RequiresCuda {
}
