// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;

/**
 * Measures what binding the context before every call costs, on a GPU host: an unconditional
 * {@code cuCtxSetCurrent} of the context already current, a {@code cuCtxGetCurrent} (the
 * compare-first alternative's extra call), and an empty-kernel launch through
 * {@link CudaDevice#launchKernel} (bind, argument check, launch) against the bare
 * {@code cuLaunchKernel}. Also reports the bytes the launch path allocates. Not a test: timings are
 * printed, never asserted. Run by the bundle's {@code run-tests.sh}.
 */
public final class CtxBindBenchmark {

    private CtxBindBenchmark() {
    }

    /**
     * Runs the measurements and prints one line each.
     *
     * @param args unused
     */
    public static void main(String[] args) throws Exception {
        CudaDevice gpu = CudaBackend.open(Integer.getInteger(CudaBackend.DEVICE_PROPERTY, 0));
        byte[] ptx;
        try (var in = CtxBindBenchmark.class.getResourceAsStream("/ptx/kernels.ptx")) {
            ptx = in.readAllBytes();
        }
        long module = gpu.moduleLoadData("kernels", ptx);
        long empty = gpu.moduleGetFunction(module, "empty");
        long ctx = gpu.context();
        try (Arena arena = Arena.ofConfined(); KernelArgs kargs = new KernelArgs()) {
            MemorySegment out = arena.allocate(8);
            int n = 2_000_000;
            System.out.printf("cuCtxSetCurrent (same context): %.1f ns/call%n", median(5, () -> {
                for (int i = 0; i < n; i++) {
                    CuCtx.setCurrent(ctx);
                }
            }) / n);
            System.out.printf("cuCtxGetCurrent:                %.1f ns/call%n", median(5, () -> {
                for (int i = 0; i < n; i++) {
                    if (CuCtx.getCurrent(out) != ctx) {
                        throw new AssertionError("context changed");
                    }
                }
            }) / n);
            LaunchConfig one = LaunchConfig.of(1, 1);
            int launches = 200_000;
            double bare = median(5, () -> {
                for (int i = 0; i < launches; i++) {
                    CuModule.launchKernel(empty, 1, 1, 1, 1, 1, 1, 0, 0, kargs.table());
                }
                CuCtx.synchronize();
            }) / launches;
            double full = median(5, () -> {
                for (int i = 0; i < launches; i++) {
                    gpu.launchKernel(empty, one, 0, kargs);
                }
                gpu.ctxSynchronize();
            }) / launches;
            System.out.printf("empty launch, bare cuLaunchKernel:        %.0f ns/launch%n", bare);
            System.out.printf("empty launch, CudaDevice.launchKernel:    %.0f ns/launch (bind + argument check + launch)%n", full);
            // Reflective: the test classes compile inside module metrale.gpu.cuda, which does not read jdk.management.
            Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            var allocated = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
            long before = (long) allocated.invoke(mx);
            for (int i = 0; i < launches; i++) {
                gpu.launchKernel(empty, one, 0, kargs);
            }
            long after = (long) allocated.invoke(mx);
            gpu.ctxSynchronize();
            System.out.printf("allocated by %d warm launches: %d bytes%n", launches, after - before);
        } finally {
            gpu.moduleUnload(module);
            gpu.close();
        }
    }

    private static double median(int rounds, Runnable r) {
        r.run(); // warm-up
        long[] t = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            long s = System.nanoTime();
            r.run();
            t[i] = System.nanoTime() - s;
        }
        Arrays.sort(t);
        return t[rounds / 2];
    }
}
