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
     * An object option: a {@link SimTwins} table the runtime looks twins up in first, before the
     * process-wide {@link SimKernels}. Given only through {@code GpuBuilder.backendOption(String, Object)}.
     */
    public static final String TWINS = "sim.twins";

    /**
     * How the blocks of a grid run: {@code ordered} (default), {@code shuffled} or {@code parallel}
     * (see {@link SimBlockOrder}).
     */
    public static final String BLOCKS = "sim.blocks";

    /** Default device memory: 4 GiB. */
    public static final long DEFAULT_CAPACITY = 4L << 30;
    /** Default SM count, an H100/H200's. */
    public static final int DEFAULT_SMS = 132;
    /** Default garbage byte, {@code 0xAB}. */
    public static final int DEFAULT_FILL = 0xAB;

    private SimOptions() {
    }
}
