// Kernels of the PTX-semantics contract (metrale.gpu.contract.PtxSemanticsContract).
// Each kernel applies one family of operations to input arrays and writes every result, so a
// backend's answer can be compared bit for bit with a reference computed in Java. Every backend
// loads the PTX built from this file as module "ops"; the simulator has no twins for it and runs
// the PTX on its engine, so these kernels pin the engine to what the GPU computes.
//
// Element-wise kernels write result k of element i to out[k * n + i]; the contract knows the
// order of the operations from the comments here, which list them as "k: operation".
//
// Rebuild after an edit, from this directory (no -ftz, -prec-div or -fmad flags: the defaults keep
// subnormals and round division and square root correctly; the intrinsics below fix the rest):
//   nvcc -ptx -arch=compute_90 -lineinfo -o ops.ptx ops.cu
//   sed -i -E 's|^(\s*\.file\s+[0-9]+\s+")[^"]*/([^"/]+")|\1\2|' ops.ptx   (-lineinfo: faults name the .cu line; the
//   .file directives keep the file names only)

#include <cuda_fp16.h>

// ---- float rounding ---------------------------------------------------------------------------

// 0-3: __fadd_rn/rz/ru/rd(a, b); 4-7: __fsub_*(a, b); 8-11: __fmul_*(a, b);
// 12-15: __fmaf_rn/rz/ru/rd(a, b, c); 16: __fdiv_rn(a, b); 17: __fsqrt_rn(a); 18: __frcp_rn(a);
// 19: __fadd_rn(__fmul_rn(a, b), c), two roundings; 20: a * b + c as written, which nvcc contracts
// into one fma.rn; 21: fminf(a, b); 22: fmaxf(a, b); 23: fabsf(a); 24: -a; 25: copysignf(a, b).
extern "C" __global__ void f32_ops(const float* a, const float* b, const float* c, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float x = a[i];
    float y = b[i];
    float z = c[i];
    float r[26];
    r[0] = __fadd_rn(x, y);
    r[1] = __fadd_rz(x, y);
    r[2] = __fadd_ru(x, y);
    r[3] = __fadd_rd(x, y);
    r[4] = __fsub_rn(x, y);
    r[5] = __fsub_rz(x, y);
    r[6] = __fsub_ru(x, y);
    r[7] = __fsub_rd(x, y);
    r[8] = __fmul_rn(x, y);
    r[9] = __fmul_rz(x, y);
    r[10] = __fmul_ru(x, y);
    r[11] = __fmul_rd(x, y);
    r[12] = __fmaf_rn(x, y, z);
    r[13] = __fmaf_rz(x, y, z);
    r[14] = __fmaf_ru(x, y, z);
    r[15] = __fmaf_rd(x, y, z);
    r[16] = __fdiv_rn(x, y);
    r[17] = __fsqrt_rn(x);
    r[18] = __frcp_rn(x);
    r[19] = __fadd_rn(__fmul_rn(x, y), z);
    r[20] = x * y + z;
    r[21] = fminf(x, y);
    r[22] = fmaxf(x, y);
    r[23] = fabsf(x);
    r[24] = -x;
    r[25] = copysignf(x, y);
    for (int k = 0; k < 26; k++) {
        out[k * n + i] = r[k];
    }
}

// 0: __dadd_rn(a, b); 1: __dsub_rn(a, b); 2: __dmul_rn(a, b); 3: __fma_rn(a, b, c);
// 4: __ddiv_rn(a, b); 5: __dsqrt_rn(a); 6: __drcp_rn(a); 7: __dadd_rn(__dmul_rn(a, b), c);
// 8: fmin(a, b); 9: fmax(a, b); 10: fabs(a); 11: -a.
extern "C" __global__ void f64_ops(const double* a, const double* b, const double* c, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    double x = a[i];
    double y = b[i];
    double z = c[i];
    double r[12];
    r[0] = __dadd_rn(x, y);
    r[1] = __dsub_rn(x, y);
    r[2] = __dmul_rn(x, y);
    r[3] = __fma_rn(x, y, z);
    r[4] = __ddiv_rn(x, y);
    r[5] = __dsqrt_rn(x);
    r[6] = __drcp_rn(x);
    r[7] = __dadd_rn(__dmul_rn(x, y), z);
    r[8] = fmin(x, y);
    r[9] = fmax(x, y);
    r[10] = fabs(x);
    r[11] = -x;
    for (int k = 0; k < 12; k++) {
        out[k * n + i] = r[k];
    }
}

