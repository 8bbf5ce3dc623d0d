// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Locale;
import java.util.Optional;

/**
 * Every setting of metrale-gpu, each declared once: its key, the {@link GpuBuilder} method that
 * sets it (if any), its system property, its environment variable, its default and its grammar.
 * {@link GpuBuilder}, {@link metrale.gpu.spi.DriverConfig} (the backends' options) and the CUDA
 * binding read their settings through this table, so every setting resolves the same way and
 * parses with the same grammar; {@code docs/options.md} is checked against it by a test.
 *
 * <p><b>Resolution.</b> A value given in code (a builder call or
 * {@code GpuBuilder.backendOption}) wins over the system property, the property over the
 * environment variable; a blank value counts as unset. {@link metrale.telemetry.Telemetry} reads
 * none of them: {@code new Telemetry()} starts with everything off, and the runtime switches on
 * what its resolved {@link GpuOptions} say.
 */
public enum Setting {

    /** Which backend {@code open()} uses. */
    BACKEND("backend", "backend(String)", "metrale.backend", "METRALE_BACKEND", null, Grammar.NAME,
            "CUDA if a driver loads, else `sim`",
            "Which backend `open()` uses: `cuda` or `sim`. A name no backend has is an `IllegalArgumentException` listing the backends there are."),
    /** Red-zone pad after each buffer. */
    REDZONE("redzone", "redZoneBytes(long)", "metrale.redzone", "METRALE_REDZONE", "0", Grammar.WHOLE_NUMBER,
            "`0` (off)",
            "The pad in bytes after each `alloc`/`allocManaged` buffer, filled with a pattern and checked by `scanRedzones()`."),
    /** First creation index that gets a red zone. */
    REDZONE_MIN_IDX("redzone.minIdx", "redZoneMinIndex(long)", "metrale.redzone.minIdx", "METRALE_REDZONE_MIN_IDX", "0",
            Grammar.WHOLE_NUMBER, "`0`",
            "Only allocations with a creation index at or above this get a red zone: red-zone only what comes after warm-up."),
    /** Freed device memory held back from reuse. */
    QUARANTINE("quarantine", "quarantineBytes(long)", "metrale.quarantine", "METRALE_QUARANTINE", null, Grammar.WHOLE_NUMBER,
            "`67108864` (64 MiB) on the simulator; on CUDA 64 MiB when red zones are on, else `0` (off); the test kit sets 64 MiB",
            "The most bytes of freed device memory (red-zone pads included) held back from reuse, oldest given back "
            + "first, by `free` and both pools (`caching`, `cuda`): a copy, memset or checked launch argument into "
            + "held memory is `INVALID_VALUE` naming where it was allocated and freed. Costs up to this much device "
            + "memory (plus one buffer over it) that nothing can use; an out-of-memory gives it back and retries once."),
    /** Synchronize after every launch. */
    DEBUG_SYNC("debugSync", "debugSync(boolean)", "metrale.debugSync", "METRALE_DEBUG_SYNC", "false", Grammar.BOOLEAN,
            "`false`",
            "Synchronize the stream after every launch, so an asynchronous fault names the kernel that caused it."),
    /** Device-to-host copy site trace. */
    D2H_TRACE("d2h.trace", "d2hTrace(boolean)", "metrale.d2h.trace", "METRALE_D2H_TRACE", "false", Grammar.BOOLEAN,
            "`false`",
            "Count device-to-host copies by call site (`telemetry().counters().d2hSiteReport(n)`); one stack walk per copy."),
    /** Per-kernel timing spans. */
    TIMING("timing", "timing(boolean)", "metrale.timing", "METRALE_TIMING", "false", Grammar.BOOLEAN,
            "`false`",
            "Time each launch per kernel (`telemetry().timing().report()`)."),
    /** How much of the creation sites of allocations and resources is recorded: {@link LeakDetection}. */
    LEAK_DETECTION("leakDetection", "leakDetection(LeakDetection)", "metrale.leakDetection", "METRALE_LEAK_DETECTION",
            "sampled", Grammar.CHOICE, "`all` on the simulator, `sampled` on CUDA; the test kit sets `all`",
            "Netty's leak-detection levels for the creation sites (`File.java:line`, a stack walk bounded in depth) "
            + "of device allocations and of resources: `off` (no walk; every site is `?`), `sampled` (one in "
            + "`leakDetection.sample`, drawn at random, walks its stack; the others are named `(unsampled: ...)`, and "
            + "every leak report says how many went unsampled) or `all` (every one walks). At most one walk per "
            + "alloc+free pair: a free walks for its own line only with red zones or a quarantine on (or the "
            + "simulator's pool race checks), and only when its allocation's site was walked. Replaces `allocSites` "
            + "and `allocSites.sample`, which are still read in this release (a conflict with them is an "
            + "`IllegalArgumentException` naming both)."),
    /** One allocation site walked in N at {@code leakDetection=sampled}. */
    LEAK_DETECTION_SAMPLE("leakDetection.sample", "leakDetectionSample(int)", "metrale.leakDetection.sample",
            "METRALE_LEAK_DETECTION_SAMPLE", Integer.toString(LeakDetection.DEFAULT_SAMPLE), Grammar.WHOLE_NUMBER,
            "`128` (Netty's sampling interval)",
            "With `leakDetection=sampled`, one allocation or resource in this many walks its stack, on average; at "
            + "least 1. A walk costs 1.5 to 3.5 µs, so 1 in 128 costs under 30 ns per allocation."),
    /**
     * Allocation call sites on or off.
     *
     * @deprecated replaced by {@link #LEAK_DETECTION}: {@code true} is {@code all} ({@code sampled}
     *             with {@code allocSites.sample} above 1), {@code false} is {@code off}; still read in
     *             this release
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    ALLOC_SITES("allocSites", "allocSites(boolean)", "metrale.allocSites", "METRALE_ALLOC_SITES", null, Grammar.BOOLEAN,
            "none: deprecated, read in this release only",
            "`true` is `all` (`sampled` with an `allocSites.sample` above 1), `false` is `off`.", LEAK_DETECTION),
    /**
     * One allocation site walked in N.
     *
     * @deprecated replaced by {@link #LEAK_DETECTION_SAMPLE}: a value above 1 is
     *             {@code leakDetection=sampled} at that rate, 1 is {@code all}; still read in this release
     */
    @Deprecated(forRemoval = true, since = "0.3.0")
    ALLOC_SITES_SAMPLE("allocSites.sample", "allocSiteSample(int)", "metrale.allocSites.sample", "METRALE_ALLOC_SITES_SAMPLE",
            null, Grammar.WHOLE_NUMBER, "none: deprecated, read in this release only",
            "A value above 1 is `leakDetection=sampled` at that rate; `1` is `all`.", LEAK_DETECTION_SAMPLE),
    /** What {@code alloc} allocates with. */
    ALLOCATOR("allocator", "allocator(String)", "metrale.allocator", "METRALE_ALLOCATOR", "caching", Grammar.CHOICE,
            "`caching`",
            "What `Gpu.alloc` uses: `caching` (the runtime's stream-ordered `MemoryPool`, on the default stream, as "
            + "PyTorch and CuPy pool by default; `Gpu.free` gives the block back in the default stream's order), "
            + "`driver` (a `cuMemAlloc` and `cuMemFree` per allocation) or `cuda` (the pool over CUDA's "
            + "`cuMemAllocAsync`). `Gpu.pool()` is `cuda` when this is, else the caching pool. On the simulator a "
            + "pool block keeps exact bounds: one byte past its requested size faults, as past a `cuMemAlloc`."),
    /** Pointer arguments of launches checked against live memory. */
    CHECK_POINTERS("checkPointers", "checkPointers(boolean)", "metrale.checkPointers", "METRALE_CHECK_POINTERS", "false",
            Grammar.BOOLEAN, "`false`",
            "Check every pointer argument of each launch against live memory (ledger allocations, arena chunks, mapped "
            + "page-locked memory) before the driver sees it; one outside is `INVALID_VALUE` naming the argument index. "
            + "Null passes. One lookup per pointer argument."),
    /** Simulated device memory. */
    SIM_CAPACITY("sim.capacity", "backendOption(\"sim.capacity\", ...)", "metrale.sim.capacity", "METRALE_SIM_CAPACITY",
            "4294967296", Grammar.WHOLE_NUMBER, "`4294967296` (4 GiB)",
            "Simulator: device memory in bytes. Allocations beyond it fail with `OUT_OF_MEMORY`."),
    /** The simulator's schedule seed. */
    SIM_SEED("sim.seed", "backendOption(\"sim.seed\", ...)", "metrale.sim.seed", "METRALE_SIM_SEED", "0",
            Grammar.WHOLE_NUMBER, "`0`",
            "Simulator: the seed of the schedule that interleaves ready work of different streams."),
    /** The simulator's SM count. */
    SIM_SMS("sim.sms", "backendOption(\"sim.sms\", ...)", "metrale.sim.sms", "METRALE_SIM_SMS", "132",
            Grammar.WHOLE_NUMBER, "`132`",
            "Simulator: the SM count the device reports, 1 to 100000."),
    /** The simulator's fill byte. */
    SIM_FILL("sim.fill", "backendOption(\"sim.fill\", ...)", "metrale.sim.fill", "METRALE_SIM_FILL", "171",
            Grammar.WHOLE_NUMBER, "`171` (`0xAB`)",
            "Simulator: the byte new device memory is filled with, 0 to 255 (CUDA does not zero new memory, nor does the simulator)."),
    /** The order a simulated grid's blocks run in. */
    SIM_BLOCKS("sim.blocks", "backendOption(\"sim.blocks\", ...)", "metrale.sim.blocks", "METRALE_SIM_BLOCKS", "ordered",
            Grammar.CHOICE, "`ordered`",
            "Simulator: how a grid's blocks run: `ordered` (index order, deterministic), `shuffled` (one thread, an order "
            + "drawn from `sim.seed`) or `parallel` (several threads), so a twin that races across blocks shows it. "
            + "Also `SimControls.setBlockOrder`."),
    /** The simulated process a runtime opens in. */
    SIM_PROCESS("sim.process", "backendOption(\"sim.process\", ...)", "metrale.sim.process", "METRALE_SIM_PROCESS", "shared",
            Grammar.CHOICE, "`shared`",
            "Simulator: `shared` (the JVM's one simulated process: a sticky fault poisons every simulator runtime in it, "
            + "and opening another fails, as on a GPU) or `fresh` (a process of the runtime's own, what tests use). "
            + "Kernel twins of one runtime go in `backendOption(\"sim.twins\", SimTwins)`, an object option with no "
            + "property or variable."),
    /** What runs a simulated kernel: its Java twin, its PTX, or both compared. */
    SIM_TWINS("sim.twins", "backendOption(\"sim.twins\", ...)", "metrale.sim.twins", "METRALE_SIM_TWINS", "prefer",
            Grammar.CHOICE, "`prefer`",
            "Simulator: `prefer` (a kernel's registered Java twin runs; with none, the kernel's own PTX runs on the "
            + "simulator's PTX engine), `verify` (a kernel with both runs both on the same memory and a launch whose "
            + "results differ fails naming the first differing byte) or `off` (twins are ignored: every kernel runs its "
            + "PTX). Given a `SimTwins` object instead, the same key is the runtime's own twin table."),
    /** How the simulator runs a kernel's PTX: compiled to JVM bytecode, or interpreted. */
    SIM_PTX("sim.ptx", "backendOption(\"sim.ptx\", ...)", "metrale.sim.ptx", "METRALE_SIM_PTX", "compiled",
            Grammar.CHOICE, "`compiled`",
            "Simulator: how the PTX engine runs a kernel's own PTX: `compiled` (each kernel compiled once to JVM "
            + "bytecode, which the JIT runs; a kernel the compiler cannot take runs interpreted) or `interpreted` (the "
            + "engine's interpreter). Both give the same results, faults and timings; only the speed differs."),
    /** The simulator's uninitialised-read detector. */
    SIM_INITCHECK("sim.initcheck", "backendOption(\"sim.initcheck\", ...)", "metrale.sim.initcheck", "METRALE_SIM_INITCHECK",
            "false", Grammar.BOOLEAN, "`false`",
            "Simulator: keep a shadow map of the bytes written in each device allocation and record each kernel view "
            + "read, D2H copy or D2D copy of bytes never written, with the allocation's site and the offset (as "
            + "compute-sanitizer's `initcheck`); read them with `gpu.unwrap(SimInitCheck.class).uninitializedReads()`."),
    /** How long a rank of a communicator waits for the others. */
    NCCL_TIMEOUT_MILLIS("nccl.timeoutMillis", null, "metrale.nccl.timeoutMillis", "METRALE_NCCL_TIMEOUT_MILLIS", "300000",
            Grammar.WHOLE_NUMBER, "`300000` (5 minutes)",
            "Collectives: how long a rank waits, in milliseconds, for the others to join (`initRank`) and, on the "
            + "simulated communicator, to call each collective; then it fails with `IN_PROGRESS` naming the missing "
            + "ranks. At least 1; `Collectives.initRank`/`initAll` also take a timeout of their own."),
    /** The CUDA device ordinal. */
    CUDA_DEVICE("cuda.device", "backendOption(\"cuda.device\", ...)", "metrale.cuda.device", "METRALE_CUDA_DEVICE", "0",
            Grammar.WHOLE_NUMBER, "`0`",
            "CUDA: the device ordinal."),
    /** The CUDA driver library. */
    CUDA_LIBRARY("cuda.library", null, "metrale.cuda.library", "METRALE_CUDA_LIBRARY", "libcuda.so.1", Grammar.PATH,
            "`libcuda.so.1`",
            "CUDA: the driver library to load (read once, when the binding loads)."),
    /** The NVRTC library. */
    NVRTC_LIBRARY("nvrtc.library", null, "metrale.nvrtc.library", "METRALE_NVRTC_LIBRARY", null, Grammar.PATH,
            "the first of `libnvrtc.so`, `libnvrtc.so.13`, `libnvrtc.so.12` that loads",
            "CUDA: NVRTC, for `Gpu.compileCuda`. Without it only run-time compilation is unavailable."),
    /** The number of simulated devices. */
    SIM_DEVICES("sim.devices", "backendOption(\"sim.devices\", ...)", "metrale.sim.devices", "METRALE_SIM_DEVICES", "1",
            Grammar.WHOLE_NUMBER, "`1`",
            "Simulator: how many devices the simulated process has, 1 to 64; a runtime opens one of them with "
            + "`device(int)`. Each is a context with memory of its own; peer copies work between any two."),
    /** The device ordinal a runtime opens, on any backend. */
    DEVICE("device", "device(int)", "metrale.device", "METRALE_DEVICE", null, Grammar.WHOLE_NUMBER,
            "`0`, or CUDA's `cuda.device`",
            "Which device a runtime opens, by ordinal (`Gpu.devices()` lists them), on the simulator or CUDA. "
            + "Also `backendOption(\"device\", ...)`."),
    /** The NCCL library. */
    NCCL_LIBRARY("nccl.library", null, "metrale.nccl.library", "METRALE_NCCL_LIBRARY", null, Grammar.PATH,
            "the first of `libnccl.so.2`, `libnccl.so` that loads",
            "NCCL (`metrale.gpu.nccl`): the library its communicators use on CUDA (read once, when it loads). The "
            + "simulator's communicator needs none."),
    /** Whether the test kit fails a run whose backend is unavailable. */
    GPU_REQUIRED("gpu.required", null, "metrale.gpu.required", "METRALE_GPU_REQUIRED", "false", Grammar.BOOLEAN,
            "`false`",
            "Test kit (`metrale.gpu.testing`): a `@GpuTest` run on a backend that is unavailable here (CUDA "
            + "without a driver) fails with the reason instead of being skipped. Use it on GPU hosts."),
    /** Where the tests' logger finder writes the log records. */
    TEST_LOG_DIR("test.log.dir", null, "metrale.test.log.dir", "METRALE_TEST_LOG_DIR", null, Grammar.PATH,
            "none (standard error); the build sets `target/metrale-test-log`",
            "Tests (`metrale.gpu.contract`'s `TestLog`, the tests' logger finder): the folder whose file, one a test "
            + "JVM, receives the `metrale.*` log records instead of standard error.");

