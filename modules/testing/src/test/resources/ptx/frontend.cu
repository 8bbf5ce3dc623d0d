// Kernels of PtxFrontEndTest, as users write and build them: each is built twice, with nvcc's
// default flags and with -lineinfo (the .loc/.file directives profilers and sanitizers need).
// Rebuild after an edit, from this directory:
//   nvcc -ptx -arch=compute_90 -o frontend.ptx frontend.cu
//   nvcc -ptx -arch=compute_90 -lineinfo -o frontend_lineinfo.ptx frontend.cu
//   sed -i -E 's|^(\s*\.file\s+[0-9]+\s+")[^"]*/([^"/]+")|\1\2|' frontend_lineinfo.ptx   (the file name only)

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

// out[i] = in[i-1] + in[i] + in[i+1] through a shared tile whose halo is never loaded: the
// first and last thread of each block read a shared slot nothing wrote (garbage on a GPU).
extern "C" __global__ void stencil_unloaded_halo(float* out, const float* in, int n) {
    __shared__ float tile[34];
    int i = blockIdx.x * 32 + threadIdx.x;
    if (i < n) {
        tile[threadIdx.x + 1] = in[i];
    }
    __syncthreads();
    if (i < n) {
        out[i] = tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2];
    }
}

// out[t] = a[sel] of a per-thread array of which only the first k elements are written.
extern "C" __global__ void local_partly_written(int* out, int k, int sel) {
    int a[16];
    for (int j = 0; j < k; j++) {
        a[j] = j * 3 + 1;
    }
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = a[sel & 15];
}

// out[i] = tile[i + 64] of a 64-float tile: each thread reads past the kernel's own shared array,
// where another kernel of the module has arrays of its own.
extern "C" __global__ void read_past_own_tile(float* out) {
    __shared__ float tile[64];
    tile[threadIdx.x] = (float) threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x + 64];
}

// Lanes 0..15 shuffle down by 8 with the member mask of lanes 0..15: lanes 8..15 read lanes
// 16..23, outside the mask, which PTX leaves undefined.
extern "C" __global__ void shfl_outside_mask(int* out) {
    int v = threadIdx.x;
    if (threadIdx.x < 16) {
        v += __shfl_down_sync(0x0000ffffu, v, 8);
    }
    out[threadIdx.x] = v;
}

// Each thread writes its own byte of the shared words, then thread 0 reads the first word:
// four threads share a word and none races (histogram64 keeps per-thread byte counters so).
extern "C" __global__ void bytes_of_a_word(unsigned int* out) {
    __shared__ unsigned char b[64];
    b[threadIdx.x] = (unsigned char) (threadIdx.x + 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = *(unsigned int*) b;
    }
}

// Threads 0 and 32 (two warps) both write the same shared word with no barrier between.
extern "C" __global__ void racy_write_after_write(int* out) {
    __shared__ int s[2];
    if (threadIdx.x == 0 || threadIdx.x == 32) {
        s[0] = threadIdx.x;
    }
    __syncthreads();
    out[threadIdx.x] = s[0];
}

// Thread 0 writes a shared word that every thread then reads (out[0] holds 0), with no barrier
// between; the index comes from memory, so nvcc keeps the load.
extern "C" __global__ void racy_read_after_write(int* out) {
    __shared__ int s[64];
    if (threadIdx.x == 0) {
        s[0] = 42;
    }
    out[threadIdx.x] = s[threadIdx.x & out[0]];
}

// The same across warps with __syncwarp between: it orders one warp's lanes, not two warps.
extern "C" __global__ void warp_sync_across_warps(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = s[(threadIdx.x + 32) & 63];
}

// Lanes exchange with their neighbour in the same warp after __syncwarp: ordered, no race.
extern "C" __global__ void warp_sync_within_warp(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}

// p[i] = i as doubles, then out[i] = p[i] + p[i ^ 1]: a kernel that fills a double array before it
// reads it, with 8-byte stores and 16-byte vector loads, so no byte it reads is unwritten.
extern "C" __global__ void doubles_written_then_read(double* out, double* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] = (double) i;
    }
    __syncthreads();
    if (i < n / 2) {
        double2 v = reinterpret_cast<double2*>(p)[i];
        out[i] = v.x + v.y;
    }
}

#include <assert.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Features the engine does not run, whose message must name them: a bfloat16 conversion, packed
// half-precision arithmetic, and an assert (whose message strings are module variables).
extern "C" __global__ void widen_bf16(float* out, const __nv_bfloat16* in) {
    out[threadIdx.x] = __bfloat162float(in[threadIdx.x]);
}

extern "C" __global__ void add_half2(__half2* p) {
    p[threadIdx.x] = __hadd2(p[threadIdx.x], p[threadIdx.x]);
}

extern "C" __global__ void asserts_positive(const int* p) {
    assert(p[threadIdx.x] > 0);
}