// ---- conversions ------------------------------------------------------------------------------

// From a float, each result widened to 64 bits (an integer sign- or zero-extended from its type, a
// float or half as its bits): 0-3: __float2int_rn/rz/ru/rd; 4-7: __float2uint_*; 8-11: __float2ll_*;
// 12-15: __float2ull_*; 16: rintf; 17: truncf; 18: floorf; 19: ceilf; 20: __saturatef;
// 21: __float2half_rn (the half's bits); 22: (double) a (the double's bits).
extern "C" __global__ void f2x_ops(const float* a, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float x = a[i];
    unsigned long long r[23];
    r[0] = (long long) __float2int_rn(x);
    r[1] = (long long) __float2int_rz(x);
    r[2] = (long long) __float2int_ru(x);
    r[3] = (long long) __float2int_rd(x);
    r[4] = __float2uint_rn(x);
    r[5] = __float2uint_rz(x);
    r[6] = __float2uint_ru(x);
    r[7] = __float2uint_rd(x);
    r[8] = __float2ll_rn(x);
    r[9] = __float2ll_rz(x);
    r[10] = __float2ll_ru(x);
    r[11] = __float2ll_rd(x);
    r[12] = __float2ull_rn(x);
    r[13] = __float2ull_rz(x);
    r[14] = __float2ull_ru(x);
    r[15] = __float2ull_rd(x);
    r[16] = __float_as_uint(rintf(x));
    r[17] = __float_as_uint(truncf(x));
    r[18] = __float_as_uint(floorf(x));
    r[19] = __float_as_uint(ceilf(x));
    r[20] = __float_as_uint(__saturatef(x));
    r[21] = __half_as_ushort(__float2half_rn(x));
    r[22] = __double_as_longlong((double) x);
    for (int k = 0; k < 23; k++) {
        out[k * n + i] = r[k];
    }
}

// From a double, widened as in f2x_ops: 0-3: __double2float_rn/rz/ru/rd (the float's bits);
// 4-7: __double2int_*; 8-11: __double2uint_*; 12-15: __double2ll_*; 16-19: __double2ull_*.
extern "C" __global__ void d2x_ops(const double* a, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    double x = a[i];
    unsigned long long r[20];
    r[0] = __float_as_uint(__double2float_rn(x));
    r[1] = __float_as_uint(__double2float_rz(x));
    r[2] = __float_as_uint(__double2float_ru(x));
    r[3] = __float_as_uint(__double2float_rd(x));
    r[4] = (long long) __double2int_rn(x);
    r[5] = (long long) __double2int_rz(x);
    r[6] = (long long) __double2int_ru(x);
    r[7] = (long long) __double2int_rd(x);
    r[8] = __double2uint_rn(x);
    r[9] = __double2uint_rz(x);
    r[10] = __double2uint_ru(x);
    r[11] = __double2uint_rd(x);
    r[12] = __double2ll_rn(x);
    r[13] = __double2ll_rz(x);
    r[14] = __double2ll_ru(x);
    r[15] = __double2ll_rd(x);
    r[16] = __double2ull_rn(x);
    r[17] = __double2ull_rz(x);
    r[18] = __double2ull_ru(x);
    r[19] = __double2ull_rd(x);
    for (int k = 0; k < 20; k++) {
        out[k * n + i] = r[k];
    }
}

