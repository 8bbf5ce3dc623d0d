// SPDX-License-Identifier: Apache-2.0
package com.example.pipeline;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceBuffer;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;

/**
 * Computes {@code out = a * x + y} on the device in two stages on two streams: the first stream
 * scales {@code x}, the second waits for it (an event) and adds {@code y}. When the device cannot
 * hold all three arrays at once it works through them in chunks of {@link #CHUNK} elements.
 *
 * <p>Not thread-safe; close it before the runtime.
 */
public final class ScaleAddPipeline implements AutoCloseable {

    /** The module name the kernels are loaded under. */
    public static final String MODULE = "pipeline";
    /** Elements per chunk when the whole arrays do not fit. */
    public static final int CHUNK = 1024;
    /** Threads per block of both kernels. */
    public static final int BLOCK = 256;

    /**
     * What a run computed.
     *
     * @param out    {@code a * x + y}
     * @param chunks how many pieces the work was done in: 1 unless the device ran out of memory
     */
    public record Result(float[] out, int chunks) {
    }

    private final Gpu gpu;
    private final Stream scaleStream;
    private final Stream addStream;
    private final Event scaled;
    private final KernelArgs args = new KernelArgs();

    /**
     * Loads the kernels and makes the streams.
     *
     * @param gpu the runtime; on the simulator the twins of {@code scale} and {@code add} must be registered
     */
    public ScaleAddPipeline(Gpu gpu) {
        this.gpu = gpu;
        gpu.loadModule(MODULE, ptx());
        this.scaleStream = gpu.createStream();
        this.addStream = gpu.createStream();
        this.scaled = gpu.createEvent();
    }

    /** {@return the PTX of {@code pipeline.cu}} */
    public static byte[] ptx() {
        try (InputStream in = ScaleAddPipeline.class.getResourceAsStream("pipeline.ptx")) {
            if (in == null) {
                throw new UncheckedIOException(new IOException("resource com/example/pipeline/pipeline.ptx is missing"));
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Computes {@code a * x + y}.
     *
     * @param x the values to scale
     * @param y the values to add, as many as {@code x}
     * @param a the factor
     * @return the result and how many chunks it took
     */
    public Result run(float[] x, float[] y, float a) {
        if (x.length != y.length) {
            throw new IllegalArgumentException("x has " + x.length + " values, y has " + y.length);
        }
        float[] out = new float[x.length];
        if (x.length == 0) {
            return new Result(out, 0);
        }
        try {
            runChunk(x, y, a, out, 0, x.length);
            return new Result(out, 1);
        } catch (GpuException e) {
            if (e.error() != CudaError.OUT_OF_MEMORY) {
                throw e;
            }
        }
        // The recovery path: three CHUNK-sized buffers at a time.
        int chunks = 0;
        for (int from = 0; from < x.length; from += CHUNK) {
            runChunk(x, y, a, out, from, Math.min(CHUNK, x.length - from));
            chunks++;
        }
        return new Result(out, chunks);
    }

    private void runChunk(float[] x, float[] y, float a, float[] out, int from, int n) {
        long bytes = 4L * n;
        try (DeviceBuffer dx = gpu.allocBuffer(bytes);
             DeviceBuffer dy = gpu.allocBuffer(bytes);
             DeviceBuffer dout = gpu.allocBuffer(bytes)) {
            dx.copyFrom(slice(x, from, n));
            dy.copyFrom(slice(y, from, n));
            KernelHandle scale = gpu.kernel(MODULE, "scale");
            KernelHandle add = gpu.kernel(MODULE, "add");
            LaunchConfig shape = LaunchConfig.forElements(n, BLOCK);
            gpu.launch(scale, shape, scaleStream, args.clear().ptr(dx.ptr()).f32(a).i32(n));
            gpu.recordEvent(scaled, scaleStream);
            // Without this wait the add may read x before it is scaled.
            gpu.streamWaitEvent(addStream, scaled);
            gpu.launch(add, shape, addStream, args.clear().ptr(dx.ptr()).ptr(dy.ptr()).ptr(dout.ptr()).i32(n));
            gpu.synchronize(addStream);
            float[] part = new float[n];
            dout.copyTo(part);
            System.arraycopy(part, 0, out, from, n);
        }
    }

    private static float[] slice(float[] a, int from, int n) {
        if (from == 0 && n == a.length) {
            return a;
        }
        float[] s = new float[n];
        System.arraycopy(a, from, s, 0, n);
        return s;
    }

    /** Destroys the streams and the event; the runtime stays open. */
    @Override
    public void close() {
        args.close();
        gpu.destroyEvent(scaled);
        gpu.destroyStream(scaleStream);
        gpu.destroyStream(addStream);
    }
}
