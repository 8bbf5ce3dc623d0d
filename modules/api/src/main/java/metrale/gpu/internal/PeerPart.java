// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.Objects;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;

/**
 * The rules between two runtimes of one backend: a peer is checked before any driver sees it, and
 * each side's handles and ranges are checked against that side's own tables. Each method runs
 * inside both runtimes' gate frames (one, when the peer is this runtime).
 */
final class PeerPart {

    private final Core c;

    PeerPart(Core c) {
        this.c = c;
    }

    /**
     * {@return the core of {@code peer}, a runtime of this backend} Another implementation of
     * {@link Gpu}, a closed runtime or one of another backend is refused before any driver sees it.
     */
    Core peer(Gpu peer, String op, String param, boolean selfAllowed) {
        Objects.requireNonNull(peer, param);
        if (!(peer instanceof GpuRuntime rt)) {
            throw new IllegalArgumentException(op + ": " + param + " is a " + peer.getClass().getName()
                    + ", not a runtime from Gpu.open");
        }
        Core other = rt.core();
        if (other.gate().isClosed()) {
            throw new IllegalArgumentException(op + ": " + param + " is closed");
        }
        String name = c.driver().name();
        if (!other.driver().name().equals(name)) {
            throw new IllegalArgumentException(op + ": " + param + " is a " + other.driver().name()
                    + " runtime and this one is " + name + "; devices of two backends cannot share memory");
        }
        if (!selfAllowed && other.driver().ordinal() == c.driver().ordinal()) {
            throw new IllegalArgumentException(op + ": " + param + " is on device " + c.driver().ordinal()
                    + ", this runtime's own device; peer access is between two devices");
        }
        return other;
    }

    boolean canAccessPeer(Core other) {
        return c.get(() -> other.driver().ordinal() != c.driver().ordinal() && c.driver().canAccessPeer(other.driver()),
                () -> "canAccessPeer device " + other.driver().ordinal());
    }

    void enablePeerAccess(Core other) {
        try {
            c.driver().enablePeerAccess(other.driver());
        } catch (GpuException e) {
            // CUDA reports a repeated enable as an error; for this API it is a no-op.
            if (e.error() != CudaError.PEER_ACCESS_ALREADY_ENABLED) {
                throw c.fail(e, "enablePeerAccess device " + c.driver().ordinal() + " -> " + other.driver().ordinal());
            }
        }
    }

    /** A copy to {@code other}'s memory, blocking when {@code stream} is null; each range checked by its own runtime. */
    void copy(DevicePtr src, Core other, DevicePtr dst, long bytes, Stream stream, String op) {
        long s = Checks.ptr(src, "src");
        long d = Checks.ptr(dst, "dst");
        Checks.size(bytes, "bytes", op);
        c.checkRange(s, bytes, op, "src");
        other.checkRange(d, bytes, op, "dst (on device " + other.driver().ordinal() + ")");
        long st = stream == null ? 0 : c.liveStream(stream, op);
        if (bytes == 0) {
            return;
        }
        var jfr = Jfr.beginCopy();
        try {
            if (stream == null) {
                c.driver().memcpyPeer(d, other.driver(), s, bytes);
            } else {
                c.driver().memcpyPeerAsync(d, other.driver(), s, bytes, st);
            }
        } catch (GpuException e) {
            throw c.fail(e, op + " " + bytes + " B " + src + " -> device " + other.driver().ordinal() + " " + dst
                    + (stream == null ? "" : " on " + stream));
        }
        c.d2dDone(s, d, bytes);
        Jfr.copy(jfr, "P2P", bytes, stream != null, st);
    }

    /** Makes {@code stream} of this runtime wait for {@code event} of {@code other}. */
    void streamWaitEvent(Stream stream, Core other, Event event) {
        long s = c.liveStream(stream, "streamWaitEvent");
        long ev = other.liveEvent(event, "event", "streamWaitEvent");
        c.run(() -> c.driver().streamWaitPeerEvent(s, other.driver(), ev),
                () -> "streamWaitEvent " + stream + " on " + event + " of device " + other.driver().ordinal());
    }
}