// From a 64-bit integer v, whose low half is also read as an int and an unsigned, results as bits
// (a float's zero-extended): 0-3: __int2float_rn/rz/ru/rd((int) v); 4-7: __uint2float_*((unsigned) v);
// 8-11: __ll2float_*(v); 12-15: __ull2float_*(v); 16-19: __ll2double_*(v); 20-23: __ull2double_*(v);
// 24: __int2double_rn((int) v); 25: __uint2double_rn((unsigned) v).
extern "C" __global__ void i2f_ops(const long long* a, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    long long v = a[i];
    int s = (int) v;
    unsigned u = (unsigned) v;
    unsigned long long w = (unsigned long long) v;
    unsigned long long r[26];
    r[0] = __float_as_uint(__int2float_rn(s));
    r[1] = __float_as_uint(__int2float_rz(s));
    r[2] = __float_as_uint(__int2float_ru(s));
    r[3] = __float_as_uint(__int2float_rd(s));
    r[4] = __float_as_uint(__uint2float_rn(u));
    r[5] = __float_as_uint(__uint2float_rz(u));
    r[6] = __float_as_uint(__uint2float_ru(u));
    r[7] = __float_as_uint(__uint2float_rd(u));
    r[8] = __float_as_uint(__ll2float_rn(v));
    r[9] = __float_as_uint(__ll2float_rz(v));
    r[10] = __float_as_uint(__ll2float_ru(v));
    r[11] = __float_as_uint(__ll2float_rd(v));
    r[12] = __float_as_uint(__ull2float_rn(w));
    r[13] = __float_as_uint(__ull2float_rz(w));
    r[14] = __float_as_uint(__ull2float_ru(w));
    r[15] = __float_as_uint(__ull2float_rd(w));
    r[16] = __double_as_longlong(__ll2double_rn(v));
    r[17] = __double_as_longlong(__ll2double_rz(v));
    r[18] = __double_as_longlong(__ll2double_ru(v));
    r[19] = __double_as_longlong(__ll2double_rd(v));
    r[20] = __double_as_longlong(__ull2double_rn(w));
    r[21] = __double_as_longlong(__ull2double_rz(w));
    r[22] = __double_as_longlong(__ull2double_ru(w));
    r[23] = __double_as_longlong(__ull2double_rd(w));
    r[24] = __double_as_longlong(__int2double_rn(s));
    r[25] = __double_as_longlong(__uint2double_rn(u));
    for (int k = 0; k < 26; k++) {
        out[k * n + i] = r[k];
    }
}

// out[i] = the float of half h[i] (its bits), for every half bit pattern the caller passes.
extern "C" __global__ void h2f(const unsigned short* h, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __float_as_uint(__half2float(__ushort_as_half(h[i])));
    }
}

// Integer narrowing of an int x, each result as the 32-bit register cvt writes (sign- or
// zero-extended from the narrow type): 0: cvt.sat.s8.s32; 1: cvt.sat.u8.s32; 2: cvt.sat.s16.s32;
// 3: cvt.sat.u16.s32; 4: cvt.sat.u32.s32; 5: cvt.sat.s32.u32; 6: cvt.s8.s32; 7: cvt.u8.s32;
// 8: cvt.s16.s32; 9: cvt.u16.s32.
extern "C" __global__ void narrow_ops(const int* a, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int x = a[i];
    unsigned r[10];
    asm("cvt.sat.s8.s32 %0, %1;" : "=r"(r[0]) : "r"(x));
    asm("cvt.sat.u8.s32 %0, %1;" : "=r"(r[1]) : "r"(x));
    asm("cvt.sat.s16.s32 %0, %1;" : "=r"(r[2]) : "r"(x));
    asm("cvt.sat.u16.s32 %0, %1;" : "=r"(r[3]) : "r"(x));
    asm("cvt.sat.u32.s32 %0, %1;" : "=r"(r[4]) : "r"(x));
    asm("cvt.sat.s32.u32 %0, %1;" : "=r"(r[5]) : "r"(x));
    asm("cvt.s8.s32 %0, %1;" : "=r"(r[6]) : "r"(x));
    asm("cvt.u8.s32 %0, %1;" : "=r"(r[7]) : "r"(x));
    asm("cvt.s16.s32 %0, %1;" : "=r"(r[8]) : "r"(x));
    asm("cvt.u16.s32 %0, %1;" : "=r"(r[9]) : "r"(x));
    for (int k = 0; k < 10; k++) {
        out[k * n + i] = r[k];
    }
}

// ---- integer operations -----------------------------------------------------------------------

