// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static metrale.gpu.cuda.internal.CudaLib.check;
import static metrale.gpu.cuda.internal.CudaLib.outLong;

import java.lang.foreign.MemorySegment;
import metrale.gpu.CudaError;

/** Contexts: the primary context of a device, the current context of a thread, peer access. */
final class CuCtx {

    private CuCtx() {
    }

    /** {@return the device's primary context, retained; not made current} */
    static long primaryRetain(int device) {
        return outLong(out -> LibCuda.cuDevicePrimaryCtxRetain(out, device), "cuDevicePrimaryCtxRetain", "dev=%d", device);
    }

    /**
     * Releases a retain of the primary context; the last one destroys the context and everything
     * allocated in it.
     *
     * @param device the device
     * @return {@link CudaError#SUCCESS}, or the failure; never throws, for close paths
     */
    static CudaError primaryRelease(int device) {
        return CudaError.of(LibCuda.cuDevicePrimaryCtxRelease_v2(device));
    }

    /** Called before every context call: on the H200 it costs about as much as a JNI-free downcall. */
    static void setCurrent(long ctx) {
        check(LibCuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "ctx=%#x", ctx);
    }

    /** {@return the calling thread's current context, 0 when none}; {@code out} is 8 bytes of the caller's */
    static long getCurrent(MemorySegment out) {
        check(LibCuda.cuCtxGetCurrent(out), "cuCtxGetCurrent", "");
        return out.get(JAVA_LONG, 0);
    }

    static void synchronize() {
        check(LibCuda.cuCtxSynchronize(), "cuCtxSynchronize", "");
    }

    /** Lets the current context access {@code peerCtx}'s memory. */
    static void enablePeerAccess(long peerCtx) {
        check(LibCuda.cuCtxEnablePeerAccess(peerCtx, 0), "cuCtxEnablePeerAccess", "peerContext=%#x, Flags=0", peerCtx);
    }
}
