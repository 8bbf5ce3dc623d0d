// Kernels of the backend-agnostic contract suite (metrale.gpu.contract).
// Every backend loads the PTX built from this file as module "contract"; the simulator runs Java
// twins of these functions (modules/sim/src/test/java/metrale/gpu/sim/contract/ContractKernels.java)
// and checks that each one appears as an .entry in the PTX, so a twin cannot outlive its kernel.
//
// Rebuild after an edit, from this directory:
//   nvcc -ptx -arch=compute_90 -lineinfo -o contract.ptx contract.cu
//   sed -i -E 's|^(\s*\.file\s+[0-9]+\s+")[^"]*/([^"/]+")|\1\2|' contract.ptx   (-lineinfo: faults name the .cu line; the
//   .file directives keep the file names only)
//   nvcc -cubin -arch=sm_90 -o contract.sm_90.cubin contract.cu   (ModuleImageContract)

// p[i] = v for i < n.
extern "C" __global__ void fill_f32(float* p, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] = v;
    }
}

// y[i] = a * x[i] + y[i] for i < n.
extern "C" __global__ void axpy_f32(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

// p[i] += v for i < n.
extern "C" __global__ void add_i32(int* p, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] += v;
    }
}

// p[i] = i + 1 for i < n + extra: writes extra floats past an n-float buffer (red-zone tests).
extern "C" __global__ void write_past(float* p, int n, int extra) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra) {
        p[i] = (float) (i + 1);
    }
}

// Stores to a wild address: an illegal address fault (700), sticky. p is not used.
extern "C" __global__ void store_illegal(int* p) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *(volatile int*) 0x10 = 1;
    }
}

// out[b] = the sum of in[b * blockDim.x + t] over t with b * blockDim.x + t < n.
// Stages the block's values in dynamic shared memory (blockDim.x floats), then thread 0 adds them
// in index order after a barrier, so the result does not depend on scheduling.
extern "C" __global__ void block_sum_f32(const float* in, float* out, int n) {
    extern __shared__ float stage[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    stage[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        for (int k = 0; k < blockDim.x; k++) {
            s += stage[k];
        }
        out[blockIdx.x] = s;
    }
}

// out[t] = t + 1 for every thread t of the grid, threads numbered x fastest, then y, then z,
// within a block, and blocks numbered the same way: shows that every thread of a
// multi-dimensional launch ran once, with its own indices.
extern "C" __global__ void thread_ids(int* out) {
    unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned int inBlock = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned int t = block * (blockDim.x * blockDim.y * blockDim.z) + inBlock;
    out[t] = (int) t + 1;
}

// Does nothing: launch-path and configuration tests.
extern "C" __global__ void noop() {
}

// Spins for about ns nanoseconds of the device's global timer, so later work stays pending on a
// real GPU (NOT_READY tests). The simulator's twin returns at once: its work already waits for a sync.
extern "C" __global__ void spin(long long ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < (unsigned long long) ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
}