// On 32-bit a, b, c, where the divisions divide by q = b, or 1 where b is 0: 0: __mulhi(a, b); 1: __umulhi(a, b);
// 2: __popc(a); 3: __clz(a); 4: __brev(a); 5: __byte_perm(a, b, c); 6: __funnelshift_l(a, b, c);
// 7: __funnelshift_r(a, b, c); 8: __funnelshift_lc(a, b, c); 9: __funnelshift_rc(a, b, c);
// 10: bfe.u32 a, b, c; 11: bfe.s32 a, b, c; 12: bfi.b32 a, b, c, c >> 8;
// 13: (int) a / (int) q; 14: (int) a % (int) q; 15: a / q; 16: a % q;
// 17: shl.b32 a, b; 18: shr.s32 a, b; 19: shr.u32 a, b (the shift counts as given, not masked);
// 20: __mul24(a, b); 21: __umul24(a, b); 22: __sad(a, b, c); 23: __usad(a, b, c);
// 24: add.sat.s32 a, b; 25: sub.sat.s32 a, b; 26: min((int) a, (int) b); 27: max((int) a, (int) b);
// 28: min(a, b); 29: max(a, b); 30: abs((int) a); 31: __hadd(a, b); 32: __rhadd(a, b); 33: __uhadd(a, b);
// 34: prmt.b32 a, b, c (all of c: __byte_perm masks its selector with 0x7777, so no sign replication).
extern "C" __global__ void i32_ops(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned x = a[i];
    unsigned y = b[i];
    unsigned z = c[i];
    unsigned r[35];
    r[0] = __mulhi((int) x, (int) y);
    r[1] = __umulhi(x, y);
    r[2] = __popc(x);
    r[3] = __clz(x);
    r[4] = __brev(x);
    r[5] = __byte_perm(x, y, z);
    r[6] = __funnelshift_l(x, y, z);
    r[7] = __funnelshift_r(x, y, z);
    r[8] = __funnelshift_lc(x, y, z);
    r[9] = __funnelshift_rc(x, y, z);
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r[10]) : "r"(x), "r"(y), "r"(z));
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r[11]) : "r"(x), "r"(y), "r"(z));
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r[12]) : "r"(x), "r"(y), "r"(z), "r"(z >> 8));
    unsigned q = y == 0 ? 1 : y;
    r[13] = (int) x / (int) q;
    r[14] = (int) x % (int) q;
    r[15] = x / q;
    r[16] = x % q;
    asm("shl.b32 %0, %1, %2;" : "=r"(r[17]) : "r"(x), "r"(y));
    asm("shr.s32 %0, %1, %2;" : "=r"(r[18]) : "r"(x), "r"(y));
    asm("shr.u32 %0, %1, %2;" : "=r"(r[19]) : "r"(x), "r"(y));
    r[20] = __mul24((int) x, (int) y);
    r[21] = __umul24(x, y);
    r[22] = __sad((int) x, (int) y, z);
    r[23] = __usad(x, y, z);
    asm("add.sat.s32 %0, %1, %2;" : "=r"(r[24]) : "r"(x), "r"(y));
    asm("sub.sat.s32 %0, %1, %2;" : "=r"(r[25]) : "r"(x), "r"(y));
    r[26] = min((int) x, (int) y);
    r[27] = max((int) x, (int) y);
    r[28] = min(x, y);
    r[29] = max(x, y);
    r[30] = abs((int) x);
    r[31] = __hadd((int) x, (int) y);
    r[32] = __rhadd((int) x, (int) y);
    r[33] = __uhadd(x, y);
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r[34]) : "r"(x), "r"(y), "r"(z));
    for (int k = 0; k < 35; k++) {
        out[k * n + i] = r[k];
    }
}

