// SPDX-License-Identifier: Apache-2.0
//
// The CUDA driver API's own costs, measured from C with nothing between the caller and libcuda,
// for the results page to set the Java runtime beside: a warm 1 MiB cuMemAlloc_v2+cuMemFree_v2
// pair, an empty-kernel cuLaunchKernel, 4 KiB cuMemcpyHtoD_v2/cuMemcpyDtoH_v2 from and into
// pageable and page-locked memory, and the driver's share of a captured step
// (metrale.bench.cuda.CapturedStepBench): an instantiated chain of K = 20 and 100 axpy4 kernel
// nodes (one block of 128 threads, n = 0, so no thread touches memory), launched warm with
// cuGraphLaunch alone, and after cuGraphExecKernelNodeSetParams gives its first node a new `a`.
//
//   nvcc -O2 sidebyside.c -lcuda -o sidebyside && ./sidebyside [SCALE]
//
// Each case runs ROUNDS rounds of many iterations, the rounds of all cases interleaved (round r
// runs every case once, starting from case r), after one untimed warm-up round; a case's result
// is the median, least and most of its rounds' nanoseconds per op. SCALE (default 1) multiplies
// every iteration count. Output: one JSON object per line on standard output,
//   {"name": "c.allocFree1MiB", "ns": MEDIAN, "min": ..., "max": ..., "rounds": 5, "iterations": N, "what": "..."}
// and progress on standard error. Any failing CUDA call ends the program with status 1, naming the
// call and the driver's text for its status.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 5
#define SMALL 4096
#define ALLOC_BYTES (1u << 20)
// Launches between two untimed stream syncs: well under the launch queue's depth (about a
// thousand entries), so no launch waits for the queue; as LaunchBench.BATCH.
#define BATCH 128

// Graph launches between two untimed stream syncs: CapturedStepBench.STEPS, so at most 4 x 100
// kernels are queued, as in the Java benchmark.
#define GRAPH_BATCH 4

// The empty and axpy4 kernels of benchmarks/src/main/cuda/bench.cu as their nvcc-generated PTX
// (bench.ptx).
static const char PTX[] =
    ".version 9.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry empty()\n"
    "{\n"
    "\tret;\n"
    "}\n"
    ".visible .entry axpy4(\n"
    "\t.param .f32 axpy4_param_0,\n"
    "\t.param .u64 axpy4_param_1,\n"
    "\t.param .u64 axpy4_param_2,\n"
    "\t.param .u32 axpy4_param_3\n"
    ")\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .f32 %f<5>;\n"
    "\t.reg .b32 %r<6>;\n"
    "\t.reg .b64 %rd<8>;\n"
    "\tld.param.f32 %f1, [axpy4_param_0];\n"
    "\tld.param.u64 %rd1, [axpy4_param_1];\n"
    "\tld.param.u64 %rd2, [axpy4_param_2];\n"
    "\tld.param.u32 %r2, [axpy4_param_3];\n"
    "\tmov.u32 %r3, %ctaid.x;\n"
    "\tmov.u32 %r4, %ntid.x;\n"
    "\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "\tsetp.ge.s32 %p1, %r1, %r2;\n"
    "\t@%p1 bra $L__BB1_2;\n"
    "\tcvta.to.global.u64 %rd3, %rd2;\n"
    "\tcvta.to.global.u64 %rd4, %rd1;\n"
    "\tmul.wide.s32 %rd5, %r1, 4;\n"
    "\tadd.s64 %rd6, %rd4, %rd5;\n"
    "\tld.global.f32 %f2, [%rd6];\n"
    "\tadd.s64 %rd7, %rd3, %rd5;\n"
    "\tld.global.f32 %f3, [%rd7];\n"
    "\tfma.rn.f32 %f4, %f2, %f1, %f3;\n"
    "\tst.global.f32 [%rd7], %f4;\n"
    "$L__BB1_2:\n"
    "\tret;\n"
    "}\n";

static void check(CUresult st, const char *call, int line) {
    if (st != CUDA_SUCCESS) {
        const char *name = "?";
        const char *text = "?";
        cuGetErrorName(st, &name);
        cuGetErrorString(st, &text);
        fprintf(stderr, "sidebyside.c:%d: %s failed: %s (%d): %s\n", line, call, name, (int) st, text);
        exit(1);
    }
}

#define CK(call) check((call), #call, __LINE__)

static CUfunction empty_fn;
static CUfunction axpy4_fn;
static CUstream stream;
static CUdeviceptr dev_small;
static unsigned char *pageable;
static unsigned char *pinned;

// A chain of kernel nodes, each depending on the one before (what a stream capture of K launches
// on one stream gives), and the argument values its nodes point at.
struct chain {
    CUgraph graph;
    CUgraphExec exec;
    CUgraphNode first;
    CUDA_KERNEL_NODE_PARAMS first_params;
    float a;
    float first_a;
    CUdeviceptr x;
    CUdeviceptr y;
    int n;
    void *args[4];
    void *first_args[4];
};

