// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import metrale.gpu.cuda.internal.CudaBackend;
import metrale.gpu.spi.Availability;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs GPU tests only where the CUDA driver loads. Elsewhere they are skipped with the driver's
 * reason, unless the system property {@code metrale.gpu.required} is {@code true}: then they run
 * and fail in {@code @BeforeAll} with that reason, so a GPU host that lost its driver cannot pass
 * by skipping everything.
 */
public final class CudaCondition implements ExecutionCondition, BeforeAllCallback {

    /** The property a GPU host sets to turn skips into failures. */
    public static final String REQUIRED_PROPERTY = "metrale.gpu.required";

    /** {@return whether GPU tests must run here} */
    public static boolean required() {
        return Boolean.getBoolean(REQUIRED_PROPERTY);
    }

    /**
     * Skips the calling test for a missing optional capability (NVRTC, a driver entry point of a
     * newer CUDA), or fails it where {@value #REQUIRED_PROPERTY}{@code =true}: a GPU host must
     * have every capability the tests exercise.
     *
     * @param present whether the capability is there
     * @param what    what is missing, for the message
     */
    public static void assumeCapability(boolean present, String what) {
        if (present) {
            return;
        }
        if (required()) {
            throw new AssertionError(REQUIRED_PROPERTY + "=true but " + what);
        }
        Assumptions.assumeTrue(false, what);
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Availability a = CudaBackend.availability();
        if (a.available()) {
            return ConditionEvaluationResult.enabled("CUDA is available");
        }
        if (required()) {
            return ConditionEvaluationResult.enabled("CUDA is unavailable but " + REQUIRED_PROPERTY + "=true: the test fails");
        }
        return ConditionEvaluationResult.disabled("CUDA is unavailable: " + a.reason());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Availability a = CudaBackend.availability();
        if (!a.available()) {
            throw new AssertionError(REQUIRED_PROPERTY + "=true but CUDA is unavailable: " + a.reason());
        }
    }
}