// On 64-bit a, b, c, where the divisions divide by q = b, or 1 where b is 0: 0: __mul64hi(a, b);
// 1: __umul64hi(a, b); 2: __popcll(a); 3: __clzll(a); 4: __brevll(a); 5: (long long) a / (long long) q;
// 6: (long long) a % (long long) q; 7: a / q; 8: a % q; 9: shl.b64 a, (unsigned) b;
// 10: shr.s64 a, (unsigned) b; 11: shr.u64 a, (unsigned) b; 12: bfe.u64 a, (unsigned) b, (unsigned) c;
// 13: bfe.s64 a, (unsigned) b, (unsigned) c; 14: bfi.b64 a, b, (unsigned) c, (unsigned) (c >> 8);
// 15: min signed; 16: max signed; 17: min unsigned; 18: max unsigned;
// 19: (long long) (int) a * (int) b, a mul.wide.s32; 20: (unsigned long long) (unsigned) a * (unsigned) b.
extern "C" __global__ void i64_ops(const unsigned long long* a, const unsigned long long* b,
                                   const unsigned long long* c, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned long long x = a[i];
    unsigned long long y = b[i];
    unsigned long long z = c[i];
    unsigned yb = (unsigned) y;
    unsigned zb = (unsigned) z;
    unsigned zl = (unsigned) (z >> 8);
    unsigned long long r[21];
    r[0] = __mul64hi((long long) x, (long long) y);
    r[1] = __umul64hi(x, y);
    r[2] = __popcll(x);
    r[3] = __clzll(x);
    r[4] = __brevll(x);
    unsigned long long q = y == 0 ? 1 : y;
    r[5] = (long long) x / (long long) q;
    r[6] = (long long) x % (long long) q;
    r[7] = x / q;
    r[8] = x % q;
    asm("shl.b64 %0, %1, %2;" : "=l"(r[9]) : "l"(x), "r"(yb));
    asm("shr.s64 %0, %1, %2;" : "=l"(r[10]) : "l"(x), "r"(yb));
    asm("shr.u64 %0, %1, %2;" : "=l"(r[11]) : "l"(x), "r"(yb));
    asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r[12]) : "l"(x), "r"(yb), "r"(zb));
    asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r[13]) : "l"(x), "r"(yb), "r"(zb));
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r[14]) : "l"(x), "l"(y), "r"(zb), "r"(zl));
    r[15] = min((long long) x, (long long) y);
    r[16] = max((long long) x, (long long) y);
    r[17] = min(x, y);
    r[18] = max(x, y);
    r[19] = (long long) (int) x * (int) y;
    r[20] = (unsigned long long) (unsigned) x * (unsigned) y;
    for (int k = 0; k < 21; k++) {
        out[k * n + i] = r[k];
    }
}

// ---- atomics ----------------------------------------------------------------------------------

// Every thread applies each atomic once to the counters w (32-bit) and d (64-bit), with its own
// value v; each final value and each multiset of returned old values does not depend on the order
// the threads come in. Thread t's returned values go to olds[k * nt + t] (nt threads in all).
//   w[0] += v (atomicAdd int)            w[1] += 1 (atomicAdd unsigned; olds 0)
//   w[2] max= v (int)   w[3] min= v (int)   w[4] max= v (unsigned)   w[5] min= v (unsigned)
//   w[6] &= v   w[7] |= v   w[8] ^= v   w[9] atomicInc(37; olds 1)   w[10] atomicDec(29; olds 2)
//   w[11] += v by an atomicCAS loop   w[12] atomicExch(v; olds 3)   w[13] += (v & 255) * 0.25f (float)
//   w[14] -= v (atomicSub)
//   d[0] += v * 0x100000001   d[1] max= (long long) v << 32 | t   d[2] min= the same
//   d[3] max= (unsigned) the same   d[4] min= (unsigned) the same   d[5] &= ~(1 << (t & 63))
//   d[6] |= 1 << (t & 63)   d[7] ^= v * 0x9e3779b97f4a7c15   d[8] += v by an atomicCAS loop
//   d[9] atomicExch(v * 0x100000001 + t; olds 4)   d[10] += (double) v (double)
__device__ void apply_atomics(unsigned* w, unsigned long long* d, int v, int t, unsigned long long* olds, int nt) {
    unsigned u = (unsigned) v;
    atomicAdd((int*) &w[0], v);
    olds[0 * nt + t] = atomicAdd(&w[1], 1u);
    atomicMax((int*) &w[2], v);
    atomicMin((int*) &w[3], v);
    atomicMax(&w[4], u);
    atomicMin(&w[5], u);
    atomicAnd(&w[6], u);
    atomicOr(&w[7], u);
    atomicXor(&w[8], u);
    olds[1 * nt + t] = atomicInc(&w[9], 37u);
    olds[2 * nt + t] = atomicDec(&w[10], 29u);
    // The loops start from a guess, so no thread reads a counter other than atomically.
    unsigned seen = 0;
    unsigned assumed;
    do {
        assumed = seen;
        seen = atomicCAS(&w[11], assumed, assumed + u);
    } while (seen != assumed);
    olds[3 * nt + t] = atomicExch(&w[12], u);
    atomicAdd((float*) &w[13], (float) (v & 255) * 0.25f);
    atomicSub((int*) &w[14], v);

    unsigned long long wide = (unsigned long long) u * 0x100000001ull;
    long long keyed = (long long) ((unsigned long long) (long long) v << 32 | (unsigned) t);
    atomicAdd(&d[0], wide);
    atomicMax((long long*) &d[1], keyed);
    atomicMin((long long*) &d[2], keyed);
    atomicMax(&d[3], (unsigned long long) keyed);
    atomicMin(&d[4], (unsigned long long) keyed);
    atomicAnd(&d[5], ~(1ull << (t & 63)));
    atomicOr(&d[6], 1ull << (t & 63));
    atomicXor(&d[7], (unsigned long long) (long long) v * 0x9e3779b97f4a7c15ull);
    unsigned long long seen64 = 0;
    unsigned long long assumed64;
    do {
        assumed64 = seen64;
        seen64 = atomicCAS(&d[8], assumed64, assumed64 + (unsigned long long) (long long) v);
    } while (seen64 != assumed64);
    olds[4 * nt + t] = atomicExch(&d[9], wide + (unsigned) t);
    atomicAdd((double*) &d[10], (double) v);
}

