// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * The CUDA driver's {@code CUresult} values that this runtime reports, shared by every backend so
 * the simulator reports the same codes as the GPU.
 *
 * <p>{@link #name()} drops the {@code CUDA_ERROR_} prefix; {@link #cudaName()} is the driver's own
 * name and {@link #code()} its number. A code the driver returns that is not listed here maps to
 * {@link #UNKNOWN}; {@link GpuException#rawCode()} still carries the number.
 */
public enum CudaError {
    /** 0: done; for a query, the work is complete. */
    SUCCESS(0, "CUDA_SUCCESS", "no error"),
    /** 1: a bad parameter. */
    INVALID_VALUE(1, "invalid argument"),
    /** 2: an allocation failed. */
    OUT_OF_MEMORY(2, "out of memory"),
    /** 3: {@code cuInit} has not been called. */
    NOT_INITIALIZED(3, "initialization error"),
    /** 4: the driver is shutting down. */
    DEINITIALIZED(4, "driver shutting down"),
    /** 34: the stub library was loaded instead of the real driver. */
    STUB_LIBRARY(34, "CUDA driver is a stub library"),
    /** 35: the driver is older than the runtime needs. */
    INSUFFICIENT_DRIVER(35, "CUDA driver version is insufficient for CUDA runtime version"),
    /** 100: no CUDA-capable device. */
    NO_DEVICE(100, "no CUDA-capable device is detected"),
    /** 101: an invalid device ordinal. */
    INVALID_DEVICE(101, "invalid device ordinal"),
    /** 200: a bad module image. */
    INVALID_IMAGE(200, "device kernel image is invalid"),
    /** 201: no current or valid context. */
    INVALID_CONTEXT(201, "invalid device context"),
    /** 209: no kernel image for this device. */
    NO_BINARY_FOR_GPU(209, "no kernel image is available for execution on the device"),
    /** 217: the devices cannot access each other's memory directly. */
    PEER_ACCESS_UNSUPPORTED(217, "peer access is not supported between these two devices"),
    /** 218: the PTX JIT failed. */
    INVALID_PTX(218, "a PTX JIT compilation failed"),
    /** 222: the PTX was built for a newer toolchain. */
    UNSUPPORTED_PTX_VERSION(222, "the provided PTX was compiled with an unsupported toolchain"),
    /** 300: an invalid source. */
    INVALID_SOURCE(300, "device kernel image is invalid"),
    /** 301: a file was not found. */
    FILE_NOT_FOUND(301, "file not found"),
    /** 400: a bad stream, event, function or module handle. */
    INVALID_HANDLE(400, "invalid resource handle"),
    /** 401: an object is in the wrong state for the call. */
    ILLEGAL_STATE(401, "the operation cannot be performed in the present state"),
    /** 500: an unknown symbol. */
    NOT_FOUND(500, "named symbol not found"),
    /** 600: work is incomplete; not a failure. */
    NOT_READY(600, "device not ready"),
    /** 700: a bad load or store in a kernel; sticky. */
    ILLEGAL_ADDRESS(700, "an illegal memory access was encountered"),
    /** 701: too many resources requested, or wrong-size arguments. */
    LAUNCH_OUT_OF_RESOURCES(701, "too many resources requested for launch"),
    /** 702: the watchdog stopped a kernel; sticky. */
    LAUNCH_TIMEOUT(702, "the launch timed out and was terminated"),
    /** 704: {@code cuCtxEnablePeerAccess} for a peer whose access is already enabled. */
    PEER_ACCESS_ALREADY_ENABLED(704, "peer access is already enabled"),
    /** 705: peer access was not enabled for the peer context. */
    PEER_ACCESS_NOT_ENABLED(705, "peer access has not been enabled"),
    /** 709: the context is destroyed, or the primary context is not initialized. */
    CONTEXT_IS_DESTROYED(709, "context is destroyed"),
    /** 710: a device-side assert; the context is unusable. */
    ASSERT(710, "device-side assert triggered"),
    /** 714: a hardware stack error; sticky. */
    HARDWARE_STACK_ERROR(714, "an illegal memory access was encountered"),
    /** 715: an illegal instruction; sticky. */
    ILLEGAL_INSTRUCTION(715, "an illegal instruction was encountered"),
    /** 716: a misaligned address; sticky. */
    MISALIGNED_ADDRESS(716, "misaligned address"),
    /** 717: an invalid address space; sticky. */
    INVALID_ADDRESS_SPACE(717, "operation not supported on global/shared address space"),
    /** 718: an invalid program counter; sticky. */
    INVALID_PC(718, "invalid program counter"),
    /** 719: a device exception such as a trap; sticky. */
    LAUNCH_FAILED(719, "unspecified launch failure"),
    /** 801: the operation is not supported. */
    NOT_SUPPORTED(801, "operation not supported"),
    /** 900: not allowed while a stream is capturing. */
    STREAM_CAPTURE_UNSUPPORTED(900, "operation not permitted when stream is capturing"),
    /** 901: the capture was invalidated earlier. */
    STREAM_CAPTURE_INVALIDATED(901, "operation failed due to a previous error during capture"),
    /** 902: the call would merge two captures. */
    STREAM_CAPTURE_MERGE(902, "operation would result in a merge of separate capture sequences"),
    /** 903: the capture was not started on this stream. */
    STREAM_CAPTURE_UNMATCHED(903, "capture was not ended in the same stream as it began"),
    /** 904: a forked stream was not joined back. */
    STREAM_CAPTURE_UNJOINED(904, "capturing stream has unjoined work"),
    /** 905: a dependency crosses the capture boundary. */
    STREAM_CAPTURE_ISOLATION(905, "dependency created on uncaptured work in another stream"),
    /** 906: an implicit dependency through the legacy stream. */
    STREAM_CAPTURE_IMPLICIT(906, "operation would make the legacy stream depend on a capturing blocking stream"),
    /** 907: an event recorded inside a capture was queried or synchronized. */
    CAPTURED_EVENT(907, "operation not permitted on an event last recorded in a capturing stream"),
    /** 908: a non-RELAXED capture was ended by another thread. */
    STREAM_CAPTURE_WRONG_THREAD(908, "attempt to terminate a thread-local capture sequence from another thread"),
    /** 910: {@code cuGraphExecUpdate} refused the update; its result code says why. */
    GRAPH_EXEC_UPDATE_FAILURE(910, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"),
    /** 911: an external device fault; sticky. */
    EXTERNAL_DEVICE(911, "an error occurred on an external device"),
    /** 999: an unknown error, or a code this enum does not list. */
    UNKNOWN(999, "unknown error");

    private static final CudaError[] SMALL = new CudaError[1000];

    static {
        for (CudaError e : values()) {
            SMALL[e.code] = e;
        }
    }

    private final int code;
    private final String cudaName;
    private final String description;

    CudaError(int code, String description) {
        this.code = code;
        this.cudaName = "CUDA_ERROR_" + name();
        this.description = description;
    }

    CudaError(int code, String cudaName, String description) {
        this.code = code;
        this.cudaName = cudaName;
        this.description = description;
    }

    /** {@return the {@code CUresult} number} */
    public int code() {
        return code;
    }

    /** {@return the driver's name, e.g. {@code CUDA_ERROR_INVALID_VALUE}} */
    public String cudaName() {
        return cudaName;
    }

    /** {@return the driver's description, as {@code cuGetErrorString} gives it} */
    public String description() {
        return description;
    }

    /**
     * {@return whether this error leaves the context unusable: every later call fails with it}
     * These are 700, 702, 710, 714 to 719 and 911 (CUDA_SEMANTICS.md section 4).
     */
    public boolean isSticky() {
        return switch (this) {
            case ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, ASSERT, HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION,
                 MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED, EXTERNAL_DEVICE -> true;
            default -> false;
        };
    }

    /**
     * {@return whether this status means the context is already gone, which a free or destroy
     * during teardown does not treat as an error: 4, 201 and 709}
     */
    public boolean isTeardown() {
        return this == DEINITIALIZED || this == INVALID_CONTEXT || this == CONTEXT_IS_DESTROYED;
    }

    /**
     * {@return the error with this {@code CUresult} number, or {@link #UNKNOWN}}
     *
     * @param code a {@code CUresult}
     */
    public static CudaError of(int code) {
        CudaError e = code >= 0 && code < SMALL.length ? SMALL[code] : null;
        return e == null ? UNKNOWN : e;
    }

    /** {@return {@code NAME (code)}, e.g. {@code CUDA_ERROR_INVALID_VALUE (1)}} */
    @Override
    public String toString() {
        return cudaName + " (" + code + ")";
    }
}
