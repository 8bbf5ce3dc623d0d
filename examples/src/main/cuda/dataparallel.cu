// Kernels of the data-parallel example (metrale.examples.DataParallelStep): a linear model's
// partial gradient over one device's shard, and the SGD update. Built to PTX by build.sh;
// the simulator runs their Java twins in DataParallelKernels.

// g[j] = scale * sum_i X[i*d + j] * (dot(X[i,:], w) - y[i]), one thread per feature j.
// Rows are summed in order, so with -fmad=false the result equals the plain Java loop.
extern "C" __global__ void grad_linear(const float* X, const float* y, const float* w, float* g,
                                       int m, int d, float scale) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= d) {
        return;
    }
    float acc = 0.0f;
    for (int i = 0; i < m; i++) {
        float r = 0.0f;
        for (int k = 0; k < d; k++) {
            r = r + X[i * d + k] * w[k];
        }
        r = r - y[i];
        acc = acc + X[i * d + j] * r;
    }
    g[j] = scale * acc;
}

// w[j] = w[j] - lr * g[j].
extern "C" __global__ void sgd_update(float* w, const float* g, float lr, int d) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < d) {
        w[j] = w[j] - lr * g[j];
    }
}