// The atomics on global counters w[15] and d[11], by every thread of the grid (v = vals[t],
// t the global thread index, nt = n threads launched exactly).
extern "C" __global__ void atomics_global(unsigned* w, unsigned long long* d, const int* vals,
                                          unsigned long long* olds, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        apply_atomics(w, d, vals[t], t, olds, n);
    }
}

// The same atomics on shared counters, one set per block, which start as w0[15] and d0[11] and end
// in w[b * 15 ...] and d[b * 11 ...] for block b. t and nt are global, as in atomics_global.
extern "C" __global__ void atomics_shared(const unsigned* w0, const unsigned long long* d0, unsigned* w,
                                          unsigned long long* d, const int* vals, unsigned long long* olds,
                                          int n) {
    __shared__ unsigned sw[15];
    __shared__ unsigned long long sd[11];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 15) {
        sw[threadIdx.x] = w0[threadIdx.x];
    }
    if (threadIdx.x < 11) {
        sd[threadIdx.x] = d0[threadIdx.x];
    }
    __syncthreads();
    if (t < n) {
        apply_atomics(sw, sd, vals[t], t, olds, n);
    }
    __syncthreads();
    if (threadIdx.x < 15) {
        w[blockIdx.x * 15 + threadIdx.x] = sw[threadIdx.x];
    }
    if (threadIdx.x < 11) {
        d[blockIdx.x * 11 + threadIdx.x] = sd[threadIdx.x];
    }
}

// Float atomicAdd where each thread owns its counter, so no order matters: g[i] += b[i] on global
// memory (g[i] starts as a[i]), and the same on a shared copy of a[i]. out[i] = the shared sum;
// olds[i] = what the global atomicAdd returned, olds[n + i] what the shared one returned.
// PTX says atom.add.f32 flushes subnormals to zero on global memory and keeps them on shared memory.
// Blocks of at most 256 threads.
extern "C" __global__ void atomic_add_f32(float* g, const float* a, const float* b, float* out, float* olds, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        s[threadIdx.x] = a[i];
        olds[i] = atomicAdd(&g[i], b[i]);
        olds[n + i] = atomicAdd(&s[threadIdx.x], b[i]);
        out[i] = s[threadIdx.x];
    }
}

// ---- warp operations --------------------------------------------------------------------------

