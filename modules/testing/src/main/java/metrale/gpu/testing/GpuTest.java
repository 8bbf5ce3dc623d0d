// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import metrale.gpu.sim.SimBlockOrder;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test run once per backend on a fresh runtime, which the method receives as a
 * {@link metrale.gpu.Gpu} parameter (and fields annotated {@link InjectGpu} receive too).
 *
 * <p>Each run is named by its backend: {@code [sim]} always; {@code [cuda]} where a CUDA driver
 * loads, skipped with the driver's reason elsewhere, and failing with that reason when the system
 * property {@code metrale.gpu.required} is {@code true} (GPU hosts). A run that needs the
 * simulator (a {@link FaultPlan}, a {@link KernelDuration}, {@link #initCheck()},
 * {@link #capacity()}) is skipped on CUDA with that reason.
 *
 * <p>On the simulator each run has a device of its own in a simulated process of its own, and its
 * own twins ({@link #twins()}, and what the test registers in a {@link metrale.gpu.sim.SimTwins}
 * parameter before it looks a kernel up), so runs may go in parallel.
 *
 * <p>Parameters: {@link metrale.gpu.Gpu}, {@link Backend}, and on the simulator
 * {@link metrale.gpu.sim.SimTwins} and {@link metrale.gpu.sim.SimControls} (a method that takes
 * either is skipped on CUDA).
 *
 * <p>After the method (and its {@code @AfterEach} methods) the runtime is checked by
 * {@link GpuChecks}: the run fails if a live allocation or another resource was left (page-locked
 * memory, a stream, an event, a graph, a captured step, a communicator: see
 * {@link metrale.gpu.Gpu#liveResources()}), a red zone was overwritten, a sticky fault was latched
 * that {@link ExpectFault} does not declare, a fault of its {@link FaultPlan} never fired, or (with
 * {@link #initCheck()}) device memory was read before it was written; each problem names its call
 * site. The runtime is then closed, which frees what is left. A test may close the runtime itself:
 * the checks then run just before that close, and their report is the run's.
 *
 * <pre>{@code
 * class ScaleTest {
 *     @GpuTest(twins = MyTwins.class)          // [sim], and [cuda] where a driver loads
 *     void scalesEveryElement(Gpu gpu) {
 *         gpu.loadModule("my", MyKernels.ptx());
 *         try (DeviceBuffer x = gpu.allocBuffer(4L * 1000)) {
 *             x.copyFrom(new float[1000]);
 *             MyKernels.scale(gpu, x, 2f);
 *             gpu.synchronize();
 *         }                                    // a buffer left open here fails the run, naming its site
 *     }
 * }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@TestTemplate
@ExtendWith(GpuExtension.class)
public @interface GpuTest {

    /** {@return the backends to run on, in this order} */
    Backend[] backends() default {Backend.SIM, Backend.CUDA};

    /**
     * {@return the red-zone pad after each buffer, in bytes; 0 turns red zones off} With them on,
     * a write past a buffer's end lands in its pad and fails the test naming the buffer's site;
     * with them off, the same write on the simulator is an {@code ILLEGAL_ADDRESS} fault.
     */
    long redZoneBytes() default 256;

    /** {@return the simulated device's memory in bytes; 0 keeps the simulator's default (4 GiB)} */
    long capacity() default 0;

    /** {@return the simulator's schedule seed, which picks the order of work ready on several streams} */
    long seed() default 0;

    /**
     * {@return whether reads of device memory never written fail the test} As compute-sanitizer's
     * initcheck: a kernel view read, a device-to-host or a device-to-device copy of bytes no copy,
     * memset or kernel wrote is reported with the allocation's site and the offset. Simulator only.
     */
    boolean initCheck() default false;

    /**
     * {@return how the simulator runs a grid's blocks} {@code SHUFFLED} (an order drawn from
     * {@link #seed()}) and {@code PARALLEL} (several threads) show a twin that depends on an order
     * among blocks, which CUDA never promises. CUDA runs ignore it.
     */
    SimBlockOrder blocks() default SimBlockOrder.ORDERED;

    /**
     * {@return what runs a simulated kernel} {@code PREFER} (the default; {@code metrale.sim.twins}
     * may still say otherwise) runs a registered twin and, with none, the kernel's own PTX on the
     * simulator's engine; {@code OFF} ignores twins; {@code VERIFY} runs twin and PTX and fails a
     * launch whose results differ, which finds a twin that drifted from its kernel. CUDA runs ignore it.
     */
    metrale.gpu.sim.SimTwinMode twinMode() default metrale.gpu.sim.SimTwinMode.PREFER;

    /** {@return classes whose twins are registered in this run's own table (each has a no-argument constructor)} */
    Class<? extends Twins>[] twins() default {};
}
