// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * The simulator's option keys, for {@code GpuBuilder.backendOption(key, value)}. A string option
 * may also come from the system property {@code metrale.KEY} or the environment variable
 * {@code METRALE_KEY} (upper case, dots as underscores); an object option only from the builder.
 */
public final class SimOptions {

    /** Device memory in bytes; default 4 GiB ({@value #DEFAULT_CAPACITY}). */
    public static final String CAPACITY = "sim.capacity";
    /** The seed of the schedule that interleaves ready streams, graph nodes and shuffled blocks; default 0. */
    public static final String SEED = "sim.seed";
    /** The SM count the device reports; default {@value #DEFAULT_SMS}. */
    public static final String SMS = "sim.sms";
    /** The byte new memory is filled with, 0 to 255, as CUDA does not zero it; default {@value #DEFAULT_FILL}. */
    public static final String FILL = "sim.fill";
    /**
     * The simulated process the runtime lives in: {@value #PROCESS_SHARED} (the default: the one
     * simulated process of the JVM, where a sticky fault poisons every simulator runtime opened
     * afterwards, as on a GPU) or {@value #PROCESS_FRESH} (a simulated process of its own, which is
     * what tests use).
     */
    public static final String PROCESS = "sim.process";
    /** Value of {@link #PROCESS}: the JVM's one shared simulated process. */
    public static final String PROCESS_SHARED = "shared";
    /** Value of {@link #PROCESS}: a fresh simulated process for this runtime alone. */
    public static final String PROCESS_FRESH = "fresh";
    /**
     * Prefix of a {@link #PROCESS} value {@code named:NAME}: the simulated process called NAME, made
     * fresh by the first runtime that names it and shared by every later one, so the devices of
     * one multi-device test live in one process of their own.
     */
    public static final String PROCESS_NAMED = "named:";
    /**
     * An object option: a {@link SimTwins} table the runtime looks twins up in first, before the
     * process-wide {@link SimKernels}. Given only through {@code GpuBuilder.backendOption(String, Object)}.
     */
    public static final String TWINS = "sim.twins";
    /**
     * Value of {@link #TWINS} as a string option (also {@code metrale.sim.twins} /
     * {@code METRALE_SIM_TWINS}): a kernel runs its registered twin, and its own PTX through the
     * simulator's engine when it has none. The default.
     */
    public static final String TWINS_PREFER = "prefer";
    /**
     * Value of {@link #TWINS}: a kernel with both a twin and PTX runs both, each on the same memory,
     * and a launch whose results differ fails naming the first differing byte; a kernel with one of
     * the two runs that one.
     */
    public static final String TWINS_VERIFY = "verify";
    /** Value of {@link #TWINS}: twins are ignored and every kernel runs its PTX. */
    public static final String TWINS_OFF = "off";

    /**
     * How the simulator's PTX engine runs a kernel's own PTX: {@value #PTX_COMPILED} (the default)
     * or {@value #PTX_INTERPRETED}. Both give the same results, faults and timings.
     */
    public static final String PTX = "sim.ptx";
    /**
     * Value of {@link #PTX}: each kernel is compiled once to JVM bytecode, which the JIT runs; a
     * kernel the compiler cannot take runs interpreted. The default.
     */
    public static final String PTX_COMPILED = "compiled";
    /** Value of {@link #PTX}: every kernel runs on the engine's interpreter. */
    public static final String PTX_INTERPRETED = "interpreted";

    /**
     * How the blocks of a grid run: {@code ordered} (default), {@code shuffled} or {@code parallel}
     * (see {@link SimBlockOrder}).
     */
    public static final String BLOCKS = "sim.blocks";

    /**
     * The number of simulated devices in the simulated process, 1 to {@value #MAX_DEVICES}; a runtime
     * opens one of them with {@code Gpu.builder().device(i)}. Each runtime is a context of its own
     * with memory of its own; peer copies work between any two devices of one simulated process.
     */
    public static final String DEVICES = "sim.devices";

    /** How many devices the simulated process has when {@link #DEVICES} is not given. */
    public static final int DEFAULT_DEVICES = 1;

    /** The most devices {@link #DEVICES} may ask for. */
    public static final int MAX_DEVICES = 64;

    /** The option {@code GpuBuilder.device(int)} sets: which simulated device a runtime opens, default 0. */
    public static final String DEVICE = "device";

    /** Default of {@link #CAPACITY}: 4 GiB. */
    public static final long DEFAULT_CAPACITY = 4L << 30;
    /** Default SM count, an H100/H200's. */
    public static final int DEFAULT_SMS = 132;
    /** Default garbage byte, {@code 0xAB}. */
    public static final int DEFAULT_FILL = 0xAB;

    private SimOptions() {
    }
}
