// The consumer example's kernels. build.sh turns this into ../resources/com/example/pipeline/pipeline.ptx.
// extern "C" keeps the names unmangled, as the Java side looks them up.

// x[i] = a * x[i] for i < n
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = __fmul_rn(a, x[i]);
    }
}

// out[i] = x[i] + y[i] for i < n
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __fadd_rn(x[i], y[i]);
    }
}
