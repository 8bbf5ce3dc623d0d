// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.Stream;
import metrale.gpu.contract.GpuContract;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code sim.blocks=parallel} against the in-order run: a race-free kernel leaves the same memory,
 * with every thread of every block run exactly once, whatever the grid's shape; a kernel that
 * faults reports the same fault, that of the lowest faulting block, however its blocks were timed;
 * the detectors (bounds, shared-memory races, the initcheck) fire as they do in order.
 */
class SimParallelBlocksTest {

    private static final String MODULE = "parallel_blocks_test";

    /**
     * Each thread writes a code of its block and thread at its linear global index and counts itself
     * at the same index; {@code forEachBlock} puts each block's thread count through its shared memory.
     */
    private static SimTwins twins() {
        return new SimTwins().register(MODULE, "ids", l -> {
            IntView out = l.ints(0);
            IntView runs = l.ints(1);
            Dim3 g = l.grid();
            Dim3 b = l.block();
            l.forEachThread(t -> {
                long block = ((long) t.blockZ() * g.y() + t.blockY()) * g.x() + t.blockX();
                long thread = ((long) t.threadZ() * b.y() + t.threadY()) * b.x() + t.threadX();
                long i = block * b.x() * b.y() * b.z() + thread;
                out.set(i, (int) (block * 1000 + thread));
                runs.atomicAdd(i, 1);
            });
        }).register(MODULE, "blockCounts", l -> {
            IntView out = l.ints(0);
            Dim3 g = l.grid();
            l.forEachBlock(blk -> {
                IntView s = blk.sharedInts();
                blk.forEachThread(t -> s.atomicAdd(0, 1));
                blk.forEachThread(t -> {
                    if (t.threadX() == 0 && t.threadY() == 0 && t.threadZ() == 0) {
                        long block = ((long) blk.blockZ() * g.y() + blk.blockY()) * g.x() + blk.blockX();
                        out.set(block, s.get(0) * 10 + (int) (block % 10));
                    }
                });
            });
        }).register(MODULE, "writePast", l -> {
            // Writes one int per thread into a buffer shorter than the grid: the blocks past its end fault.
            IntView out = l.ints(0);
            l.forEachThread(t -> out.set(t.globalX(), t.globalX()));
        });
    }