static struct chain chain20;
static struct chain chain100;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

// Each case runs iters ops and returns the nanoseconds they took (only the timed part).

static long long alloc_free(long iters) {
    long long t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        CUdeviceptr p;
        CK(cuMemAlloc_v2(&p, ALLOC_BYTES));
        CK(cuMemFree_v2(p));
    }
    return now_ns() - t0;
}

static long long launch_empty(long iters) {
    long long ns = 0;
    for (long done = 0; done < iters; done += BATCH) {
        CK(cuStreamSynchronize(stream));
        long long t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            CK(cuLaunchKernel(empty_fn, 1, 1, 1, 128, 1, 1, 0, stream, NULL, NULL));
        }
        ns += now_ns() - t0;
    }
    CK(cuStreamSynchronize(stream));
    return ns;
}

static long long h2d(const unsigned char *src, long iters) {
    long long t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        CK(cuMemcpyHtoD_v2(dev_small, src, SMALL));
    }
    return now_ns() - t0;
}

static long long d2h(unsigned char *dst, long iters) {
    long long t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        CK(cuMemcpyDtoH_v2(dst, dev_small, SMALL));
    }
    return now_ns() - t0;
}

static long long h2d_pageable(long iters) { return h2d(pageable, iters); }
static long long h2d_pinned(long iters) { return h2d(pinned, iters); }
static long long d2h_pageable(long iters) { return d2h(pageable, iters); }
static long long d2h_pinned(long iters) { return d2h(pinned, iters); }

static void chain_build(struct chain *c, int kernels) {
    memset(c, 0, sizeof *c);
    c->a = 2.0f;
    c->first_a = 2.0f;
    c->x = dev_small;
    c->y = dev_small;
    c->n = 0;
    c->args[0] = &c->a;
    c->args[1] = &c->x;
    c->args[2] = &c->y;
    c->args[3] = &c->n;
    memcpy(c->first_args, c->args, sizeof c->args);
    c->first_args[0] = &c->first_a;
    CK(cuGraphCreate(&c->graph, 0));
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = axpy4_fn;
    p.gridDimX = 1;
    p.gridDimY = 1;
    p.gridDimZ = 1;
    p.blockDimX = 128;
    p.blockDimY = 1;
    p.blockDimZ = 1;
    p.kernelParams = c->args;
    CUgraphNode prev = NULL;
    for (int i = 0; i < kernels; i++) {
        CUgraphNode node;
        CK(cuGraphAddKernelNode(&node, c->graph, prev == NULL ? NULL : &prev, prev == NULL ? 0 : 1, &p));
        if (i == 0) {
            c->first = node;
        }
        prev = node;
    }
    c->first_params = p;
    c->first_params.kernelParams = c->first_args;
    CK(cuGraphInstantiateWithFlags(&c->exec, c->graph, 0));
    CK(cuGraphLaunch(c->exec, stream));
    CK(cuStreamSynchronize(stream));
}

static void chain_destroy(struct chain *c) {
    CK(cuGraphExecDestroy(c->exec));
    CK(cuGraphDestroy(c->graph));
}

// Launches c's graph iters times, synchronizing the stream (untimed) before every GRAPH_BATCH;
// with set_first, each launch follows a cuGraphExecKernelNodeSetParams of the first node with a
// new `a`, two values in turn so every set changes the node, as CapturedStepBench's.
static long long graph_steps(struct chain *c, int set_first, long iters) {
    long long ns = 0;
    for (long done = 0; done < iters;) {
        long batch = iters - done < GRAPH_BATCH ? iters - done : GRAPH_BATCH;
        CK(cuStreamSynchronize(stream));
        long long t0 = now_ns();
        for (long i = 0; i < batch; i++) {
            if (set_first) {
                c->first_a = c->first_a == 2.0f ? 3.0f : 2.0f;
                CK(cuGraphExecKernelNodeSetParams(c->exec, c->first, &c->first_params));
            }
            CK(cuGraphLaunch(c->exec, stream));
        }
        ns += now_ns() - t0;
        done += batch;
    }
    CK(cuStreamSynchronize(stream));
    return ns;
}

static long long graph_launch20(long iters) { return graph_steps(&chain20, 0, iters); }
static long long graph_set_launch20(long iters) { return graph_steps(&chain20, 1, iters); }
static long long graph_launch100(long iters) { return graph_steps(&chain100, 0, iters); }
static long long graph_set_launch100(long iters) { return graph_steps(&chain100, 1, iters); }

