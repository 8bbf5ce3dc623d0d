// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * A Java twin of one CUDA kernel, registered with {@link SimKernels#register} under its
 * {@code module::func} name. The simulator calls {@link #launch} once per launch, on the thread
 * that drains the kernel's stream, single-threaded; the twin usually calls
 * {@link SimLaunch#forEachThread} or {@link SimLaunch#forEachBlock} once.
 */
@FunctionalInterface
public interface SimKernel {

    /**
     * Runs one launch of the kernel.
     *
     * @param launch the launch: configuration, arguments and views of device memory; valid only
     *               during this call
     */
    void launch(SimLaunch launch);
}
