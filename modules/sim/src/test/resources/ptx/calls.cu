// Device-function calls and a local depot, for the simulator's PTX engine tests
// (modules/sim/src/test/java/metrale/gpu/sim/internal/ptx/PtxCallTest.java).
//
// Rebuild after an edit, from this directory:
//   nvcc -ptx -arch=compute_90 -o calls.ptx calls.cu

// A real call with parameters and a return value: noinline keeps the .func and its call sequence.
__device__ __noinline__ long long mix(int a, long long b, float c) {
    return (long long) a * 3 + b - (long long) (c * 2.0f);
}

// A .func that returns through a second level of call.
__device__ __noinline__ int twice_mix(int a) {
    return (int) mix(a, 10, 1.5f) * 2;
}

// out[i] = mix(i, in[i], 0.25f * i) and out2[i] = twice_mix(i) for i < n.
extern "C" __global__ void calls(const long long* in, long long* out, int* out2, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = mix(i, in[i], 0.25f * i);
        out2[i] = twice_mix(i);
    }
}

// A local array indexed by a value only known at run time: nvcc gives it a .local depot.
// out[i] = the sum over k < 16 of t[(k * step) % 16], t[k] = in[i] + k * k.
__device__ __noinline__ int depot_sum(int base, int step) {
    int t[16];
    for (int k = 0; k < 16; k++) {
        t[k] = base + k * k;
    }
    int s = 0;
    for (int k = 0; k < 16; k++) {
        s += t[(k * step) & 15] * (k + 1);
    }
    return s;
}

extern "C" __global__ void depot(const int* in, int* out, int step, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t[8];
    if (i < n) {
        for (int k = 0; k < 8; k++) {
            t[k] = in[i] * (k + 1);
        }
        out[i] = depot_sum(in[i], step) + t[(i * step) & 7];
    }
}
