// Kernels of PoolReuseTest: a byte kernel as a user writes one, to touch pool blocks that are freed,
// reused and neighboured. Rebuild after an edit, from this directory (nvcc's default flags):
//   nvcc -ptx -arch=compute_90 -o pool_reuse.ptx pool_reuse.cu

// p[i] += 1 for i < n.
extern "C" __global__ void touch(unsigned char* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] += 1;
    }
}
