// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

import java.util.Objects;
import java.util.function.LongConsumer;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.LiveResource;
import metrale.gpu.Stream;
import metrale.gpu.internal.GpuRuntime;
import metrale.telemetry.CallSites;

/**
 * The narrow door through which a trusted module of this project (today {@code metrale.gpu.nccl})
 * hands a runtime's streams and memory to a native library: {@link Stream#handle()} is an opaque
 * id of the runtime, not a {@code CUstream}, and the driver is never handed out.
 *
 * <p>Only code in a module named {@code metrale.gpu.*} may call it; a call from any other named
 * module is refused with {@link SecurityException}. On the class path (where module boundaries do
 * not exist) every caller is in the unnamed module and is let through, as every other boundary is
 * open there too. A {@link Gpu} that wraps a runtime and forwards {@link Gpu#unwrap} (the test
 * kit's) is accepted as the runtime it wraps.
 */
public final class TrustedAccess {

    static {
        // A resource tracked through this door is named by its creator's caller, not by this class.
        CallSites.skip(TrustedAccess.class.getName());
    }

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    private TrustedAccess() {
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
     * @throws SecurityException if the caller is in a named module outside {@code metrale.gpu.*}
     * @throws metrale.gpu.GpuException {@code INVALID_VALUE} naming the range that is not live memory,
     *         or {@code INVALID_HANDLE} for a stream the runtime does not know
     */
    public static void onDriverStream(Gpu gpu, Stream stream, String call, long[] ranges, LongConsumer body) {
        checkCaller();
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
     * Lists a resource a trusted module made over {@code gpu} (a communicator) in the runtime's
     * {@link Gpu#liveResources()}, with the caller's site, until the returned handle is closed.
     *
     * @param gpu    a runtime from {@link Gpu#open}
     * @param kind   what it is
     * @param handle its text, e.g. {@code rank 0 of 2 (simulated)}
     * @return what removes it from the list when run; idempotent, and a no-op once the runtime is closed
     * @throws SecurityException if the caller is in a named module outside {@code metrale.gpu.*}
     * @throws IllegalStateException if the runtime is closed
     */
    public static Runnable track(Gpu gpu, LiveResource.Kind kind, String handle) {
        checkCaller();
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

    private static void checkCaller() {
        Class<?> caller = WALKER.walk(s -> s.skip(2).findFirst()).map(StackWalker.StackFrame::getDeclaringClass)
                .orElse(TrustedAccess.class);
        Module m = caller.getModule();
        if (m.isNamed() && !m.getName().startsWith("metrale.gpu.")) {
            throw new SecurityException("TrustedAccess is for the modules of metrale-gpu, not " + m.getName());
        }
    }
}
