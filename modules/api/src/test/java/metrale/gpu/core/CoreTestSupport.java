// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import metrale.gpu.GpuBuilder;
import metrale.gpu.internal.ScriptedDriver;

/**
 * Helpers of the runtime core's tests over the public API: a runtime over a fresh scripted driver,
 * and call sites. These tests live outside {@code metrale.gpu.internal}, whose frames the runtime
 * skips when it records a call site.
 */
final class CoreTestSupport {

    private CoreTestSupport() {
    }

    /** {@return a builder for a runtime over a fresh scripted driver of 1 GiB} */
    static GpuBuilder scripted() {
        return new ScriptedDriver().builder();
    }

    /** {@return the caller's {@code File.java:line}, as the runtime records call sites} */
    static String here() {
        StackTraceElement e = new Throwable().getStackTrace()[1];
        return e.getFileName() + ":" + e.getLineNumber();
    }
}
