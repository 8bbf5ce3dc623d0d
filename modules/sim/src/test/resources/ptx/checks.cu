// Kernels with the bugs the simulator's detectors must report, as a user writes them
// (modules/sim/src/test/java/metrale/gpu/sim/ptx/PtxDetectorsTest.java). Each runs from this PTX
// with no twin registered, except scale, whose twins the sim.twins=verify test registers.
//
// Rebuild after an edit, from this directory:
//   nvcc -ptx -arch=compute_90 -o checks.ptx checks.cu

// p[i] = i for i < n + extra: the threads at and past n store beyond an n-float buffer.
extern "C" __global__ void store_past(float* p, int n, int extra) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra) {
        p[i] = (float) i;
    }
}

// Thread 0 stores p[i] = 1: a store at any distance from p.
extern "C" __global__ void store_at(float* p, long long i) {
    if (threadIdx.x == 0) {
        p[i] = 1.0f;
    }
}

// Thread 0 loads p[i] into out[0]: a load at any distance from p.
extern "C" __global__ void load_at(const float* p, float* out, long long i) {
    if (threadIdx.x == 0) {
        out[0] = p[i];
    }
}

// out[i] = in[i] for i < n + extra: the threads at and past n load beyond an n-float buffer.
extern "C" __global__ void load_past(const float* in, float* out, int n, int extra) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra) {
        out[i] = in[i];
    }
}

// out[i] = in[i] * 2 for i < n: reads in, which the initcheck test never writes.
extern "C" __global__ void twice(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 2;
    }
}

// Each thread writes its shared slot, then reads its neighbour's with no barrier between: a race.
extern "C" __global__ void neighbour_racy(int* out) {
    __shared__ int s[1024];
    int t = threadIdx.x;
    s[t] = t * 3;
    out[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x];
}

// The same with __syncthreads() between the write and the read: correct.
extern "C" __global__ void neighbour_synced(int* out) {
    __shared__ int s[1024];
    int t = threadIdx.x;
    s[t] = t * 3;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x];
}

// The upper half of the block returns before the barrier the lower half waits at.
extern "C" __global__ void early_return(int* out) {
    int t = threadIdx.x;
    if (t >= blockDim.x / 2) {
        return;
    }
    out[t] = t;
    __syncthreads();
    out[t] += 1;
}

// Stores an int at p + 1: not 4-byte aligned.
extern "C" __global__ void misaligned(char* p) {
    if (threadIdx.x == 0) {
        *(int*) (p + 1) = 5;
    }
}

// x[i] = x[i] * a for i < n.
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * a;
    }
}
