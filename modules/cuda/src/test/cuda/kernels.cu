// Test kernels for the CUDA backend. extern "C" keeps the names unmangled so tests
// look them up by their plain names. Regenerate the PTX with ./build.sh.
#include <stdint.h>

// y[i] = a * x[i] + y[i] for i < n.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// p[i] += 1 for i < n.
extern "C" __global__ void add_one(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

// p[i] = value for i < n + overrun: writes overrun bytes-worth of ints past an n-int buffer.
extern "C" __global__ void fill_overrun(int* p, int n, int overrun, int value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + overrun) p[i] = value;
}

// Stores to a given (bogus) address: an illegal address fault, sticky for the context.
extern "C" __global__ void store_to(unsigned long long address, int value) {
    *reinterpret_cast<volatile int*>(address) = value;
}

// Spins for about ns nanoseconds of the global timer, then writes done[0] = 1.
extern "C" __global__ void spin(long long ns, int* done) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while ((long long)(now - start) < ns);
    if (done != nullptr && threadIdx.x == 0 && blockIdx.x == 0) done[0] = 1;
}

// A by-value struct parameter: out[0] = s.a + s.b, out[1] = s.c.
struct Triple { float a; float b; long long c; };
extern "C" __global__ void struct_arg(Triple s, long long* out) {
    out[0] = (long long)(s.a + s.b);
    out[1] = s.c;
}

// Dynamic shared memory: each block reverses its slice through shared memory.
extern "C" __global__ void reverse_block(int* p) {
    extern __shared__ int tile[];
    int t = threadIdx.x;
    int base = blockIdx.x * blockDim.x;
    tile[t] = p[base + t];
    __syncthreads();
    p[base + t] = tile[blockDim.x - 1 - t];
}

// Does nothing: the launch-overhead probe.
extern "C" __global__ void empty() {}