// Whole warps only (blockDim.x a multiple of 32). Lane l of a warp, with v = in[t] and
// s = sel[t] (t the global thread index, n threads), writes out[k * n + t]:
// 0-2: __shfl_sync(all, v, s, 32 / 16 / 8); 3-5: __shfl_up_sync(all, v, s & 31, 32 / 16 / 8);
// 6-8: __shfl_down_sync(all, v, s & 31, 32 / 16 / 8); 9-11: __shfl_xor_sync(all, v, s & 31, 32 / 16 / 8);
// 12: __ballot_sync(all, v >> 8 & 1); 13: __all_sync(all, v & 255); 14: __any_sync(all, (v & 255) == 0);
// 15: __activemask(); 16: __reduce_add_sync(all, v); 17: __reduce_min_sync(all, v);
// 18: __reduce_max_sync(all, v); 19: __reduce_min_sync(all, (int) v); 20: __reduce_max_sync(all, (int) v);
// 21: __reduce_and_sync(all, v); 22: __reduce_or_sync(all, v); 23: __reduce_xor_sync(all, v);
// 24: for lanes below 16, __shfl_xor_sync(0xffff, v, s & 15), else v;
// 25, 26: the low and high halves of __shfl_sync(all, (double) bits v:s, s + 1), a 64-bit shuffle.
extern "C" __global__ void warp_ops(const unsigned* in, const unsigned* sel, unsigned* out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned all = 0xffffffffu;
    unsigned v = in[t];
    unsigned s = sel[t];
    unsigned r[27];
    r[0] = __shfl_sync(all, v, s, 32);
    r[1] = __shfl_sync(all, v, s, 16);
    r[2] = __shfl_sync(all, v, s, 8);
    r[3] = __shfl_up_sync(all, v, s & 31, 32);
    r[4] = __shfl_up_sync(all, v, s & 31, 16);
    r[5] = __shfl_up_sync(all, v, s & 31, 8);
    r[6] = __shfl_down_sync(all, v, s & 31, 32);
    r[7] = __shfl_down_sync(all, v, s & 31, 16);
    r[8] = __shfl_down_sync(all, v, s & 31, 8);
    r[9] = __shfl_xor_sync(all, v, s & 31, 32);
    r[10] = __shfl_xor_sync(all, v, s & 31, 16);
    r[11] = __shfl_xor_sync(all, v, s & 31, 8);
    r[12] = __ballot_sync(all, v >> 8 & 1);
    r[13] = __all_sync(all, v & 255);
    r[14] = __any_sync(all, (v & 255) == 0);
    r[15] = __activemask();
    r[16] = __reduce_add_sync(all, v);
    r[17] = __reduce_min_sync(all, v);
    r[18] = __reduce_max_sync(all, v);
    r[19] = (unsigned) __reduce_min_sync(all, (int) v);
    r[20] = (unsigned) __reduce_max_sync(all, (int) v);
    r[21] = __reduce_and_sync(all, v);
    r[22] = __reduce_or_sync(all, v);
    r[23] = __reduce_xor_sync(all, v);
    r[24] = v;
    if ((threadIdx.x & 31) < 16) {
        r[24] = __shfl_xor_sync(0xffffu, v, s & 15);
    }
    double wide = __longlong_as_double((long long) ((unsigned long long) s << 32 | v));
    unsigned long long got = (unsigned long long) __double_as_longlong(__shfl_sync(all, wide, s + 1));
    r[25] = (unsigned) got;
    r[26] = (unsigned) (got >> 32);
    for (int k = 0; k < 27; k++) {
        out[k * n + t] = r[k];
    }
}

// One block whose last warp is partial: lanes that exist are the mask m of their warp. Lane l,
// v = in[t]: 0: __ballot_sync(m, v & 1); 1: __all_sync(m, v & 2); 2: __any_sync(m, v & 4);
// 3: __activemask(); 4: __reduce_add_sync(m, v); 5: __shfl_xor_sync(m, v, 1, 16) where the
// warp has 16 or more lanes, else v; out[k * n + t], n = blockDim.x.
extern "C" __global__ void warp_partial(const unsigned* in, unsigned* out) {
    int t = threadIdx.x;
    int n = blockDim.x;
    int lanes = min(32, n - (t & ~31));
    unsigned m = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    unsigned v = in[t];
    unsigned r[6];
    r[0] = __ballot_sync(m, v & 1);
    r[1] = __all_sync(m, v & 2);
    r[2] = __any_sync(m, v & 4);
    r[3] = __activemask();
    r[4] = __reduce_add_sync(m, v);
    r[5] = lanes >= 16 ? __shfl_xor_sync(m, v, 1, 16) : v;
    for (int k = 0; k < 6; k++) {
        out[k * n + t] = r[k];
    }
}
