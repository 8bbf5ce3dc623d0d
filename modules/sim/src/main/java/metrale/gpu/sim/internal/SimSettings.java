// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.Setting;
import metrale.gpu.sim.SimBlockOrder;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwins;
import metrale.gpu.spi.DriverConfig;

/**
 * A simulated device's options, read once from a {@link DriverConfig}: each key of the settings
 * table ({@link Setting}'s {@code SIM_*}) read here and nowhere else, in its table grammar (whole
 * number, boolean, choice), and range-checked with a message that names the option, its system
 * property and its environment variable.
 *
 * <ul>
 * <li>{@code sim.capacity}: device memory in bytes; default 4 GiB ({@value SimOptions#DEFAULT_CAPACITY}).</li>
 * <li>{@code sim.seed}: the schedule's seed; default 0.</li>
 * <li>{@code sim.sms}: the SM count the device reports; default {@value SimOptions#DEFAULT_SMS}.</li>
 * <li>{@code sim.fill}: the byte new device, managed and page-locked memory is filled with, 0 to 255;
 *     default {@value SimOptions#DEFAULT_FILL} ({@code 0xAB}).</li>
 * <li>{@code sim.initcheck}: {@code true} records reads of device memory never written
 *     ({@link metrale.gpu.sim.SimInitCheck}); default {@code false}.</li>
 * <li>{@code sim.blocks}: {@code ordered} (default), {@code shuffled} or {@code parallel}, how a
 *     grid's blocks run ({@link SimBlockOrder}).</li>
 * <li>{@code sim.process}: {@code shared} (default), {@code fresh} or {@code named:NAME}, the
 *     simulated process; a process a sticky fault poisoned cannot open another device.</li>
 * <li>{@code sim.devices}: how many devices the simulated process has, 1 to
 *     {@value SimOptions#MAX_DEVICES}, default 1; {@code device} (what {@code Gpu.builder().device(i)}
 *     sets) picks the one the driver opens, default 0.</li>
 * <li>{@code sim.twins} (an object): a {@link SimTwins} table looked in before
 *     {@link metrale.gpu.sim.SimKernels}.</li>
 * <li>{@code sim.twins} (a string): {@code prefer} (default: a registered twin, else the kernel's
 *     PTX), {@code verify} (both, compared) or {@code off} (the PTX only).</li>
 * <li>{@code sim.ptx}: {@code compiled} (default: each kernel's PTX compiled once to JVM bytecode)
 *     or {@code interpreted}, how the PTX engine runs a kernel.</li>
 * </ul>
 *
 * @param capacity   device memory in bytes, positive
 * @param sms        the SM count the device reports, 1 to 100000
 * @param fill       the byte new memory is filled with
 * @param process    the simulated process the device opens in, not poisoned by a sticky fault
 * @param twins      this runtime's twin table, or {@code null}
 * @param devices    how many devices the simulated process has
 * @param ordinal    which of them the device is
 * @param initCheck  whether the initcheck records reads of unwritten memory
 * @param seed       the schedule's seed
 * @param blockOrder how a grid's blocks run
 * @param twinMode   what runs a kernel: its twin, its PTX, or both compared
 * @param ptxCompiled whether the PTX engine runs kernels compiled to JVM bytecode, not interpreted
 */