    /** How a setting's text is read. */
    public enum Grammar {
        /** {@code true}/{@code false}, {@code 1}/{@code 0}, {@code yes}/{@code no}, {@code on}/{@code off}, any case. */
        BOOLEAN("`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off` (any case)"),
        /** A decimal whole number. */
        WHOLE_NUMBER("a decimal whole number"),
        /** A backend name. */
        NAME("a backend name (`cuda`, `sim`), any case"),
        /** A library name or file path. */
        PATH("a library name or file path"),
        /** One of the words the description lists. */
        CHOICE("one of the words listed, any case");

        private final String text;

        Grammar(String text) {
            this.text = text;
        }

        /** {@return the grammar in words, as {@code docs/options.md} shows it} */
        public String text() {
            return text;
        }
    }

    private final String key;
    private final String builder;
    private final String property;
    private final String environment;
    private final String defaultValue;
    private final Grammar grammar;
    private final String defaultText;
    private final String description;
    private final Setting replacedBy;

    Setting(String key, String builder, String property, String environment, String defaultValue, Grammar grammar,
            String defaultText, String description) {
        this(key, builder, property, environment, defaultValue, grammar, defaultText, description, null);
    }

    /** A deprecated setting, still read in this release, that {@code replacedBy} replaces. */
    Setting(String key, String builder, String property, String environment, String defaultValue, Grammar grammar,
            String defaultText, String description, Setting replacedBy) {
        this.key = key;
        this.builder = builder;
        this.property = property;
        this.environment = environment;
        this.defaultValue = defaultValue;
        this.grammar = grammar;
        this.defaultText = defaultText;
        this.description = description;
        this.replacedBy = replacedBy;
    }

