// Kernels of the 2D heat-diffusion demo (metrale.examples.HeatDemo).
//
// The Java twins in HeatKernels.java must compute exactly what these do: the demo checks the
// device result against a plain Java reference with the same float arithmetic. For that the
// Jacobi update uses __fadd_rn/__fmul_rn (never contracted into an FMA) and the PTX is built
// with -fmad=false as well; the residual is a max, which is exact in any order.
//
// Regenerate ../resources/metrale/examples/heat.ptx with ./build.sh.

extern "C" {

// One Jacobi step of u_t = alpha * laplacian(u) on an n x n row-major grid:
//   out[i][j] = in[i][j] + alpha * ((((up + down) + left) + right) - 4 * in[i][j])
// Boundary cells are fixed (copied through). Launch with a 2D grid covering n x n;
// threadIdx.x/blockIdx.x run along a row (j), .y down the columns (i).
__global__ void jacobi_step(const float* in, float* out, int n, float alpha)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) {
        return;
    }
    int c = i * n + j;
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
        out[c] = in[c];
        return;
    }
    float centre = in[c];
    float sum = __fadd_rn(__fadd_rn(__fadd_rn(in[c - n], in[c + n]), in[c - 1]), in[c + 1]);
    float lap = __fadd_rn(sum, -__fmul_rn(4.0f, centre));
    out[c] = __fadd_rn(centre, __fmul_rn(alpha, lap));
}

// Per-block max |a[k] - b[k]| over k in [0, n): each thread folds a grid-stride slice, then the
// block reduces its blockDim.x values in dynamic shared memory (blockDim.x floats, a power of
// two) with a __syncthreads() tree, and thread 0 writes partial[blockIdx.x].
// The host takes the max of the gridDim.x partials.
__global__ void residual_reduce(const float* a, const float* b, float* partial, int n)
{
    extern __shared__ float s[];
    unsigned tid = threadIdx.x;
    float m = 0.0f;
    for (int k = blockIdx.x * blockDim.x + tid; k < n; k += gridDim.x * blockDim.x) {
        m = fmaxf(m, fabsf(a[k] - b[k]));
    }
    s[tid] = m;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] = fmaxf(s[tid], s[tid + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}

// Writes value to out[0 .. count). The demo's --plant-overflow launches it with count four
// floats past the end of a buffer, so the red-zone scan has something to find.
__global__ void fill(float* out, int count, float value)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count) {
        out[k] = value;
    }
}

}