    /** Every allocation names its site: at the sampled default, which one does is drawn at random, and a fault names one. */
    private static Gpu open(String order, SimTwins twins) {
        Gpu gpu = Gpu.builder().backend("sim").leakDetection(LeakDetection.ALL)
                .backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, twins).backendOption(SimOptions.BLOCKS, order).open();
        gpu.loadModule(MODULE, SimKernels.image(MODULE));
        return gpu;
    }

    private static long volume(Dim3 d) {
        return (long) d.x() * d.y() * d.z();
    }

    /** {@return ids' output, then its per-thread run counts, then blockCounts' output} */
    private static int[][] run(String order, Dim3 grid, Dim3 block) {
        try (Gpu gpu = open(order, twins()); KernelArgs args = new KernelArgs()) {
            int threads = (int) (volume(grid) * volume(block));
            DevicePtr out = gpu.alloc(4L * threads);
            DevicePtr runs = gpu.alloc(4L * threads);
            DevicePtr counts = gpu.alloc(4L * volume(grid));
            gpu.memset(out, 0xff, 4L * threads);
            gpu.memset(runs, 0, 4L * threads);
            gpu.memset(counts, 0, 4L * volume(grid));
            gpu.launch(gpu.kernel(MODULE, "ids"), LaunchConfig.of(grid, block), Stream.DEFAULT, args.clear().ptr(out).ptr(runs));
            gpu.launch(gpu.kernel(MODULE, "blockCounts"), LaunchConfig.of(grid, block).withSharedMem(4), Stream.DEFAULT,
                    args.clear().ptr(counts));
            int[][] got = {new int[threads], new int[threads], new int[(int) volume(grid)]};
            gpu.copyD2H(out, got[0]);
            gpu.copyD2H(runs, got[1]);
            gpu.copyD2H(counts, got[2]);
            return got;
        }
    }

    @ParameterizedTest
    @CsvSource({
        "1,1,1, 1,1,1", "1,1,1, 64,1,1", "2,1,1, 32,1,1", "3,1,1, 7,1,1", "17,1,1, 3,1,1", "3,5,7, 2,3,1",
        "7,1,3, 5,1,1", "1,9,1, 4,2,2", "257,1,1, 33,1,1", "2,2,1000, 1,1,1", "4099,1,1, 1,1,1"
    })
    void aRaceFreeKernelLeavesTheSameMemoryInParallelAsInOrder(int gx, int gy, int gz, int bx, int by, int bz) {
        Dim3 grid = Dim3.of(gx, gy, gz);
        Dim3 block = Dim3.of(bx, by, bz);
        int[][] ordered = run("ordered", grid, block);
        int[][] parallel = run("parallel", grid, block);
        assertThat(parallel[1]).as("thread runs").containsOnly(1);
        assertThat(parallel[0]).as("ids").isEqualTo(ordered[0]);
        assertThat(parallel[2]).as("block counts through shared memory").isEqualTo(ordered[2]);
        assertThat(ordered[2][0] / 10).isEqualTo((int) volume(block));
    }

    /** {@return the fault of a launch over {@code blocks} blocks of 64 whose buffer has room for {@code room} ints} */
    private static String faultOf(String order, boolean ptx, int blocks, int room) {
        Gpu gpu = ptx
                ? Gpu.builder().backend("sim").leakDetection(LeakDetection.ALL)
                        .backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                        .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).backendOption(SimOptions.BLOCKS, order)
                        .backendOption(SimOptions.PTX, SimOptions.PTX_COMPILED).open()
                : open(order, twins());
        try (gpu; KernelArgs args = new KernelArgs()) {
            int n = blocks * 64;
            DevicePtr small = gpu.alloc(4L * room);
            GpuException e;
            if (ptx) {
                GpuContract.loadContractModule(gpu);
                DevicePtr x = gpu.alloc(4L * n);
                gpu.memset(x, 0, 4L * n);
                gpu.memset(small, 0, 4L * room);
                e = catchThrowableOfType(GpuException.class, () -> {
                    gpu.launch(gpu.kernel(GpuContract.MODULE, "axpy_f32"), LaunchConfig.forElements(n, 64), Stream.DEFAULT,
                            args.clear().f32(2f).ptr(x).ptr(small).i32(n));
                    gpu.synchronize();
                });
            } else {
                e = catchThrowableOfType(GpuException.class, () -> {
                    gpu.launch(gpu.kernel(MODULE, "writePast"), LaunchConfig.of(blocks, 64), Stream.DEFAULT,
                            args.clear().ptr(small));
                    gpu.synchronize();
                });
            }
            assertThat(e).as("%s %s", order, ptx ? "PTX" : "twin").isNotNull();
            // Allocation addresses differ between runtimes; the rest of the message does not.
            return e.error() + " " + e.getMessage().replaceAll("0x[0-9a-f]+", "ADDR");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"twin", "ptx"})
    void aFaultInTheLastBlockIsReportedAsInOrder(String kind) {
        boolean ptx = kind.equals("ptx");
        String ordered = faultOf("ordered", ptx, 300, 300 * 64 - 1);
        assertThat(ordered).contains("ILLEGAL_ADDRESS").contains(ptx ? "thread (63,0,0) of block (299,0,0)" : "[19199]");
        for (int round = 0; round < 10; round++) {
            assertThat(faultOf("parallel", ptx, 300, 300 * 64 - 1)).isEqualTo(ordered);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"twin", "ptx"})
    void ofManyFaultingBlocksTheLowestIsReportedAsInOrder(String kind) {
        boolean ptx = kind.equals("ptx");
        // Every block from 61 on faults: in parallel, later ones usually fault first.
        String ordered = faultOf("ordered", ptx, 400, 61 * 64 + 5);
        assertThat(ordered).contains("ILLEGAL_ADDRESS").contains(ptx ? "thread (5,0,0) of block (61,0,0)" : "[3909]");
        for (int round = 0; round < 10; round++) {
            assertThat(faultOf("parallel", ptx, 400, 61 * 64 + 5)).isEqualTo(ordered);
        }
    }

    /** {@return {@code checks.ptx} (the detectors' kernels, from {@code ptx/checks.cu}) on a runtime with twins off} */
    private static Gpu openChecks(String order, boolean initCheck) {
        Gpu gpu = Gpu.builder().backend("sim").leakDetection(LeakDetection.ALL)
                .backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH)
                .backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).backendOption(SimOptions.BLOCKS, order)
                .backendOption(SimInitCheck.OPT_INITCHECK, Boolean.toString(initCheck)).open();
        try (var in = SimParallelBlocksTest.class.getResourceAsStream("/ptx/checks.ptx")) {
            gpu.loadModule("checks", in.readAllBytes());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return gpu;
    }

    /** {@return the fault of {@code kernel} of checks.ptx over 8 blocks of 64 threads, every block of which faults} */
    private static String detected(String order, String kernel) {
        try (Gpu gpu = openChecks(order, false); KernelArgs args = new KernelArgs()) {
            DevicePtr small = gpu.alloc(4L * 64);
            DevicePtr out = gpu.alloc(4L * 8 * 64);
            gpu.memset(small, 0, 4L * 64);
            if (kernel.equals("neighbour_racy")) {
                args.ptr(out);
            } else {
                args.ptr(small).ptr(out).i32(64).i32(64);
            }
            GpuException e = catchThrowableOfType(GpuException.class, () -> {
                gpu.launch(gpu.kernel("checks", kernel), LaunchConfig.of(8, 64), Stream.DEFAULT, args);
                gpu.synchronize();
            });
            assertThat(e).as("%s %s", order, kernel).isNotNull();
            return e.error() + " " + e.getMessage().replaceAll("0x[0-9a-f]+", "ADDR");
        }
    }

    @ParameterizedTest
    @CsvSource({"neighbour_racy, shared-memory race, block (0,0,0)", "load_past, ILLEGAL_ADDRESS, of block (1,0,0)"})
    void theDetectorsFireInParallelAsInOrder(String kernel, String what, String block) {
        String ordered = detected("ordered", kernel);
        assertThat(ordered).contains(what, block);
        for (int round = 0; round < 5; round++) {
            assertThat(detected("parallel", kernel)).isEqualTo(ordered);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ordered", "parallel"})
    void theInitcheckCountsEveryUnwrittenReadOfBlocksRunningAtOnce(String order) {
        try (Gpu gpu = openChecks(order, true); KernelArgs args = new KernelArgs()) {
            int n = 64 * 64;
            DevicePtr never = gpu.alloc(4L * n);
            DevicePtr out = gpu.alloc(4L * n);
            gpu.launch(gpu.kernel("checks", "twice"), LaunchConfig.forElements(n, 64), Stream.DEFAULT,
                    args.ptr(never).ptr(out).i32(n));
            gpu.synchronize();
            List<UninitializedRead> reads = gpu.unwrap(SimInitCheck.class).orElseThrow().uninitializedReads();
            assertThat(reads).hasSize(1);
            // Which block's read came first (the record's offset) is the timing's; the count is not.
            assertThat(reads.get(0).count()).as("unwritten reads counted").isEqualTo(n);
            assertThat(reads.get(0).offset()).isBetween(0L, 4L * n - 4);
        }
    }
}
