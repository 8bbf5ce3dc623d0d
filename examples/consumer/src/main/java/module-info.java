// SPDX-License-Identifier: Apache-2.0
/**
 * A small application that uses metrale-gpu the way the user guide describes: {@code out = a * x + y}
 * on two streams, with its own CUDA kernels, and a fallback to smaller chunks when the device is
 * out of memory. It requires only the API; its tests add the simulator and the test kit.
 */
module com.example.pipeline {
    requires metrale.gpu;

    exports com.example.pipeline;
}
