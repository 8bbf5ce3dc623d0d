// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import metrale.gpu.cuda.CudaCondition;
import metrale.gpu.cuda.internal.CudaBackend;
import metrale.gpu.spi.Availability;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/**
 * {@link metrale.gpu.cuda.RequiresCuda} for jqwik, which runs no Jupiter extensions: skips with the
 * driver's reason where CUDA is unavailable, unless {@code metrale.gpu.required=true}.
 */
public final class CudaSkipHook implements SkipExecutionHook {

    /** Created by jqwik. */
    public CudaSkipHook() {
    }

    @Override
    public SkipResult shouldBeSkipped(LifecycleContext context) {
        Availability a = CudaBackend.availability();
        return a.available() || CudaCondition.required() ? SkipResult.doNotSkip() : SkipResult.skip("CUDA is unavailable: " + a.reason());
    }
}
