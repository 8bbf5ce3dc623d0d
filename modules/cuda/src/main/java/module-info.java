// SPDX-License-Identifier: Apache-2.0
/**
 * The CUDA backend of metrale-gpu: a {@code java.lang.foreign} binding of the NVIDIA CUDA driver
 * API ({@code libcuda}) and, optionally, NVRTC, behind the driver SPI of {@code metrale.gpu}.
 * Applications never {@code requires} it: put it on the module path and
 * {@code metrale.gpu.Gpu.open()} finds it through {@link java.util.ServiceLoader}. It exports
 * nothing; the binding lives in the non-exported {@code metrale.gpu.cuda.internal}.
 *
 * <p><b>Flags.</b> {@code --enable-native-access=metrale.gpu.cuda} ({@code ALL-UNNAMED} on the
 * class path). Without it the backend reports itself unavailable, naming the flag.
 *
 * <p><b>Properties.</b>
 * <ul>
 * <li>{@systemProperty metrale.cuda.library}: the driver library; default {@code libcuda.so.1}.</li>
 * <li>{@systemProperty metrale.nvrtc.library}: the NVRTC library, for {@code Gpu.compileCuda};
 *     default the first of {@code libnvrtc.so}, {@code libnvrtc.so.13}, {@code libnvrtc.so.12}
 *     that loads. Without it only run-time compilation is unavailable.</li>
 * <li>{@systemProperty metrale.cuda.device}: the device ordinal; default 0 (the backend option
 *     {@code cuda.device} wins).</li>
 * </ul>
 *
 * <p>A machine without the driver makes the backend report "unavailable" with the reason; nothing
 * throws at class load.
 *
 * <p><b>Threads.</b> Every call is correct from any thread. The backend makes its context current
 * once per platform thread and on every call from a virtual thread (which may change carriers).
 * Native code of the application's own that changes the current CUDA context on a platform
 * thread must be followed by {@code Gpu.bindToThread()} on that thread.
 *
 * @provides metrale.gpu.spi.BackendProvider {@link metrale.gpu.cuda.CudaBackendProvider}, named {@code cuda}, priority 100
 */
module metrale.gpu.cuda {
    // The SPI (Driver, BackendProvider) and the value types its signatures use.
    requires metrale.gpu;

    provides metrale.gpu.spi.BackendProvider with metrale.gpu.cuda.CudaBackendProvider;
}
