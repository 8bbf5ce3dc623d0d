package metrale.gpu.spi;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;

/**
 * The raw device operations of one device context, one method per CUDA driver API call.
 *
 * <p><b>Errors.</b> Every method reports a non-success status as a {@link metrale.gpu.GpuException}
 * carrying the {@link CudaError} the CUDA driver would return, the driver function's name as its
 * operation (for example {@code cuMemAlloc_v2}) and the arguments. A driver never latches faults,
 * never logs and never keeps a ledger: the runtime core does.
 *
 * <p><b>Host memory.</b> Host segments passed in have been checked by the core: they are alive and
 * at least {@code bytes} long. Blocking copies may receive heap segments; async copies receive
 * native segments only.
 *
 * <p><b>Handles.</b> Device pointers, streams, events, graphs, modules and functions are
 * {@code long}s. Stream {@code 0} and {@code 1} are the legacy default stream, {@code 2} the
 * per-thread default stream.
 *
 * <p><b>Threads.</b> Every method may be called from any thread; a driver makes its context
 * current on the calling thread as needed.
 */
public interface Driver extends AutoCloseable {

    /** {@return the backend's name, {@code cuda} or {@code sim}} */
    String name();

    /** {@return the device's name, memory, SM count and compute capability} */
    DeviceInfo deviceInfo();

    /** Makes this driver's context current on the calling thread ({@code cuCtxSetCurrent}). */
    void bindToThread();

    // ---- memory ---------------------------------------------------------------------------

    /**
     * {@code cuMemAlloc_v2}: size 0 is {@code INVALID_VALUE}; too much is {@code OUT_OF_MEMORY}.
     *
     * @param bytes the size
     * @return the device address, 256-byte aligned
     */
    long memAlloc(long bytes);

    /**
     * {@code cuMemAllocManaged}.
     *
     * @param bytes the size
     * @param flags {@code CU_MEM_ATTACH_GLOBAL} (1) or {@code CU_MEM_ATTACH_HOST} (2)
     * @return the address, valid on host and device
     */
    long memAllocManaged(long bytes, int flags);

    /**
     * {@code cuMemFree_v2}: 0 is a no-op; interior, freed or unknown pointers are {@code INVALID_VALUE}.
     *
     * @param ptr a base pointer from {@link #memAlloc} or {@link #memAllocManaged}
     */
    void memFree(long ptr);

    /** {@return {@code cuMemGetInfo_v2}: free and total device memory} */
    MemInfo memGetInfo();

    /**
     * {@code cuMemHostAlloc}: page-locked host memory.
     *
     * @param bytes the size; 0 gives a {@code NULL} segment
     * @param flags {@code PORTABLE} 1, {@code DEVICEMAP} 2, {@code WRITECOMBINED} 4; other bits are {@code INVALID_VALUE}
     * @return the memory, exactly {@code bytes} long, valid until {@link #memFreeHost}
     */
    MemorySegment memHostAlloc(long bytes, int flags);

    /**
     * {@code cuMemFreeHost}: NULL is a no-op; anything but a base address from {@link #memHostAlloc} is {@code INVALID_VALUE}.
     *
     * @param host the segment {@link #memHostAlloc} returned
     */
    void memFreeHost(MemorySegment host);

    /**
     * {@code cuMemHostGetDevicePointer_v2}: under unified addressing the device pointer equals the host pointer.
     *
     * @param host page-locked memory from {@link #memHostAlloc}, or a slice of it
     * @return the device address of its first byte
     */
    long memHostGetDevicePointer(MemorySegment host);

    // ---- copies and memset ----------------------------------------------------------------

    /**
     * {@code cuMemcpyHtoD_v2}: blocking, on the legacy default stream.
     *
     * @param dst   device address
     * @param src   host memory, at least {@code bytes} long
     * @param bytes the count; 0 is a no-op
     */
    void memcpyHtoD(long dst, MemorySegment src, long bytes);

    /**
     * {@code cuMemcpyDtoH_v2}: blocking, on the legacy default stream.
     *
     * @param dst   host memory, at least {@code bytes} long
     * @param src   device address
     * @param bytes the count
     */
    void memcpyDtoH(MemorySegment dst, long src, long bytes);

    /**
     * {@code cuMemcpyDtoD_v2}: ordered on the legacy default stream, no host synchronization.
     *
     * @param dst   device address
     * @param src   device address
     * @param bytes the count
     */
    void memcpyDtoD(long dst, long src, long bytes);

