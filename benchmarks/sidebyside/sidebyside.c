// SPDX-License-Identifier: Apache-2.0
//
// The CUDA driver API's own costs, measured from C with nothing between the caller and libcuda,
// for the results page to set the Java runtime beside: a warm 1 MiB cuMemAlloc_v2+cuMemFree_v2
// pair, an empty-kernel cuLaunchKernel, and 4 KiB cuMemcpyHtoD_v2/cuMemcpyDtoH_v2 from and into
// pageable and page-locked memory.
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

// The empty kernel of benchmarks/src/main/cuda/bench.cu as its nvcc-generated PTX (bench.ptx).
static const char PTX[] =
    ".version 9.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry empty()\n"
    "{\n"
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
static CUstream stream;
static CUdeviceptr dev_small;
static unsigned char *pageable;
static unsigned char *pinned;

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

    CK(cuMemFreeHost(pinned));
    free(pageable);
    CK(cuMemFree_v2(dev_small));
    CK(cuStreamDestroy_v2(stream));
    CK(cuModuleUnload(module));
    CK(cuDevicePrimaryCtxRelease_v2(dev));
    return 0;
}