    /** {@return the key a backend option is given under, e.g. {@code sim.capacity}} */
    public String key() {
        return key;
    }

    /** {@return the {@link GpuBuilder} call that sets it, if any} */
    public Optional<String> builderMethod() {
        return Optional.ofNullable(builder);
    }

    /** {@return the system property, e.g. {@code metrale.redzone}} */
    public String property() {
        return property;
    }

    /** {@return the environment variable, e.g. {@code METRALE_REDZONE}} */
    public String environment() {
        return environment;
    }

    /** {@return the default as text in the setting's grammar, if it has one} */
    public Optional<String> defaultValue() {
        return Optional.ofNullable(defaultValue);
    }

    /** {@return how the value is read} */
    public Grammar grammar() {
        return grammar;
    }

    /** {@return the default in words, as {@code docs/options.md} shows it} */
    public String defaultText() {
        return defaultText;
    }

    /** {@return what the setting does, as {@code docs/options.md} shows it} */
    public String description() {
        return description;
    }

    /**
     * {@return the setting that replaces this deprecated one, if it is deprecated} A deprecated
     * setting is still read for one release; {@code docs/options.md} lists it apart.
     */
    public Optional<Setting> replacedBy() {
        return Optional.ofNullable(replacedBy);
    }

    /**
     * {@return the setting's text: the value given in code, else the system property, else the
     * environment variable, else the default; blank counts as unset; empty if none is set and there is no default}
     *
     * @param given the value given in code, or {@code null}
     */
    public Optional<String> text(String given) {
        String v = resolve(given, property, environment);
        return Optional.ofNullable(v != null ? v : defaultValue);
    }

