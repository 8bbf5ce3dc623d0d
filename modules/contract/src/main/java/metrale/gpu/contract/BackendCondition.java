// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.util.Optional;
import metrale.gpu.Gpu;
import metrale.gpu.Setting;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The extension behind {@link RequiresBackend}: enables a class where its backend can be opened,
 * skips it with the backend's reason elsewhere, and where {@value #REQUIRED_PROPERTY}{@code =true}
 * runs it anyway and fails it before its first test.
 */
public final class BackendCondition implements ExecutionCondition, BeforeAllCallback {

    /** The system property of {@link Setting#GPU_REQUIRED}, which a GPU host sets to turn skips into failures. */
    public static final String REQUIRED_PROPERTY = "metrale.gpu.required";

    /** Created by JUnit for {@link RequiresBackend}. */
    public BackendCondition() {
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<String> name = backend(context);
        if (name.isEmpty()) {
            return ConditionEvaluationResult.enabled("no @RequiresBackend");
        }
        String why = unavailable(name.get());
        if (why == null) {
            return ConditionEvaluationResult.enabled(name.get() + " is available");
        }
        if (Setting.GPU_REQUIRED.bool(null)) {
            return ConditionEvaluationResult.enabled(why + ", but " + REQUIRED_PROPERTY + "=true: the test fails");
        }
        return ConditionEvaluationResult.disabled(why);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Optional<String> name = backend(context);
        String why = name.isEmpty() ? null : unavailable(name.get());
        if (why != null) {
            throw new AssertionError(REQUIRED_PROPERTY + "=true but " + why);
        }
    }

    private static Optional<String> backend(ExtensionContext context) {
        return AnnotationSupport.findAnnotation(context.getElement(), RequiresBackend.class).map(RequiresBackend::value);
    }

    /** {@return why backend {@code name} cannot be opened here, or null if it can} */
    private static String unavailable(String name) {
        for (Gpu.BackendInfo b : Gpu.backends()) {
            if (b.name().equalsIgnoreCase(name)) {
                return b.available() ? null : name + " is unavailable: " + b.reason();
            }
        }
        return "no backend named " + name + " is on the path";
    }
}