struct bench_case {
    const char *name;
    const char *what;
    long iters;
    long long (*run)(long);
    double ns[ROUNDS];
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a;
    double y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    long scale = argc > 1 ? atol(argv[1]) : 1;
    if (scale < 1) {
        fprintf(stderr, "sidebyside: SCALE must be a whole number of at least 1, not '%s'\n", argv[1]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    char device_name[256];
    int driver = 0;
    CK(cuInit(0));
    CK(cuDriverGetVersion(&driver));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDeviceGetName(device_name, sizeof device_name, dev));
    // The primary context, the one the Java runtime binds.
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&module, PTX));
    CK(cuModuleGetFunction(&empty_fn, module, "empty"));
    CK(cuModuleGetFunction(&axpy4_fn, module, "axpy4"));
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc_v2(&dev_small, SMALL));
    pageable = aligned_alloc(64, SMALL);
    if (pageable == NULL) {
        fprintf(stderr, "sidebyside: aligned_alloc of %d bytes failed\n", SMALL);
        return 1;
    }
    CK(cuMemAllocHost_v2((void **) &pinned, SMALL));
    for (int i = 0; i < SMALL; i++) {
        pageable[i] = (unsigned char) (i * 31 + 7);
        pinned[i] = pageable[i];
    }
    chain_build(&chain20, 20);
    chain_build(&chain100, 100);

    struct bench_case cases[] = {
        {"c.allocFree1MiB", "cuMemAlloc_v2+cuMemFree_v2 of 1 MiB, warm", 2000 * scale, alloc_free, {0}},
        {"c.launchEmpty", "cuLaunchKernel of the empty kernel, 1x128, non-blocking stream; sync every 128, untimed",
         64 * BATCH * 8 * scale, launch_empty, {0}},
        {"c.h2dPageable4KiB", "cuMemcpyHtoD_v2 of 4 KiB from pageable memory", 20000 * scale, h2d_pageable, {0}},
        {"c.h2dPinned4KiB", "cuMemcpyHtoD_v2 of 4 KiB from page-locked memory (cuMemAllocHost)", 20000 * scale,
         h2d_pinned, {0}},
        {"c.d2hPageable4KiB", "cuMemcpyDtoH_v2 of 4 KiB into pageable memory", 20000 * scale, d2h_pageable, {0}},
        {"c.d2hPinned4KiB", "cuMemcpyDtoH_v2 of 4 KiB into page-locked memory (cuMemAllocHost)", 20000 * scale,
         d2h_pinned, {0}},
        {"c.graphLaunch20", "cuGraphLaunch of a 20-node axpy4 chain, warm; sync every 4, untimed", 8000 * scale,
         graph_launch20, {0}},
        {"c.graphSetLaunch20", "cuGraphExecKernelNodeSetParams (first node, new a) + cuGraphLaunch, 20 nodes; "
         "sync every 4, untimed", 8000 * scale, graph_set_launch20, {0}},
        {"c.graphLaunch100", "cuGraphLaunch of a 100-node axpy4 chain, warm; sync every 4, untimed", 4000 * scale,
         graph_launch100, {0}},
        {"c.graphSetLaunch100", "cuGraphExecKernelNodeSetParams (first node, new a) + cuGraphLaunch, 100 nodes; "
         "sync every 4, untimed", 4000 * scale, graph_set_launch100, {0}},
    };
    int n = (int) (sizeof cases / sizeof cases[0]);

    fprintf(stderr, "sidebyside.c: %s, driver API %d; warm-up\n", device_name, driver);
    for (int k = 0; k < n; k++) {
        cases[k].run(cases[k].iters / 10 + BATCH);
    }
    for (int r = 0; r < ROUNDS; r++) {
        fprintf(stderr, "sidebyside.c: round %d of %d\n", r + 1, ROUNDS);
        for (int k = 0; k < n; k++) {
            struct bench_case *c = &cases[(r + k) % n];
            c->ns[r] = (double) c->run(c->iters) / (double) c->iters;
        }
    }

    printf("{\"name\": \"c.device\", \"info\": \"%s, CUDA driver API %d.%d\"}\n", device_name, driver / 1000,
           driver % 1000 / 10);
    for (int k = 0; k < n; k++) {
        struct bench_case *c = &cases[k];
        double sorted[ROUNDS];
        memcpy(sorted, c->ns, sizeof sorted);
        qsort(sorted, ROUNDS, sizeof sorted[0], cmp_double);
        printf("{\"name\": \"%s\", \"ns\": %.1f, \"min\": %.1f, \"max\": %.1f, \"rounds\": %d, \"iterations\": %ld, "
               "\"what\": \"%s\"}\n",
               c->name, sorted[ROUNDS / 2], sorted[0], sorted[ROUNDS - 1], ROUNDS, c->iters, c->what);
    }

    chain_destroy(&chain20);
    chain_destroy(&chain100);
    CK(cuMemFreeHost(pinned));
    free(pageable);
    CK(cuMemFree_v2(dev_small));
    CK(cuStreamDestroy_v2(stream));
    CK(cuModuleUnload(module));
    CK(cuDevicePrimaryCtxRelease_v2(dev));
    return 0;
}
