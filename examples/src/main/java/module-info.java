// SPDX-License-Identifier: Apache-2.0
/**
 * Examples of metrale-gpu. {@link metrale.examples.HeatDemo} is a 2D heat-diffusion solver that
 * shows the API end to end and checks its result against plain Java; run it with {@code ./demo}.
 * {@link metrale.examples.DataParallelStep} trains a linear model data-parallel over several
 * devices with an all-reduce; {@link metrale.examples.UniqueIdExchange} joins ranks in separate
 * JVMs through a file.
 *
 * <p>It runs on the simulator by default; {@code --backend cuda} (or the system property
 * {@code metrale.backend} / environment {@code METRALE_BACKEND}) picks CUDA when
 * {@code metrale.gpu.cuda} is on the module path, which then needs
 * {@code --enable-native-access=metrale.gpu.cuda}.
 */
module metrale.examples {
    // GpuBuilder and NcclUniqueId appear in the exported examples' signatures.
    requires transitive metrale.gpu;
    // The demo registers SimKernel twins of its CUDA kernels, so it needs the simulator's kernel
    // API (SimKernels, SimLaunch, FloatView) and not just the simulator as a backend.
    requires metrale.gpu.sim;
    // Collectives for DataParallelStep and UniqueIdExchange.
    requires transitive metrale.gpu.nccl;
    // Recording and RecordingFile for --jfr.
    requires jdk.jfr;

    // Exported so the reference and the twins can be reused (and so the package has published Javadoc).
    exports metrale.examples;
}
