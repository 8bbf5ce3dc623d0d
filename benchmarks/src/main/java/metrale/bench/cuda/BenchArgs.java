// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.KernelArgs;

/**
 * The arguments a launch benchmark gives a {@code bench.cu} kernel, and the device buffers they
 * point at: none for {@code empty}; for {@code axpy4} {@code (2.0f, x, y, 0)} over two 4 KiB
 * buffers, with n = 0 so the kernel touches no memory.
 *
 * @param gpu  the runtime that owns the buffers
 * @param args the argument table
 * @param x    {@code axpy4}'s x buffer, or {@code null}
 * @param y    {@code axpy4}'s y buffer, or {@code null}
 */
public record BenchArgs(Gpu gpu, KernelArgs args, DevicePtr x, DevicePtr y) implements AutoCloseable {

    /**
     * Builds the arguments of {@code kernel}, allocating its buffers on {@code gpu}.
     *
     * @param gpu    the runtime
     * @param kernel {@code empty} or {@code axpy4}
     * @return the arguments
     * @throws IllegalArgumentException for any other kernel
     */
    public static BenchArgs of(Gpu gpu, String kernel) {
        KernelArgs args = new KernelArgs();
        return switch (kernel) {
            case "empty" -> new BenchArgs(gpu, args, null, null);
            case "axpy4" -> {
                DevicePtr x = gpu.alloc(4096);
                DevicePtr y = gpu.alloc(4096);
                args.f32(2.0f).ptr(x).ptr(y).i32(0);
                yield new BenchArgs(gpu, args, x, y);
            }
            default -> {
                args.close();
                throw new IllegalArgumentException("kernel=" + kernel + ": expected empty or axpy4");
            }
        };
    }

    /** Frees the buffers and the argument table. */
    @Override
    public void close() {
        if (x != null) {
            gpu.free(x);
            gpu.free(y);
        }
        args.close();
    }
}
