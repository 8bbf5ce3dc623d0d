// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.Objects;
import metrale.gpu.CaptureMode;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.LiveResource;
import metrale.gpu.Stream;

/**
 * The rules of stream capture and graphs: the pool told when a capture begins and ends (also
 * when a failed end ended it), a failed capture query counted as capturing, and a graph destroyed
 * only after the launches that found it live. Each method runs inside the caller's gate frame.
 */
final class GraphPart {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    private final Core c;

    GraphPart(Core c) {
        this.c = c;
    }

    void beginCapture(Stream stream, CaptureMode mode) {
        long s = c.liveStream(stream, "beginCapture");
        Objects.requireNonNull(mode, "mode");
        // No staging buffer is allocated (a potentially unsafe call) between the begin and its registration.
        synchronized (c.staging().allocationLock()) {
            c.run(() -> c.driver().streamBeginCapture(s, mode.code()), () -> "beginCapture " + stream + " " + mode);
            c.pool().captureBegan(s, stream.toString(), mode.code());
        }
    }

    GraphHandle endCapture(Stream stream) {
        long s = c.liveStream(stream, "endCapture");
        return c.instantiate(c.endCapture(s, stream), stream);
    }

    void abortCaptureIfActive(Stream stream) {
        long s = c.liveStream(stream, "abortCaptureIfActive");
        if (!isCapturing(s, "abortCaptureIfActive")) {
            return;
        }
        c.pool().captureEnded(s);
        try {
            long graph = c.driver().streamEndCapture(s);
            if (graph != 0) {
                c.driver().graphDestroy(graph);
            }
        } catch (GpuException e) {
            // Capture errors are what this call exists to swallow; a sticky one is still latched.
            c.fail(e, "abortCaptureIfActive " + stream);
            LOG.log(System.Logger.Level.DEBUG, "metrale-gpu: abortCaptureIfActive " + stream + ": " + e.getMessage());
        }
    }

    boolean streamIsCapturing(Stream stream) {
        return isCapturing(c.liveStream(stream, "streamIsCapturing"), "streamIsCapturing");
    }

    /** False under a driver without the query; a failed query counts as capturing (its fault is still latched). */
    private boolean isCapturing(long s, String call) {
        if (!c.driver().supportsCaptureQuery()) {
            return false;
        }
        try {
            return c.driver().streamIsCapturing(s) != 0;
        } catch (GpuException e) {
            c.fail(e, call + " " + new Stream(s));
            return true;
        }
    }

    CaptureStatus captureStatus(Stream stream) {
        long s = c.liveStream(stream, "captureStatus");
        if (!c.driver().supportsCaptureQuery()) {
            throw new GpuException(CudaError.NOT_SUPPORTED, "captureStatus",
                    "the " + c.driver().name() + " driver has no cuStreamIsCapturing");
        }
        return CaptureStatus.of(c.get(() -> c.driver().streamIsCapturing(s), () -> "captureStatus " + stream));
    }

    void launchGraph(GraphHandle graph, Stream stream) {
        long id = Objects.requireNonNull(graph, "graph").handle();
        long s = c.liveStream(stream, "launchGraph");
        HandleTable.Slot g = c.graphs().get(id);
        if (g == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "launchGraph",
                    graph + " was not made by this runtime's endCapture or is already destroyed");
        }
        var jfr = Jfr.beginGraphLaunch();
        // Not through Core.run: a lambda per launch would allocate.
        try {
            c.driver().graphLaunch(g.raw(), s);
        } catch (GpuException e) {
            throw c.fail(e, "launchGraph " + graph + " on " + stream);
        }
        Jfr.graphLaunch(jfr, id, stream.handle());
    }

    /** Inside a releaser's frame: a launch that found the graph live finishes its cuGraphLaunch first. */
    void destroyGraph(GraphHandle graph) {
        long id = Objects.requireNonNull(graph, "graph").handle();
        HandleTable.Slot g = c.graphs().remove(id);
        if (g == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "destroyGraph",
                    graph + " was not made by this runtime's endCapture or is already destroyed");
        }
        c.resources().gone(LiveResource.Kind.GRAPH, id);
        c.gate().awaitGrace();
        GpuException first = null;
        try {
            c.driver().graphExecDestroy(g.raw());
        } catch (GpuException e) {
            first = e.error().isTeardown() ? null : e;
        }
        try {
            c.driver().graphDestroy((Long) g.extra());
        } catch (GpuException e) {
            if (first == null && !e.error().isTeardown()) {
                first = e;
            }
        }
        if (first != null) {
            throw c.fail(first, "destroyGraph " + graph);
        }
    }
}
