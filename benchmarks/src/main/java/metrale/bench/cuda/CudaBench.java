// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import metrale.gpu.Gpu;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What every CUDA benchmark's state shares: one forked JVM with native access (the runtime and
 * {@link Bare} both make downcalls), the runtime under measurement, and the per-iteration binding
 * of its context that the bare baselines rely on. A subclass opens {@link #gpu} in its trial setup
 * (with {@link CudaFixture#open}) and closes it in its teardown.
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public abstract class CudaBench {

    /** The runtime being measured; opened by the subclass's {@code Level.Trial} setup. */
    protected Gpu gpu;

    /** Creates the state. */
    protected CudaBench() {
    }

    /**
     * Makes the runtime's context current on the thread about to run the iteration, so the bare
     * calls, which bind nothing, find it there even if JMH moved the benchmark to another thread;
     * not timed.
     */
    @Setup(Level.Iteration)
    public void bind() {
        gpu.bindToThread();
    }
}
