// SPDX-License-Identifier: Apache-2.0
package metrale.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import metrale.bench.cuda.CudaFixture;

/**
 * The benchmarks jar's entry point: JMH's own {@code Main}, except that on a machine where the
 * CUDA backend cannot open, the CUDA benchmarks ({@code metrale.bench.cuda}) are excluded with a
 * one-line reason, so a plain run measures what the machine can run. A run that names a CUDA
 * benchmark explicitly (any argument containing {@code cuda}, {@code LaunchBench},
 * {@code GraphBench}, {@code AllocBench}, {@code CopyBench}, {@code PairedBench} or {@code PoolBench}) is left alone: there each CUDA
 * benchmark fails its setup with {@link metrale.bench.cuda.CudaUnavailableException}, whose message
 * is the reason.
 */
public final class Main {

    private static final List<String> CUDA_NAMES = List.of("cuda", "launchbench", "graphbench", "allocbench", "copybench", "pairedbench", "poolbench");

    private Main() {
    }

    /**
     * Runs JMH.
     *
     * @param args JMH's arguments
     * @throws Exception what JMH throws
     */
    public static void main(String[] args) throws Exception {
        boolean lists = Arrays.asList(args).contains("-l") || Arrays.asList(args).contains("-h");
        boolean explicit = Arrays.stream(args)
                .map(a -> a.toLowerCase(Locale.ROOT))
                .anyMatch(a -> !a.startsWith("-") && CUDA_NAMES.stream().anyMatch(a::contains));
        if (!lists && !explicit) {
            String why = CudaFixture.unavailableReason();
            if (why != null) {
                System.out.println("metrale-bench: CUDA benchmarks skipped: " + why);
                List<String> all = new ArrayList<>(Arrays.asList(args));
                all.add("-e");
                all.add("metrale\\.bench\\.cuda\\.");
                args = all.toArray(String[]::new);
            }
        }
        org.openjdk.jmh.Main.main(args);
    }
}
