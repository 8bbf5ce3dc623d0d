// SPDX-License-Identifier: Apache-2.0
package metrale.bench.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.LeakDetection;
import metrale.gpu.contract.GpuContract;
import metrale.gpu.contract.PoolSoak;

/**
 * The allocation path soaked from the command line ({@link PoolSoak}): N platform or virtual
 * threads through alloc, copy, launch ({@code add_i32} of the contract kernels, from its PTX),
 * copy back and free, with random sizes, on either backend and any allocator, bounded in cycles
 * and in time. Prints the counts, the failures by kind, the wrong results and the live
 * allocations and bytes at the end; exits 0 when the run was clean, 1 when not, 2 for bad options.
 *
 * <pre>
 * java -cp benchmarks.jar metrale.bench.soak.Soak [--backend sim|cuda] [--allocator caching|driver|cuda]
 *     [--threads 16] [--virtual] [--cycles 30000] [--max-bytes 8192] [--seconds 600]
 *     [--stream-ordered] [--everything] [--quarantine BYTES] [--seed 38]
 * </pre>
 *
 * {@code --everything} turns on red zones (256 B), the quarantine (64 MiB), every call site and,
 * on the simulator, parallel blocks. Without it the runtime opens with the backend's defaults.
 * {@code --quarantine} sets the quarantine's size over either (0: off, as on CUDA by default).
 * {@code --stream-ordered} allocates with {@code gpu.alloc(n, stream)} and frees with
 * {@code gpu.free(p, stream)} on each thread's stream, instead of {@code gpu.alloc(n)} and
 * {@code gpu.free(p)}. The CUDA backend needs {@code --enable-native-access=ALL-UNNAMED}.
 */
public final class Soak {

    private Soak() {
    }

    /**
     * Runs one soak.
     *
     * @param argv the options above
     * @throws InterruptedException if interrupted while the threads run
     */
    public static void main(String[] argv) throws InterruptedException {
        String backend = "sim";
        String allocator = null;
        int threads = 16;
        boolean virtual = false;
        int cycles = 30_000;
        int maxBytes = 8192;
        double seconds = 600;
        boolean streamOrdered = false;
        boolean everything = false;
        long seed = 38;
        Long quarantine = null;
        List<String> args = new ArrayList<>(List.of(argv));
        try {
            for (int i = 0; i < args.size(); i++) {
                String a = args.get(i);
                switch (a) {
                    case "--backend" -> backend = args.get(++i);
                    case "--allocator" -> allocator = args.get(++i);
                    case "--threads" -> threads = Integer.parseInt(args.get(++i));
                    case "--virtual" -> virtual = true;
                    case "--cycles" -> cycles = Integer.parseInt(args.get(++i));
                    case "--max-bytes" -> maxBytes = Integer.parseInt(args.get(++i));
                    case "--seconds" -> seconds = Double.parseDouble(args.get(++i));
                    case "--stream-ordered" -> streamOrdered = true;
                    case "--everything" -> everything = true;
                    case "--seed" -> seed = Long.parseLong(args.get(++i));
                    case "--quarantine" -> quarantine = Long.parseLong(args.get(++i));
                    case "--help", "-h" -> {
                        System.out.println(usage());
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
        } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
            System.err.println("soak: " + (e instanceof IndexOutOfBoundsException ? "an option lacks its value" : e.getMessage()));
            System.err.println(usage());
            System.exit(2);
            return;
        }
        GpuBuilder b = Gpu.builder().backend(backend);
        if (allocator != null) {
            b.allocator(allocator);
        }
        if (everything) {
            b.redZoneBytes(256).quarantineBytes(64L << 20).leakDetection(LeakDetection.ALL);
            if ("sim".equalsIgnoreCase(backend)) {
                b.backendOption("sim.blocks", "parallel");
            }
        }
        if (quarantine != null) {
            b.quarantineBytes(quarantine);
        }
        PoolSoak.Config config = new PoolSoak.Config(threads, virtual, cycles, maxBytes, seconds, streamOrdered, seed);
        PoolSoak.Result r;
        try (Gpu gpu = b.open()) {
            GpuContract.loadContractModule(gpu);
            var o = gpu.options();
            System.out.printf(Locale.ROOT, "soak: %s, allocator %s, %d %s thread(s) x %d cycles, 1..%d B, %s, "
                            + "red zone %d B, quarantine %d B, leakDetection %s%s%n", gpu.backendName(), o.allocator(),
                    threads, virtual ? "virtual" : "platform", cycles, maxBytes,
                    streamOrdered ? "alloc(n, stream)/free(p, stream)" : "alloc(n)/free(p)", o.redZoneBytes(),
                    o.quarantineBytes(), o.leakDetection().option(),
                    o.backendOptions().containsKey("sim.blocks") ? ", sim.blocks=" + o.backendOptions().get("sim.blocks") : "");
            r = PoolSoak.run(gpu, gpu.kernel(GpuContract.MODULE, "add_i32"), config);
        }
        System.out.print("soak: " + r.report());
        System.exit(r.clean() ? 0 : 1);
    }

    private static String usage() {
        return "usage: Soak [--backend sim|cuda] [--allocator caching|driver|cuda] [--threads N] [--virtual] "
                + "[--cycles N] [--max-bytes N] [--seconds S] [--stream-ordered] [--everything] [--quarantine BYTES] [--seed N]";
    }
}