    /**
     * {@code cuMemcpyHtoDAsync_v2}: the source is read when the copy executes.
     *
     * @param dst    device address
     * @param src    native host memory
     * @param bytes  the count
     * @param stream the stream
     */
    void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream);

    /**
     * {@code cuMemcpyDtoHAsync_v2}: the destination is written when the copy executes.
     *
     * @param dst    native host memory
     * @param src    device address
     * @param bytes  the count
     * @param stream the stream
     */
    void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream);

    /**
     * {@code cuMemcpyDtoDAsync_v2}.
     *
     * @param dst    device address
     * @param src    device address
     * @param bytes  the count
     * @param stream the stream
     */
    void memcpyDtoDAsync(long dst, long src, long bytes, long stream);

    /**
     * {@code cuMemcpy2DAsync_v2}, device to device: rows of {@code widthBytes} from
     * {@code src + row * srcPitch} to {@code dst + row * dstPitch}. A pitch below the width is
     * {@code INVALID_VALUE}; a width or height of 0 is a no-op.
     *
     * @param dst        destination base
     * @param dstPitch   destination row pitch in bytes
     * @param src        source base
     * @param srcPitch   source row pitch in bytes
     * @param widthBytes bytes per row
     * @param height     rows
     * @param stream     the stream
     */
    void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height, long stream);

    /**
     * {@code cuMemsetD8_v2}: no host synchronization.
     *
     * @param ptr   device address
     * @param value the byte, 0 to 255
     * @param bytes the count
     */
    void memsetD8(long ptr, int value, long bytes);

    /**
     * {@code cuMemsetD8Async}.
     *
     * @param ptr    device address
     * @param value  the byte, 0 to 255
     * @param bytes  the count
     * @param stream the stream
     */
    void memsetD8Async(long ptr, int value, long bytes, long stream);

    // ---- streams, events, context ------------------------------------------------------------

    /**
     * {@code cuStreamCreate}.
     *
     * @param flags 0 (blocking) or 1 ({@code CU_STREAM_NON_BLOCKING}); anything else is {@code INVALID_VALUE}
     * @return the stream
     */
    long streamCreate(int flags);

    /**
     * {@code cuStreamDestroy_v2}: returns at once; pending work still completes. NULL is {@code INVALID_HANDLE}.
     *
     * @param stream the stream
     */
    void streamDestroy(long stream);

    /**
     * {@code cuStreamSynchronize}: blocks until the stream's work is done; reports sticky errors.
     *
     * @param stream the stream
     */
    void streamSynchronize(long stream);

    /**
     * {@code cuStreamQuery}.
     *
     * @param stream the stream
     * @return {@code true} when all its work is done, {@code false} for {@code NOT_READY}
     */
    boolean streamQuery(long stream);

    /** {@code cuCtxSynchronize}: blocks until all work of the context is done. */
    void ctxSynchronize();

    /**
     * {@code cuEventCreate}.
     *
     * @param flags {@code BLOCKING_SYNC} 1, {@code DISABLE_TIMING} 2, {@code INTERPROCESS} 4 (requires 2)
     * @return the event
     */
    long eventCreate(int flags);

    /**
     * {@code cuEventRecord}: re-recording overwrites.
     *
     * @param event  the event
     * @param stream the stream
     */
    void eventRecord(long event, long stream);

    /**
     * {@code cuStreamWaitEvent}: later work on {@code stream} waits for the event's work; a never-recorded event is a no-op.
     *
     * @param stream the waiting stream
     * @param event  the event
     * @param flags  0, or {@code CU_EVENT_WAIT_EXTERNAL} (1) inside a capture
     */
    void streamWaitEvent(long stream, long event, int flags);

    /**
     * {@code cuEventSynchronize}: a never-recorded event returns at once.
     *
     * @param event the event
     */
    void eventSynchronize(long event);

    /**
     * {@code cuEventQuery}.
     *
     * @param event the event
     * @return {@code true} when the work before its record is done, {@code false} for {@code NOT_READY}
     */
    boolean eventQuery(long event);

    /**
     * {@code cuEventElapsedTime}: unrecorded or {@code DISABLE_TIMING} events are {@code INVALID_HANDLE}, incomplete ones {@code NOT_READY}.
     *
     * @param start the start event
     * @param end   the end event
     * @return milliseconds from start to end; negative when reversed
     */
    float eventElapsedTime(long start, long end);

    /**
     * {@code cuEventDestroy_v2}: does not block.
     *
     * @param event the event
     */
    void eventDestroy(long event);

    // ---- capture and graphs -----------------------------------------------------------------

    /** {@return whether {@link #streamIsCapturing} is backed by the driver; {@code false} under drivers that lack {@code cuStreamIsCapturing} (SCALE)} */
    boolean supportsCaptureQuery();

    /**
     * {@code cuStreamBeginCapture_v2}: the legacy stream is {@code STREAM_CAPTURE_UNSUPPORTED}, a second begin {@code ILLEGAL_STATE}.
     *
     * @param stream the stream
     * @param mode   {@code CUstreamCaptureMode}: 0 global, 1 thread-local, 2 relaxed
     */
    void streamBeginCapture(long stream, int mode);

    /**
     * {@code cuStreamEndCapture}: an invalidated capture is {@code STREAM_CAPTURE_INVALIDATED}
     * and the stream goes back to not capturing; a stream not capturing is {@code ILLEGAL_STATE}.
     *
     * @param stream the stream
     * @return the captured graph ({@code CUgraph})
     */
    long streamEndCapture(long stream);

    /**
     * {@code cuStreamIsCapturing}.
     *
     * @param stream the stream
     * @return 0 none, 1 active, 2 invalidated
     */
    int streamIsCapturing(long stream);

    /**
     * {@code cuGraphInstantiateWithFlags(exec, graph, 0)}.
     *
     * @param graph the graph
     * @return the executable graph ({@code CUgraphExec})
     */
    long graphInstantiate(long graph);

    /**
     * {@code cuGraphLaunch}: ordered after earlier work on {@code stream} and earlier launches of the same exec.
     *
     * @param exec   the executable graph
     * @param stream the stream
     */
    void graphLaunch(long exec, long stream);

    /**
     * {@code cuGraphExecDestroy}: a running exec still completes.
     *
     * @param exec the executable graph
     */
    void graphExecDestroy(long exec);

    /**
     * {@code cuGraphDestroy}: execs made from it stay usable.
     *
     * @param graph the graph
     */
    void graphDestroy(long graph);

    // ---- modules and launches -----------------------------------------------------------------

    /**
     * {@code cuModuleLoadData}: PTX, cubin or fatbin. A garbage image is {@code INVALID_IMAGE}, bad PTX {@code INVALID_PTX}.
     * The simulator binds the module by {@code name} to the {@code SimKernel}s registered for it.
     *
     * @param name  the module's name, as {@code Gpu.kernel(module, func)} will ask for it
     * @param image the image bytes (PTX text need not be NUL-terminated)
     * @return the module ({@code CUmodule})
     */
    long moduleLoadData(String name, byte[] image);

    /**
     * {@code cuModuleUnload}.
     *
     * @param module the module
     */
    void moduleUnload(long module);

    /**
     * {@code cuModuleGetFunction}: an unknown name is {@code NOT_FOUND}, an unloaded module {@code INVALID_HANDLE}.
     *
     * @param module the module
     * @param func   the function's (mangled) name
     * @return the function ({@code CUfunction}), never 0
     */
    long moduleGetFunction(long module, String func);

    /**
     * {@code cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)}: the opt-in above 48 KiB of dynamic shared memory.
     *
     * @param func  the function
     * @param bytes the opt-in; above the device's limit is {@code INVALID_VALUE}
     */
    void funcSetMaxDynamicSharedMemory(long func, int bytes);

    /**
     * {@code cuLaunchKernel} with {@code kernelParams = args.table()}: asynchronous; checks the
     * configuration as CUDA does. On a capturing stream the launch is recorded, not run. The
     * argument values are copied before this returns.
     *
     * @param func   the function
     * @param config grid, block and dynamic shared memory
     * @param stream the stream
     * @param args   the arguments
     */
    void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args);

    /**
     * Compiles CUDA C source to PTX at run time (NVRTC).
     *
     * @param name    the program's name, used in the log
     * @param source  CUDA C source
     * @param options compiler options, e.g. {@code --gpu-architecture=compute_90}
     * @return the PTX, NUL-free
     * @throws metrale.gpu.GpuException with {@code NOT_SUPPORTED} where the backend cannot compile,
     *         or {@code INVALID_SOURCE} holding the compiler log when compilation fails
     */
    byte[] compileToPtx(String name, String source, String... options);

    // ---- faults and teardown ------------------------------------------------------------------

    /**
     * Probes the context after a failed call, without waiting for work.
     *
     * @return the sticky error the context is in, or {@link CudaError#SUCCESS} when it is healthy
     */
    CudaError probe();

    /**
     * {@return the backend's controls for applications, if it has controls of the given type}
     * {@code Gpu.unwrap} answers with this, never with the driver itself, so an application cannot
     * allocate or free behind the runtime's ledger. The default has none.
     *
     * @param type the controls' type, for example {@code metrale.gpu.sim.SimControls}
     * @param <T>  the type
     */
    default <T> Optional<T> controls(Class<T> type) {
        return Optional.empty();
    }

    /**
     * Releases the context. Idempotent; never throws. Memory still allocated is released with it.
     */
    @Override
    void close();
}
