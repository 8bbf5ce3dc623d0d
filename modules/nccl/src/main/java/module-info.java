// SPDX-License-Identifier: Apache-2.0
/**
 * Collectives across GPUs for metrale-gpu: NCCL ({@code libnccl.so.2}) bound through
 * {@code java.lang.foreign} on the runtime's streams and device pointers, and a simulated
 * communicator with the same API and ordering rules for simulator runtimes, so distributed code
 * is tested without GPUs. Start at {@link metrale.gpu.nccl.Collectives}.
 *
 * <p><b>Properties.</b>
 * <ul>
 * <li>{@systemProperty metrale.nccl.library}: the NCCL library; default the first of
 *     {@code libnccl.so.2}, {@code libnccl.so} that loads. Absent, NCCL is unavailable with the
 *     reason ({@code Collectives.ncclAvailability()}); the simulated communicator still works.</li>
 * <li>{@systemProperty metrale.nccl.timeoutMillis} ({@code METRALE_NCCL_TIMEOUT_MILLIS}): how long
 *     a rank waits for the others, in milliseconds, at least 1; default 300000 (setting
 *     {@code nccl.timeoutMillis} of {@code metrale.gpu.Setting}).</li>
 * </ul>
 *
 * <p><b>Flags.</b> {@code --enable-native-access=metrale.gpu.nccl} ({@code ALL-UNNAMED} on the
 * class path) for NCCL.
 */
module metrale.gpu.nccl {
    // Gpu, DevicePtr, Stream and GpuException appear in this module's signatures.
    requires transitive metrale.gpu;
    // CollectiveEvent is a JFR event.
    requires jdk.jfr;

    exports metrale.gpu.nccl;
}