    /**
     * {@return the setting as a boolean}
     *
     * @param given the value given in code, or {@code null}
     * @throws IllegalArgumentException if the text is not a boolean in the {@link Grammar#BOOLEAN} grammar
     */
    public boolean bool(String given) {
        return parseBoolean(what(), text(given).orElse("false"));
    }

    /** {@return the setting as error messages name it: key, system property and environment variable} */
    public String what() {
        return key + " (" + property + " / " + environment + ")";
    }

    /**
     * {@return the setting as one of {@code words}, in the {@link Grammar#CHOICE} grammar: the word as listed}
     *
     * @param given the value given in code, or {@code null}
     * @param words the words the setting takes, in lower case; the first is taken when nothing is set and
     *              there is no default
     * @throws IllegalArgumentException naming the setting, its property, its variable and the value if it
     *                                  is none of the words
     */
    public String choice(String given, java.util.List<String> words) {
        return parseChoice(what(), text(given).orElse(words.getFirst()), words);
    }

    /**
     * {@return the setting as a whole number}
     *
     * @param given the value given in code, or {@code null}
     * @throws IllegalArgumentException if the text is not a decimal whole number
     */
    public long whole(String given) {
        return parseWhole(what(), text(given).orElse("0"));
    }

    /**
     * {@return the setting with this key}
     *
     * @param key a key, e.g. {@code sim.capacity}
     */
    public static Optional<Setting> forKey(String key) {
        for (Setting s : values()) {
            if (s.key.equals(key)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    /**
     * The one resolution rule: the given value, else the system property, else the environment
     * variable; a blank value counts as unset.
     *
     * @param given       the value given in code, or {@code null}
     * @param property    the system property
     * @param environment the environment variable
     * @return the trimmed value, or {@code null} if none is set
     */
    public static String resolve(String given, String property, String environment) {
        String v = given;
        if (v == null || v.isBlank()) {
            v = System.getProperty(property);
        }
        if (v == null || v.isBlank()) {
            v = System.getenv(environment);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    /**
     * The one boolean grammar ({@link Grammar#BOOLEAN}).
     *
     * @param what  what is being read, for the message
     * @param value the text
     * @return the boolean
     * @throws IllegalArgumentException naming {@code what} and the value if it is not a boolean
     */
    public static boolean parseBoolean(String what, String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> throw new IllegalArgumentException(what + " = '" + value + "' is not a boolean (true/false, 1/0, yes/no, on/off)");
        };
    }

    /**
     * The one choice grammar ({@link Grammar#CHOICE}): one of the words, in any case.
     *
     * @param what  what is being read, for the message
     * @param value the text
     * @param words the words, in lower case
     * @return the word as {@code words} spells it
     * @throws IllegalArgumentException naming {@code what}, the value and the words if it is none of them
     */
    public static String parseChoice(String what, String value, java.util.List<String> words) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        for (String w : words) {
            if (w.equals(v)) {
                return w;
            }
        }
        throw new IllegalArgumentException(what + " = '" + value + "' is not one of " + String.join(", ", words)
                + " (any case)");
    }

    /**
     * The one number grammar ({@link Grammar#WHOLE_NUMBER}).
     *
     * @param what  what is being read, for the message
     * @param value the text
     * @return the number
     * @throws IllegalArgumentException naming {@code what} and the value if it is not a whole number
     */
    public static long parseWhole(String what, String value) {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " = '" + value + "' is not a whole number", e);
        }
    }

    /**
     * {@return the markdown table of every setting, as {@code docs/options.md} holds it}: the
     * settings in use, then the deprecated ones with what replaces each
     */
    public static String markdownTable() {
        StringBuilder sb = new StringBuilder();
        sb.append("| key | builder method | system property | environment variable | default | grammar | what it does |\n");
        sb.append("|---|---|---|---|---|---|---|\n");
        StringBuilder old = new StringBuilder();
        for (Setting s : values()) {
            if (s.replacedBy != null) {
                old.append("| `").append(s.key).append("` | ")
                        .append(s.builder == null ? "" : "`" + s.builder + "`").append(" | `")
                        .append(s.property).append("` | `")
                        .append(s.environment).append("` | `")
                        .append(s.replacedBy.key).append("` | ")
                        .append(s.description).append(" |\n");
                continue;
            }
            sb.append("| `").append(s.key).append("` | ")
                    .append(s.builder == null ? "" : "`" + s.builder + "`").append(" | `")
                    .append(s.property).append("` | `")
                    .append(s.environment).append("` | ")
                    .append(s.defaultText).append(" | ")
                    .append(s.grammar.text).append(" | ")
                    .append(s.description).append(" |\n");
        }
        if (!old.isEmpty()) {
            sb.append("\nDeprecated names, still read in this release and removed in the next. Between a deprecated "
                    + "name and the setting that replaces it the usual order decides (code, then property, then "
                    + "variable); two given in the same place that disagree are an `IllegalArgumentException` "
                    + "naming both:\n\n");
            sb.append("| key | builder method | system property | environment variable | replaced by | what it maps to |\n");
            sb.append("|---|---|---|---|---|---|\n");
            sb.append(old);
        }
        return sb.toString();
    }
}
