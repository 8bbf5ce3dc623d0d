// Kernels of PtxFrontEndTest, as users write and build them: each is built twice, with nvcc's
// default flags and with -lineinfo (the .loc/.file directives profilers and sanitizers need).
// Rebuild after an edit, from this directory:
//   nvcc -ptx -arch=compute_90 -o frontend.ptx frontend.cu
//   nvcc -ptx -arch=compute_90 -lineinfo -o frontend_lineinfo.ptx frontend.cu

#define TILE 16

// out = transpose(in), n x n, through a shared tile with a padded row.
extern "C" __global__ void transpose_tiled(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) {
        tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) {
        out[y * n + x] = tile[threadIdx.x][threadIdx.y];
    }
}

// p[i] = 3 * p[i] + 1 through two inline-PTX scopes that each declare a register named t
// (no %, as cuda_fp16.h and cooperative groups write theirs).
extern "C" __global__ void scoped_regs(unsigned int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = p[i];
        unsigned int r;
        asm("{\n\t.reg .u32 t;\n\tmul.lo.u32 t, %1, 3;\n\tmov.u32 %0, t;\n}" : "=r"(r) : "r"(v));
        asm("{\n\t.reg .u32 t;\n\tadd.u32 t, %1, 1;\n\tmov.u32 %0, t;\n}" : "=r"(r) : "r"(r));
        p[i] = r;
    }
}

// p[i] = i for i <= n: the thread at n stores one float past an n-float buffer.
extern "C" __global__ void store_one_past(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        p[i] = (float) i;
    }
}
