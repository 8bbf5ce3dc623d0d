package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/** Per-runtime twin tables: looked in first, the process-wide {@link SimKernels} the fallback. */
class SimTwinsTest {

    private static final String MODULE = "twins_test";
    private static final int N = 256;

    /** A twin that fills argument 0 with {@code value}. */
    private static SimKernel filler(int value) {
        return l -> {
            IntView p = l.ints(0);
            l.forEachThread(t -> {
                if (t.globalX() < N) {
                    p.set(t.globalX(), value);
                }
            });
        };
    }

    private static GpuBuilder sim(SimTwins twins) {
        GpuBuilder b = Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
        return twins == null ? b : b.backendOption(SimOptions.TWINS, twins);
    }

    /** Runs {@code MODULE::fill} over N ints and {@return what it wrote} */
    private static int[] runFill(Gpu gpu, int rounds) {
        gpu.loadModule(MODULE, SimKernels.image(MODULE));
        DevicePtr p = gpu.alloc(4L * N);
        int[] out = new int[N];
        try (KernelArgs args = new KernelArgs()) {
            for (int r = 0; r < rounds; r++) {
                gpu.memset(p, 0, 4L * N);
                gpu.launch(gpu.kernel(MODULE, "fill"), LaunchConfig.forElements(N, 64), Stream.DEFAULT, args.clear().ptr(p));
                gpu.copyD2H(p, out);
            }
        }
        return out;
    }

    @Test
    void twoRuntimesWithDifferentTwinsOfOneKernelRunInParallel() throws Exception {
        SimTwins seven = new SimTwins().register(MODULE, "fill", filler(7));
        SimTwins nine = new SimTwins().register(MODULE, "fill", filler(9));
        CyclicBarrier start = new CyclicBarrier(2);
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            List<Future<int[]>> results = new ArrayList<>();
            for (SimTwins t : List.of(seven, nine)) {
                results.add(pool.submit(() -> {
                    try (Gpu gpu = sim(t).open()) {
                        start.await();
                        return runFill(gpu, 50);
                    }
                }));
            }
            assertThat(results.get(0).get()).containsOnly(7);
            assertThat(results.get(1).get()).containsOnly(9);
        }
    }

    @Test
    void aRuntimeFallsBackToTheProcessWideTableAndItsOwnTableWins() {
        SimKernels.register(MODULE, "fill", filler(3));
        try {
            try (Gpu plain = sim(null).open(); Gpu empty = sim(new SimTwins()).open();
                 Gpu own = sim(new SimTwins().register(MODULE, "fill", filler(5))).open()) {
                assertThat(runFill(plain, 1)).containsOnly(3);
                assertThat(runFill(empty, 1)).containsOnly(3);
                assertThat(runFill(own, 1)).containsOnly(5);
            }
        } finally {
            SimKernels.unregister(MODULE, "fill");
        }
    }

    @Test
    void anUnregisteredTwinIsNotFoundNamingTheRuntimesTable() {
        SimTwins twins = new SimTwins().register(MODULE, "fill", filler(1));
        twins.unregister(MODULE, "fill");
        twins.unregister(MODULE, "never");
        assertThat(twins.lookup(MODULE, "fill")).isEmpty();
        try (Gpu gpu = sim(twins).open()) {
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            assertThatThrownBy(() -> gpu.kernel(MODULE, "fill")).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.NOT_FOUND);
                assertThat(e.getMessage()).contains("SimTwins", "twins_test::fill");
            });
        }
    }

    @Test
    void aTwinsOptionOfTheWrongTypeIsRefusedAtOpen() {
        GpuBuilder b = Gpu.builder().backend("sim").backendOption(SimOptions.TWINS, List.of("not twins"));
        assertThatThrownBy(b::open).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(SimOptions.TWINS).hasMessageContaining(SimTwins.class.getName());
    }

    @Test
    void badNamesAreRefused() {
        SimTwins twins = new SimTwins();
        assertThatThrownBy(() -> twins.register("a::b", "f", filler(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> twins.register("m", "", filler(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> twins.register("m", "f", null)).isInstanceOf(NullPointerException.class);
    }
}
