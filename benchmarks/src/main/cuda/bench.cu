// Kernels of the launch-path benchmarks (metrale.bench.LaunchBench, GraphBench).
// They do as little as possible on the device, so a benchmark measures the host's enqueue, not the kernel.
//
// Rebuild after an edit, from this directory (PTX for compute_90 JIT-compiles on sm_90 and newer):
//   nvcc -ptx -arch=compute_90 -o ../resources/metrale/bench/bench.ptx bench.cu

// No parameters, no work.
extern "C" __global__ void empty() {
}

// Four parameters of the launch path's usual kinds (a float, two pointers, an int): y[i] = a * x[i] + y[i].
// The benchmarks launch it with n = 0, so no thread touches memory and the pointers may be any buffer.
extern "C" __global__ void axpy4(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