record SimSettings(long capacity, int sms, byte fill, SimProcess process, SimTwins twins, int devices, int ordinal,
                   boolean initCheck, long seed, SimBlockOrder blockOrder, metrale.gpu.sim.SimTwinMode twinMode,
                   boolean ptxCompiled) {

    private static final List<String> BLOCK_WORDS = List.of("ordered", "shuffled", "parallel");
    private static final List<String> TWIN_WORDS = List.of(SimOptions.TWINS_PREFER, SimOptions.TWINS_VERIFY,
            SimOptions.TWINS_OFF);
    private static final List<String> PTX_WORDS = List.of(SimOptions.PTX_COMPILED, SimOptions.PTX_INTERPRETED);


    /**
     * {@return the options of {@code config}, checked in the order a device opens}
     *
     * @param config the options
     * @param in     the simulated process to open in, or {@code null} for the one {@code sim.process} names
     * @throws IllegalArgumentException if an option is not in its grammar, out of range, or of the wrong type
     * @throws GpuException the process's sticky error if a fault has poisoned it; {@code INVALID_DEVICE}
     *                      for an ordinal the process does not have
     */
    static SimSettings parse(DriverConfig config, SimProcess in) {
        String key = Setting.SIM_CAPACITY.key();
        long capacity = config.getLong(key, SimOptions.DEFAULT_CAPACITY);
        if (capacity <= 0) {
            throw new IllegalArgumentException(DriverConfig.describe(key) + " = " + capacity + " must be positive");
        }
        key = Setting.SIM_SMS.key();
        long sms = config.getLong(key, SimOptions.DEFAULT_SMS);
        if (sms < 1 || sms > 100_000) {
            throw new IllegalArgumentException(DriverConfig.describe(key) + " = " + sms + " must be in [1, 100000]");
        }
        key = Setting.SIM_FILL.key();
        long fill = config.getLong(key, SimOptions.DEFAULT_FILL);
        if (fill < 0 || fill > 255) {
            throw new IllegalArgumentException(DriverConfig.describe(key) + " = " + fill
                    + " must be a byte value in [0, 255]");
        }
        SimProcess process = in != null ? in : process(config.get(Setting.SIM_PROCESS.key(), SimOptions.PROCESS_SHARED));
        SimTwins twins = config.object(SimOptions.TWINS, SimTwins.class).orElse(null);
        SimProcess.Fault f = process.fault();
        if (f != null) {
            // CUDA: after a sticky fault a new context fails too; the process must be restarted.
            throw new GpuException(f.error(), "cuDevicePrimaryCtxRetain", process + " is unusable after a sticky fault "
                    + "(no in-process recovery, as on CUDA; open with " + SimOptions.PROCESS + "="
                    + SimOptions.PROCESS_FRESH + " for a process of its own): " + f.detail());
        }
        int devices = deviceCount(config);
        long ordinal = config.getLong(Setting.DEVICE.key(), 0);
        if (ordinal < 0 || ordinal >= devices) {
            throw new GpuException(CudaError.INVALID_DEVICE, "cuDeviceGet", "ordinal=" + ordinal
                    + ": the simulated process has " + devices + " device(s) (option " + SimOptions.DEVICES + ")");
        }
        boolean initCheck = config.getBoolean(Setting.SIM_INITCHECK.key(), false);
        long seed = config.getLong(Setting.SIM_SEED.key(), 0);
        SimBlockOrder blocks = switch (config.getChoice(Setting.SIM_BLOCKS.key(), "ordered", BLOCK_WORDS)) {
            case "shuffled" -> SimBlockOrder.SHUFFLED;
            case "parallel" -> SimBlockOrder.PARALLEL;
            default -> SimBlockOrder.ORDERED;
        };
        metrale.gpu.sim.SimTwinMode twinMode = switch (config.getChoice(Setting.SIM_TWINS.key(), SimOptions.TWINS_PREFER, TWIN_WORDS)) {
            case SimOptions.TWINS_VERIFY -> metrale.gpu.sim.SimTwinMode.VERIFY;
            case SimOptions.TWINS_OFF -> metrale.gpu.sim.SimTwinMode.OFF;
            default -> metrale.gpu.sim.SimTwinMode.PREFER;
        };
        boolean ptxCompiled = config.getChoice(Setting.SIM_PTX.key(), SimOptions.PTX_COMPILED, PTX_WORDS)
                .equals(SimOptions.PTX_COMPILED);
        return new SimSettings(capacity, (int) sms, (byte) fill, process, twins, devices, (int) ordinal, initCheck, seed,
                blocks, twinMode, ptxCompiled);
    }

    /**
     * {@return option {@code sim.devices}, checked}
     *
     * @throws IllegalArgumentException if it is not in [1, {@value SimOptions#MAX_DEVICES}]
     */
    static int deviceCount(DriverConfig config) {
        String key = Setting.SIM_DEVICES.key();
        long n = config.getLong(key, SimOptions.DEFAULT_DEVICES);
        if (n < 1 || n > SimOptions.MAX_DEVICES) {
            throw new IllegalArgumentException(DriverConfig.describe(key) + " = " + n + " must be in [1, "
                    + SimOptions.MAX_DEVICES + "]");
        }
        return (int) n;
    }

    /** {@return option {@code sim.capacity} as given, unchecked: what a device listing reports} */
    static long listedCapacity(DriverConfig config) {
        return config.getLong(Setting.SIM_CAPACITY.key(), SimOptions.DEFAULT_CAPACITY);
    }

    /** {@return the simulated process option {@code sim.process} names: any case, but a {@code named:} NAME as given} */
    private static SimProcess process(String proc) {
        if (proc.regionMatches(true, 0, SimOptions.PROCESS_NAMED, 0, SimOptions.PROCESS_NAMED.length())) {
            return SimProcess.named(proc.substring(SimOptions.PROCESS_NAMED.length()));
        }
        String w;
        try {
            w = Setting.parseChoice(DriverConfig.describe(SimOptions.PROCESS), proc,
                    List.of(SimOptions.PROCESS_SHARED, SimOptions.PROCESS_FRESH));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + ", nor " + SimOptions.PROCESS_NAMED + "NAME");
        }
        return w.equals(SimOptions.PROCESS_FRESH) ? SimProcess.fresh() : SimProcess.shared();
    }
}
