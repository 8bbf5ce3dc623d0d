// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.access;

import java.util.Objects;
import java.util.function.LongConsumer;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LiveResource;
import metrale.gpu.Stream;
import metrale.gpu.internal.GpuRuntime;

/**
 * The narrow door through which a friend module of this project ({@code metrale.gpu.nccl}) hands a
 * runtime's streams and memory to a native library: {@link Stream#handle()} is an opaque id of the
 * runtime, not a {@code CUstream}, and the driver is never handed out.
 *
 * <p>Who may call it is the module system's rule, not this class's: {@code metrale.gpu} exports
 * this package only to {@code metrale.gpu.nccl} (as {@code java.base} exports its
 * {@code jdk.internal} packages to named modules), so no other named module can compile against it
 * or link to it. On the class path, where module boundaries do not exist, every package is open to
 * every caller, as every other boundary is there. A {@link Gpu} that wraps a runtime and forwards
 * {@link Gpu#unwrap} (the test kit's) is accepted as the runtime it wraps.
 *
 * <p>A resource tracked through this door is named by its creator's caller, not by this class: the
 * call-site walk skips the core's {@code metrale.gpu.internal} packages.
 */
public final class RuntimeAccess {

    private RuntimeAccess() {
    }

    /**
     * Runs {@code body} with the driver's handle of {@code stream}: inside the runtime's gate (so
     * neither the stream nor the runtime can be destroyed meanwhile), with the runtime's context
     * current on the calling thread, after checking that each device range lies in live memory of
     * the runtime (as every copy is checked).
     *
     * @param gpu    a runtime from {@link Gpu#open}
     * @param stream a stream of {@code gpu}
     * @param call   the operation, for errors, e.g. {@code ncclAllReduce}
     * @param ranges pairs of (address, bytes); a pair with 0 bytes is not checked
     * @param body   receives the driver stream ({@code CUstream}, 0 for the legacy stream)
     * @throws metrale.gpu.GpuException {@code INVALID_VALUE} naming the range that is not live memory,
     *         or {@code INVALID_HANDLE} for a stream the runtime does not know
     */
    public static void onDriverStream(Gpu gpu, Stream stream, String call, long[] ranges, LongConsumer body) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(body, "body");
        runtime(gpu).onDriverStream(stream, call, ranges, body);
    }

    /**
     * {@return the pairs (address, bytes) for {@link #onDriverStream}}
     *
     * @param ptr   a pointer
     * @param bytes its length in bytes
     */
    public static long[] range(DevicePtr ptr, long bytes) {
        return new long[] {ptr.address(), bytes};
    }

    /**
     * Lists a resource a friend module made over {@code gpu} (a communicator) in the runtime's
     * {@link Gpu#liveResources()}, with the caller's site, until the returned handle is run.
     *
     * @param gpu    a runtime from {@link Gpu#open}
     * @param kind   what it is
     * @param handle its text, e.g. {@code rank 0 of 2 (simulated)}
     * @return what removes it from the list when run; idempotent, and a no-op once the runtime is closed
     * @throws IllegalStateException if the runtime is closed
     */
    public static Runnable track(Gpu gpu, LiveResource.Kind kind, String handle) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(handle, "handle");
        return runtime(gpu).track(kind, handle);
    }

    private static GpuRuntime runtime(Gpu gpu) {
        if (Objects.requireNonNull(gpu, "gpu") instanceof GpuRuntime r) {
            return r;
        }
        // A wrapper that forwards unwrap, as the test kit's runtime does, leads to the runtime it wraps.
        return gpu.unwrap(GpuRuntime.class).orElseThrow(() -> new IllegalArgumentException("gpu is a "
                + gpu.getClass().getName() + ", not a runtime from Gpu.open nor a wrapper that unwraps to one"));
    }
}
