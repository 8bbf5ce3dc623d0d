// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Dim3;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.telemetry.KernelLookup;
import org.junit.jupiter.api.Test;

/**
 * Modules and kernels: loading, lookups (named for the trace, audited, published in the op
 * cache), launches with each argument type, grids of several blocks, dynamic shared memory with
 * barriers, argument buffers refilled after a launch, and configuration errors.
 */
public abstract class KernelContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected KernelContract() {
    }

    /** The contract module is loaded and unknown names are not. */
    @Test
    public void loadedModuleIsKnown() {
        assertThat(gpu.hasModule(MODULE)).isTrue();
        assertThat(gpu.hasModule("no_such_module")).isFalse();
        assertThat(gpu.kernelRegistry().hasModule(MODULE)).isTrue();
    }

    /** A lookup names the handle {@code module::func} for the trace and lists the function in the registry. */
    @Test
    public void lookupNamesTheHandleAndRegistersTheFunction() {
        KernelHandle k = gpu.kernel(MODULE, "fill_f32");
        assertThat(gpu.telemetry().trace().nameOf(k.value())).isEqualTo("contract::fill_f32");
        assertThat(gpu.kernelRegistry().modules().get(MODULE)).contains("fill_f32");
        KernelHandle again = gpu.kernel(MODULE, "fill_f32");
        assertThat(again).as("the same function gives the same handle").isEqualTo(k);
        assertThat(gpu.kernel(MODULE, "add_i32")).isNotEqualTo(k);
    }

    /** Every successful lookup publishes its handle in the op cache. */
    @Test
    public void lookupPublishesInTheOpCache() {
        assertThat(gpu.opCache().kernel(MODULE, "axpy_f32")).isEmpty();
        KernelHandle k = gpu.kernel(MODULE, "axpy_f32");
        assertThat(gpu.opCache().kernel(MODULE, "axpy_f32")).contains(k);
        assertThat(gpu.opCache().kernels()).containsEntry("contract::axpy_f32", k);
    }

    /** Lookups are not cached: each one is audited, with its site. */
    @Test
    public void everyLookupIsAudited() {
        String site = null;
        for (int i = 0; i < 3; i++) {
            gpu.kernel(MODULE, "noop"); site = here();
        }
        String s = site;
        assertThat(gpu.telemetry().audit().lookups())
                .filteredOn(l -> l.func().equals("noop"))
                .singleElement()
                .satisfies(l -> {
                    assertThat(l.module()).isEqualTo(MODULE);
                    assertThat(l.ok()).isTrue();
                    assertThat(l.site()).isEqualTo(s);
                    assertThat(l.count()).isEqualTo(3);
                });
    }

    /** An unknown function or module is NOT_FOUND and is audited as failed. */
    @Test
    public void unknownFunctionOrModuleIsNotFound() {
        GpuException e = assertCuda(CudaError.NOT_FOUND, () -> gpu.kernel(MODULE, "nope"));
        assertThat(e.getMessage()).contains("nope");
        GpuException m = assertCuda(CudaError.NOT_FOUND, () -> gpu.kernel("no_such_module", "fill_f32"));
        assertThat(m.getMessage()).contains("no_such_module");
        List<KernelLookup> failed = gpu.telemetry().audit().lookups().stream().filter(l -> !l.ok()).toList();
        assertThat(failed).extracting(KernelLookup::func).contains("nope", "fill_f32");
        assertThat(gpu.opCache().kernel(MODULE, "nope")).isEmpty();
        assertStillWorks();
    }

    /** fill_f32: a float and an int argument after a pointer, over several blocks. */
    @Test
    public void fillKernelWritesEveryElement() {
        int n = 1000;
        DevicePtr p = gpu.alloc(4L * n);
        gpu.launch(kernel("fill_f32"), LaunchConfig.forElements(n, 64), Stream.DEFAULT, args.clear().ptr(p).f32(1.25f).i32(n));
        assertThat(readFloats(p, n)).containsOnly(1.25f);
        gpu.free(p);
    }

    /** axpy_f32: a float first, then two pointers; a grid larger than n leaves the rest alone. */
    @Test
    public void axpyKernelComputes() {
        int n = 300;
        DevicePtr x = gpu.alloc(4L * n);
        DevicePtr y = gpu.alloc(4L * (n + 10));
        float[] xs = new float[n];
        float[] ys = new float[n + 10];
        for (int i = 0; i < n; i++) {
            xs[i] = i;
            ys[i] = 2 * i;
        }
        for (int i = n; i < n + 10; i++) {
            ys[i] = -1;
        }
        gpu.copyH2D(xs, x);
        gpu.copyH2D(ys, y);
        gpu.launch(kernel("axpy_f32"), LaunchConfig.of(5, 128), Stream.DEFAULT, args.clear().f32(3f).ptr(x).ptr(y).i32(n));
        float[] out = readFloats(y, n + 10);
        for (int i = 0; i < n; i++) {
            assertThat(out[i]).as("y[%d]", i).isEqualTo(5f * i);
        }
        for (int i = n; i < n + 10; i++) {
            assertThat(out[i]).as("y[%d] past n", i).isEqualTo(-1f);
        }
        gpu.free(x);
        gpu.free(y);
    }

    /** A kernel may take an interior pointer. */
    @Test
    public void kernelsTakeInteriorPointers() {
        DevicePtr p = gpu.alloc(400);
        gpu.copyH2D(ints(100, 0), p);
        addI32(p.plus(40), 7, 20, Stream.DEFAULT);
        int[] out = readInts(p, 100);
        for (int i = 0; i < 100; i++) {
            assertThat(out[i]).as("int %d", i).isEqualTo(i >= 10 && i < 30 ? 7 : 0);
        }
        gpu.free(p);
    }

    /** block_sum_f32: dynamic shared memory and a barrier, one sum per block. */
    @Test
    public void sharedMemoryKernelSumsEachBlock() {
        int block = 128;
        int blocks = 7;
        int n = block * blocks - 50;
        float[] in = new float[n];
        for (int i = 0; i < n; i++) {
            in[i] = i % 17;
        }
        DevicePtr dIn = gpu.alloc(4L * n);
        DevicePtr dOut = gpu.alloc(4L * blocks);
        gpu.copyH2D(in, dIn);
        gpu.launch(kernel("block_sum_f32"), LaunchConfig.of(blocks, block).withSharedMem(4 * block), Stream.DEFAULT,
                args.clear().ptr(dIn).ptr(dOut).i32(n));
        float[] out = readFloats(dOut, blocks);
        for (int b = 0; b < blocks; b++) {
            float s = 0;
            for (int t = 0; t < block; t++) {
                int i = b * block + t;
                s += i < n ? in[i] : 0f;
            }
            assertThat(out[b]).as("block %d", b).isEqualTo(s);
        }
        gpu.free(dIn);
        gpu.free(dOut);
    }

    /**
     * Two- and three-dimensional grids and blocks, the largest grid y and the largest block, run
     * every thread exactly once with its own indices.
     */
    @Test
    public void multiDimensionalConfigsLaunch() {
        List<LaunchConfig> configs = List.of(
                LaunchConfig.of(Dim3.of(2, 3, 4), Dim3.of(4, 4, 4)),
                LaunchConfig.of(Dim3.of(1, 65535, 1), Dim3.of(1)),
                LaunchConfig.of(Dim3.of(3), Dim3.of(1024)),
                LaunchConfig.of(Dim3.of(1), Dim3.of(1, 1, 64)));
        for (LaunchConfig c : configs) {
            int threads = c.grid().x() * c.grid().y() * c.grid().z() * c.block().x() * c.block().y() * c.block().z();
            DevicePtr out = gpu.alloc(4L * threads);
            gpu.memset(out, 0, 4L * threads);
            gpu.launch(kernel("thread_ids"), c, Stream.DEFAULT, args.clear().ptr(out));
            gpu.synchronize();
            assertThat(readInts(out, threads)).as("every thread of %s, once", c).containsExactly(iota(threads, 1));
            gpu.free(out);
        }
    }

    /** Launches copy their arguments: the buffer may be refilled once launch returns. */
    @Test
    public void argumentsMayBeRefilledAfterLaunch() {
        DevicePtr a = gpu.alloc(256);
        DevicePtr b = gpu.alloc(256);
        Stream s = gpu.createStream();
        KernelHandle k = kernel("fill_f32");
        gpu.launch(k, LaunchConfig.of(1, 64), s, args.clear().ptr(a).f32(1f).i32(64));
        gpu.launch(k, LaunchConfig.of(1, 64), s, args.clear().ptr(b).f32(2f).i32(64));
        args.clear().ptr(DevicePtr.NULL).f32(99f).i32(0);
        gpu.synchronize(s);
        assertThat(readFloats(a, 64)).containsOnly(1f);
        assertThat(readFloats(b, 64)).containsOnly(2f);
        gpu.destroyStream(s);
        gpu.free(a);
        gpu.free(b);
    }

    /** Launches on one stream run in order: fill, then two adds. */
    @Test
    public void launchesOnOneStreamRunInOrder() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(4 * 512);
        gpu.memsetAsync(p, 0, 4 * 512, s);
        addI32(p, 5, 512, s);
        addI32(p, -2, 256, s);
        gpu.synchronize(s);
        int[] out = readInts(p, 512);
        for (int i = 0; i < 512; i++) {
            assertThat(out[i]).as("int %d", i).isEqualTo(i < 256 ? 3 : 5);
        }
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Loading a module again under its name replaces it; its kernels still launch. */
    @Test
    public void reloadingAModuleReplacesIt() {
        loadContractModule(gpu);
        assertThat(gpu.hasModule(MODULE)).isTrue();
        DevicePtr p = gpu.alloc(64);
        KernelHandle k = gpu.kernel(MODULE, "fill_f32");
        gpu.launch(k, LaunchConfig.of(1, 16), Stream.DEFAULT, args.clear().ptr(p).f32(4f).i32(16));
        assertThat(readFloats(p, 16)).containsOnly(4f);
        gpu.free(p);
    }

    /** The same image loads under a second name, with its own kernels. */
    @Test
    public void oneImageLoadsUnderTwoNames() {
        gpu.loadModule(SECOND_MODULE, contractPtx());
        assertThat(gpu.hasModule(SECOND_MODULE)).isTrue();
        KernelHandle k = gpu.kernel(SECOND_MODULE, "add_i32");
        assertThat(gpu.telemetry().trace().nameOf(k.value())).isEqualTo("contract2::add_i32");
        DevicePtr p = gpu.alloc(16);
        gpu.copyH2D(ints(4, 1), p);
        gpu.launch(k, LaunchConfig.of(1, 4), Stream.DEFAULT, args.clear().ptr(p).i32(2).i32(4));
        assertThat(readInts(p, 4)).containsOnly(3);
        gpu.free(p);
    }

    /**
     * Bad images, with the codes an H200 returns: garbage, empty and truncated-ELF images and PTX
     * text without a {@code .version} are INVALID_IMAGE; PTX with a header but a broken body is
     * INVALID_PTX. A failed load leaves the loaded modules alone.
     */
    @Test
    public void badImagesAreRefused() {
        assertCuda(CudaError.INVALID_IMAGE, () -> gpu.loadModule("garbage", new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
        assertCuda(CudaError.INVALID_IMAGE, () -> gpu.loadModule("empty", new byte[0]));
        assertCuda(CudaError.INVALID_IMAGE, () -> gpu.loadModule("elf", new byte[] {0x7f, 'E', 'L', 'F', 0, 0, 0, 0}));
        assertCuda(CudaError.INVALID_IMAGE, () -> gpu.loadModule("headerless", HEADERLESS_PTX.getBytes(StandardCharsets.US_ASCII)));
        assertCuda(CudaError.INVALID_PTX, () -> gpu.loadModule("bad_ptx", BROKEN_PTX.getBytes(StandardCharsets.US_ASCII)));
        for (String name : new String[] {"garbage", "empty", "elf", "headerless", "bad_ptx"}) {
            assertThat(gpu.hasModule(name)).as(name).isFalse();
        }
        assertThat(gpu.hasModule(MODULE)).as("a failed load leaves other modules alone").isTrue();
        assertStillWorks();
    }

    /** More than 48 KiB of dynamic shared memory needs the kernel's opt-in (conformance case 24). */
    @Test
    public void dynamicSharedMemoryOptIn() {
        KernelHandle k = kernel("noop");
        gpu.launch(k, LaunchConfig.of(1, 32).withSharedMem(49152), Stream.DEFAULT, args.clear());
        assertCuda(CudaError.INVALID_VALUE,
                () -> gpu.launch(k, LaunchConfig.of(1, 32).withSharedMem(49153), Stream.DEFAULT, args.clear()));
        gpu.setMaxDynamicSharedMemory(k, 100_000);
        gpu.launch(k, LaunchConfig.of(1, 32).withSharedMem(100_000), Stream.DEFAULT, args.clear());
        assertCuda(CudaError.INVALID_VALUE,
                () -> gpu.launch(k, LaunchConfig.of(1, 32).withSharedMem(100_001), Stream.DEFAULT, args.clear()));
        int optin = gpu.device().maxSharedPerBlockOptin();
        assertThat(optin).isGreaterThanOrEqualTo(49152);
        assertCuda(CudaError.INVALID_VALUE, () -> gpu.setMaxDynamicSharedMemory(k, optin + 1));
        gpu.synchronize();
    }

    /** A kernel that uses opted-in shared memory computes correctly with it. */
    @Test
    public void optedInSharedMemoryIsUsable() {
        KernelHandle k = kernel("block_sum_f32");
        gpu.setMaxDynamicSharedMemory(k, 64 * 1024);
        DevicePtr in = gpu.alloc(4 * 256);
        DevicePtr out = gpu.alloc(4);
        gpu.copyH2D(floats(256, 0.5f), in);
        gpu.launch(k, LaunchConfig.of(1, 256).withSharedMem(64 * 1024), Stream.DEFAULT, args.clear().ptr(in).ptr(out).i32(256));
        assertThat(readFloats(out, 1)).containsExactly(128f);
        gpu.free(in);
        gpu.free(out);
    }

    /**
     * Compiling CUDA C either works (the PTX loads and runs) or says NOT_SUPPORTED; where the
     * backend's capabilities are required, it must work.
     */
    @Test
    public void compileCudaWorksOrIsNotSupported() {
        String src = "extern \"C\" __global__ void twice(int* p, int n) {"
                + " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }";
        byte[] ptx;
        try {
            ptx = gpu.compileCuda("twice", src);
        } catch (GpuException e) {
            assertThat(e.error()).as("why compileCuda failed: %s", e.getMessage()).isEqualTo(CudaError.NOT_SUPPORTED);
            assertThat(capabilitiesRequired()).as("compileCuda is NOT_SUPPORTED where capabilities are required: %s",
                    e.getMessage()).isFalse();
            return;
        }
        assertThat(new String(ptx, StandardCharsets.US_ASCII)).contains(".entry").contains("twice");
        gpu.loadModule("twice", ptx);
        DevicePtr p = gpu.alloc(40);
        gpu.copyH2D(iota(10, 1), p);
        gpu.launch(gpu.kernel("twice", "twice"), LaunchConfig.of(1, 32), Stream.DEFAULT, args.clear().ptr(p).i32(10));
        assertThat(readInts(p, 10)).containsExactly(2, 4, 6, 8, 10, 12, 14, 16, 18, 20);
        gpu.free(p);
    }

    /**
     * Launches from many virtual threads, each with its own arguments, buffer and stream.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void concurrentLaunchesFromVirtualThreads() throws Exception {
        int threads = 12;
        List<Thread> workers = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        KernelHandle add = kernel("add_i32");
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers.add(Thread.ofVirtual().start(() -> {
                try (KernelArgs a = new KernelArgs()) {
                    Stream s = gpu.createStream();
                    DevicePtr p = gpu.alloc(4 * 300);
                    gpu.memsetAsync(p, 0, 4 * 300, s);
                    for (int i = 0; i < 25; i++) {
                        gpu.launch(add, LaunchConfig.forElements(300, 64), s, a.clear().ptr(p).i32(id + 1).i32(300));
                    }
                    gpu.synchronize(s);
                    int[] out = new int[300];
                    gpu.copyD2H(p, out);
                    assertThat(out).as("thread %d", id).containsOnly(25 * (id + 1));
                    gpu.free(p);
                    gpu.destroyStream(s);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        assertThat(failure.get()).isNull();
    }

    /** Debug sync: the runtime says so, and a launch returns with its work done. */
    @Test
    public void debugSyncMakesLaunchesSynchronous() {
        assertThat(gpu.debugSyncKernels()).isEqualTo(gpu.options().debugSync());
        reopen(b -> b.debugSync(true));
        assertThat(gpu.debugSyncKernels()).isTrue();
        Stream nb = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 1), p);
        addI32(p, 1, 16, nb);
        assertThat(gpu.streamQuery(nb)).as("the stream is idle after a debug-synced launch").isTrue();
        assertThat(readInts(p, 16)).containsOnly(2);
        gpu.destroyStream(nb);
        gpu.free(p);
    }

    /**
     * Launch arguments whose count or sizes do not match the kernel's parameters are refused at the
     * launch with INVALID_VALUE, not sticky: too few, too many, a 4-byte value for a pointer, an
     * 8-byte int for an int, a double for a float.
     */
    @Test
    public void argumentCountAndSizeMismatchesAreInvalidValueAtTheLaunch() {
        DevicePtr p = gpu.alloc(256);
        KernelHandle fill = kernel("fill_f32");
        LaunchConfig cfg = LaunchConfig.of(1, 64);
        List<java.util.function.Consumer<KernelArgs>> bad = List.of(
                a -> a.ptr(p).f32(1f),
                a -> a.ptr(p).f32(1f).i32(64).i32(0),
                a -> a.i32(0).f32(1f).i32(64),
                a -> a.ptr(p).f32(1f).i64(64),
                a -> a.ptr(p).f64(2.0).i32(64));
        for (var fillArgs : bad) {
            args.clear();
            fillArgs.accept(args);
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.launch(fill, cfg, Stream.DEFAULT, args));
        }
        gpu.synchronize();
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
        gpu.free(p);
    }
}
