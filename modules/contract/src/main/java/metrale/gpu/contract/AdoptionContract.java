// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.function.UnaryOperator;
import metrale.gpu.AdoptedMemory;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Device memory of another library ({@link Gpu#adoptDeviceMemory}): refused until adopted; once
 * adopted, copies, memsets, launches with pointer checks and the report accept and list it as
 * foreign with its site; {@code sweepUnreleased()} and {@code close()} never free it; releasing the
 * adoption makes it refused again; overlapping adoptions and the runtime's own memory are refused.
 */
public abstract class AdoptionContract extends GpuContract {

    /** Device memory that another library owns, in the context of the runtime under test. */
    protected interface Foreign extends AutoCloseable {

        /**
         * {@return the address of {@code bytes} of device memory the runtime under test did not allocate}
         *
         * @param bytes at least 1
         */
        long alloc(long bytes);

        /**
         * Frees it as its owner would; after the runtime under test closed, the backend may have
         * nothing left to free.
         *
         * @param ptr an address {@link #alloc} returned
         */
        void free(long ptr);

        /**
         * {@return whether the memory at {@code ptr} is still allocated by its owner} Called after the
         * runtime under test closed.
         *
         * @param ptr an address {@link #alloc} returned
         */
        boolean stillAllocatedAfterClose(long ptr);

        /** Releases what the source holds (a second runtime, say). */
        @Override
        void close();
    }

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected AdoptionContract() {
    }

    /**
     * {@return a source of foreign device memory in {@code gpu}'s context} On the simulator, memory
     * allocated in the simulated context behind the runtime; on CUDA, memory of a second runtime on
     * the same device (they share the primary context, as cuBLAS or NCCL would).
     *
     * @param gpu the runtime under test
     */
    protected abstract Foreign foreign(Gpu gpu);

    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + 5);
        }
        return b;
    }

    /**
     * Memory another library allocated is refused until adopted; adopted, copies, memsets and
     * stream work accept it, a range past its end is refused naming it, it is listed as foreign with
     * its site (and not as a ledger allocation); released, it is refused again.
     */
    @Test
    public void adoptedMemoryIsAcceptedListedAndRefusedAgainAfterRelease() {
        try (Foreign f = foreign(gpu)) {
            int n = 4096;
            long raw = f.alloc(n);
            byte[] data = pattern(n);
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyH2D(data, new DevicePtr(raw)));

            DevicePtr p = gpu.adoptDeviceMemory(raw, n, "other library's buffer"); String site = here();
            assertThat(p.address()).isEqualTo(raw);
            gpu.copyH2D(data, p);
            assertThat(readBytes(p, n)).isEqualTo(data);
            gpu.memset(p.plus(100), 7, 50);
            byte[] set = readBytes(p, n);
            assertThat(Arrays.copyOfRange(set, 100, 150)).containsOnly((byte) 7);
            assertThat(set[99]).isEqualTo(data[99]);
            assertThat(set[150]).isEqualTo(data[150]);

            DevicePtr own = gpu.alloc(n);
            Stream s = gpu.createStream();
            gpu.copyD2DAsync(p, own, n, s);
            gpu.memsetAsync(p, 1, n, s);
            gpu.copyD2DAsync(own, p.plus(n / 2), n / 2, s);
            gpu.synchronize(s);
            gpu.destroyStream(s);
            byte[] back = readBytes(p, n);
            assertThat(Arrays.copyOfRange(back, 0, n / 2)).containsOnly((byte) 1);
            assertThat(Arrays.copyOfRange(back, n / 2, n)).isEqualTo(Arrays.copyOfRange(set, 0, n / 2));
            gpu.free(own);

            GpuException past = assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyH2D(new byte[n + 1], p));
            assertThat(past.getMessage()).contains("foreign", "other library's buffer", "past its end");

            assertThat(gpu.adoptedMemory()).singleElement().satisfies(a -> {
                assertThat(a.ptr()).isEqualTo(p);
                assertThat(a.bytes()).isEqualTo(n);
                assertThat(a.label()).isEqualTo("other library's buffer");
                assertThat(a.site()).isEqualTo(site);
            });
            assertThat(gpu.allocReport(10, 0)).contains("foreign", "other library's buffer", site);
            assertThat(gpu.liveAllocations()).as("adopted memory is not a ledger allocation").isEmpty();

            gpu.releaseAdoption(p);
            assertThat(gpu.adoptedMemory()).isEmpty();
            assertThat(gpu.allocReport(10, 0)).doesNotContain("foreign");
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.copyH2D(data, p));
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.memset(p, 0, n));
            GpuException twice = assertCuda(CudaError.INVALID_VALUE, () -> gpu.releaseAdoption(p));
            assertThat(twice.getMessage()).contains("releaseAdoption", "starts no adopted range");
            f.free(raw);
        }
    }

    /** A launch with pointer checks on accepts a pointer into adopted memory, and refuses it before. */
    @Test
    public void aLaunchWithPointerChecksAcceptsAdoptedMemory() {
        Gpu g = open(b -> b.checkPointers(true));
        try (Foreign f = foreign(g)) {
            long raw = f.alloc(256);
            LaunchConfig one = LaunchConfig.of(1, 64);
            assertCuda(CudaError.INVALID_VALUE, () -> g.launch(g.kernel(MODULE, "fill_f32"), one, Stream.DEFAULT,
                    args.clear().ptr(new DevicePtr(raw)).f32(2.5f).i32(64)));
            DevicePtr p = g.adoptDeviceMemory(raw, 256, "foreign floats");
            g.launch(g.kernel(MODULE, "fill_f32"), one, Stream.DEFAULT, args.clear().ptr(p).f32(2.5f).i32(64));
            float[] out = new float[64];
            g.copyD2H(p, out);
            assertThat(out).containsOnly(2.5f);
            g.releaseAdoption(p);
            f.free(raw);
        } finally {
            g.close();
        }
    }

    /**
     * {@code sweepUnreleased()} frees only the ledger's allocations, and {@code close()} leaves
     * adopted memory allocated: its owner frees it.
     */
    @Test
    public void sweepUnreleasedAndCloseNeverFreeAdoptedMemory() {
        Gpu g = open(UnaryOperator.identity());
        Foreign f = foreign(g);
        try {
            int n = 1024;
            long raw = f.alloc(n);
            DevicePtr p = g.adoptDeviceMemory(raw, n, "survives");
            byte[] data = pattern(n);
            g.copyH2D(data, p);
            g.alloc(64);
            assertThat(g.sweepUnreleased()).as("only the ledger allocation").isEqualTo(1);
            byte[] back = new byte[n];
            g.copyD2H(p, back);
            assertThat(back).as("adopted memory after sweepUnreleased").isEqualTo(data);
            assertThat(g.adoptedMemory()).hasSize(1);
            g.close();
            assertThat(f.stillAllocatedAfterClose(raw)).as("the foreign memory after the runtime closed").isTrue();
            f.free(raw);
        } finally {
            g.close();
            f.close();
        }
    }

    /**
     * An adoption that overlaps another, or the runtime's own memory, is refused naming what it
     * overlaps; so are a null, empty or unlabelled range and a release from inside a range.
     */
    @Test
    public void overlappingAdoptionsAndTheRuntimesOwnMemoryAreRefused() {
        try (Foreign f = foreign(gpu)) {
            long raw = f.alloc(4096);
            DevicePtr p = gpu.adoptDeviceMemory(raw, 4096, "first");
            for (long[] r : new long[][] {{raw, 4096}, {raw + 16, 16}, {raw + 4000, 200}}) {
                GpuException e = assertCuda(CudaError.INVALID_VALUE, () -> gpu.adoptDeviceMemory(r[0], r[1], "second"));
                assertThat(e.getMessage()).contains("adoptDeviceMemory", "overlaps", "'first'");
            }
            DevicePtr own = gpu.alloc(256); String site = here();
            for (long[] r : new long[][] {{own.address(), 256}, {own.address() + 8, 8}, {own.address() - 8, 16}}) {
                GpuException e = assertCuda(CudaError.INVALID_VALUE, () -> gpu.adoptDeviceMemory(r[0], r[1], "mine"));
                assertThat(e.getMessage()).contains("own memory", site);
            }
            assertCuda(CudaError.INVALID_VALUE, () -> gpu.adoptDeviceMemory(0, 16, "null"));
            assertThatThrownBy(() -> gpu.adoptDeviceMemory(raw, 0, "empty")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> gpu.adoptDeviceMemory(raw, 16, " ")).isInstanceOf(IllegalArgumentException.class);
            assertThat(gpu.adoptedMemory()).extracting(AdoptedMemory::label).containsExactly("first");
            GpuException inside = assertCuda(CudaError.INVALID_VALUE, () -> gpu.releaseAdoption(p.plus(16)));
            assertThat(inside.getMessage()).contains("not its start");
            gpu.free(own);
            gpu.releaseAdoption(p);
            f.free(raw);
        }
    }
}
