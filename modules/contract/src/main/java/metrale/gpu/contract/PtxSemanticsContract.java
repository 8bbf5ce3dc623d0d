// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static metrale.gpu.contract.PtxReference.MODES;
import static metrale.gpu.contract.PtxReference.Mode.RD;
import static metrale.gpu.contract.PtxReference.Mode.RN;
import static metrale.gpu.contract.PtxReference.Mode.RU;
import static metrale.gpu.contract.PtxReference.Mode.RZ;
import static metrale.gpu.contract.PtxReference.NAN32;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.DevicePtr;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.contract.PtxReference.Mode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a kernel's arithmetic computes, bit for bit: the kernels of {@code ops.cu} (module
 * {@value #OPS_MODULE}, no twins) apply float rounding in every mode, special values, conversions
 * with their saturation, integer and bit-field operations, order-independent atomics on global and
 * shared memory, and warp shuffles, votes and reductions to edge and seeded random inputs; every
 * result is compared with a reference computed in Java ({@link PtxReference}) from IEEE 754 and
 * the PTX ISA's text. On the simulator this pins the PTX engine to what the GPU computes.
 *
 * <p>A few results are not fixed by PTX's text: the bits of a NaN that a correctly rounded
 * division, square root or reciprocal returns, of abs, neg and copysign of a NaN, the sign of
 * min/max of zeros of both signs, of {@code __saturatef(-0)}, of a half NaN and of what a float
 * NaN widens to. Those go through {@link #unpinned} (the simulator's choice is asserted by
 * default) and {@link #nanBits} (double NaN bits: any NaN passes), so a backend on real hardware
 * can record what the device gives instead of the contract guessing.
 */
public abstract class PtxSemanticsContract extends GpuContract {

    /** The module name the PTX of {@code ops.cu} is loaded under. */
    public static final String OPS_MODULE = "ops";

    /** The classpath resource holding the PTX of {@code ops.cu}. */
    public static final String OPS_PTX_RESOURCE = "/metrale/gpu/contract/ops.ptx";

    private static final int BLOCK = 128;
    private static final long M32 = 0xffffffffL;

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected PtxSemanticsContract() {
    }

    /** {@return the PTX of {@code ops.cu}, a resource of this module} */
    public static byte[] opsPtx() {
        try (InputStream in = PtxSemanticsContract.class.getResourceAsStream(OPS_PTX_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(OPS_PTX_RESOURCE + " is missing from the metrale-gpu-contract jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Loads {@code ops.cu}'s PTX as module {@value #OPS_MODULE}. */
    @BeforeEach
    public final void loadOpsModule() {
        gpu.loadModule(OPS_MODULE, opsPtx());
    }

    // ---- what a backend may override ----------------------------------------------------------

    /**
     * Judges a result that PTX's text leaves open (a NaN's bits, a zero's sign). By default it
     * must be the simulator's documented choice; a backend on real hardware overrides this to
     * record what the device gives and accept it.
     *
     * @param op        the operation, for example {@code div.rn.f32 NaN bits}
     * @param input     the operands
     * @param simulator the simulator's answer
     * @param actual    the backend's answer
     * @return whether {@code actual} is accepted
     */
    protected boolean unpinned(String op, String input, long simulator, long actual) {
        return simulator == actual;
    }

    /**
     * Sees the bits of a double NaN result, which neither PTX nor the simulator fixes: the contract
     * has already checked that it is a NaN. Does nothing by default; a backend on real hardware
     * records them.
     *
     * @param op     the operation
     * @param input  the operands
     * @param actual the NaN's bits
     */
    protected void nanBits(String op, String input, long actual) {
    }

    // ---- float arithmetic ---------------------------------------------------------------------

    /** add, sub, mul and fma of floats in each rounding direction, division, square root, reciprocal, min/max, abs, neg, copysign. */
    @Test
    public void floatArithmeticRoundsAsIeeeSaysInEveryMode() {
        PtxInputs.F32 in = PtxInputs.f32(6000);
        int n = in.n();
        long[] out = run("f32_ops", n, 26, 4, seg(in.a()), seg(in.b()), seg(in.c()));
        Diff d = new Diff("f32_ops");
        for (int i = 0; i < n; i++) {
            float x = in.a()[i];
            float y = in.b()[i];
            float z = in.c()[i];
            String at = f(x) + ", " + f(y) + ", " + f(z);
            for (Mode m : MODES) {
                int k = m.ordinal();
                d.eq("__fadd_" + m, at, u(PtxReference.bits(PtxReference.add(x, y, m))), out[k * n + i]);
                d.eq("__fsub_" + m, at, u(PtxReference.bits(PtxReference.add(x, -y, m))), out[(4 + k) * n + i]);
                d.eq("__fmul_" + m, at, u(PtxReference.bits(PtxReference.mul(x, y, m))), out[(8 + k) * n + i]);
                d.eq("__fmaf_" + m, at, u(PtxReference.bits(PtxReference.fma(x, y, z, m))), out[(12 + k) * n + i]);
            }
            nan32OrExact(d, "div.rn.f32", at, x / y, out[16 * n + i]);
            nan32OrExact(d, "sqrt.rn.f32", at, (float) Math.sqrt(x), out[17 * n + i]);
            nan32OrExact(d, "rcp.rn.f32", at, 1f / x, out[18 * n + i]);
            d.eq("__fadd_rn(__fmul_rn)", at, u(PtxReference.bits(x * y + z)), out[19 * n + i]);
            d.eq("a * b + c (contracted to fma.rn)", at, u(PtxReference.bits(Math.fma(x, y, z))), out[20 * n + i]);
            boolean zeros = x == 0 && y == 0 && (Float.floatToRawIntBits(x) != Float.floatToRawIntBits(y));
            for (int k = 0; k < 2; k++) {
                String op = k == 0 ? "fminf" : "fmaxf";
                long want = PtxReference.minMax(x, y, k == 0) & M32;
                if (zeros) {
                    d.unpinned(op + " of zeros of both signs", at, want, out[(21 + k) * n + i]);
                } else {
                    d.eq(op, at, want, out[(21 + k) * n + i]);
                }
            }
            int xb = Float.floatToRawIntBits(x);
            long abs = xb & 0x7fffffffL;
            long neg = (xb ^ 0x80000000) & M32;
            long sign = (xb & 0x7fffffffL) | (Float.floatToRawIntBits(y) & 0x80000000L);
            if (Float.isNaN(x)) {
                // PTX leaves abs and neg of a NaN open; the H200 gives the canonical NaN for both and
                // copysign moves the sign bit alone (measured; the simulator does the same).
                d.eq("abs.f32 of a NaN", at, PtxReference.NAN32 & M32, out[23 * n + i]);
                d.eq("neg.f32 of a NaN", at, PtxReference.NAN32 & M32, out[24 * n + i]);
                d.eq("copysign.f32 of a NaN", at, sign, out[25 * n + i]);
            } else {
                d.eq("fabsf", at, abs, out[23 * n + i]);
                d.eq("-a", at, neg, out[24 * n + i]);
                d.eq("copysignf", at, sign, out[25 * n + i]);
            }
        }
        d.done();
    }

    /** Double add, sub, mul, fma, division, square root and reciprocal to nearest, min/max, abs, neg. */
    @Test
    public void doubleArithmeticRoundsToNearest() {
        PtxInputs.F64 in = PtxInputs.f64(3000);
        int n = in.n();
        long[] out = run("f64_ops", n, 12, 8, seg(in.a()), seg(in.b()), seg(in.c()));
        Diff d = new Diff("f64_ops");
        for (int i = 0; i < n; i++) {
            double x = in.a()[i];
            double y = in.b()[i];
            double z = in.c()[i];
            String at = f(x) + ", " + f(y) + ", " + f(z);
            double[] want = {x + y, x - y, x * y, Math.fma(x, y, z), x / y, Math.sqrt(x), 1d / x, x * y + z};
            String[] ops = {"__dadd_rn", "__dsub_rn", "__dmul_rn", "__fma_rn", "__ddiv_rn", "__dsqrt_rn", "__drcp_rn",
                "__dadd_rn(__dmul_rn)"};
            for (int k = 0; k < want.length; k++) {
                d.f64(ops[k], at, want[k], out[k * n + i]);
            }
            boolean zeros = x == 0 && y == 0 && Double.doubleToRawLongBits(x) != Double.doubleToRawLongBits(y);
            for (int k = 0; k < 2; k++) {
                String op = k == 0 ? "fmin" : "fmax";
                long got = out[(8 + k) * n + i];
                if (Double.isNaN(x) && Double.isNaN(y)) {
                    d.f64(op + " of two NaNs", at, Double.NaN, got);
                } else if (Double.isNaN(x) || Double.isNaN(y)) {
                    d.eq(op + " of a NaN and a number", at, Double.doubleToRawLongBits(Double.isNaN(x) ? y : x), got);
                } else {
                    long want2 = Double.doubleToRawLongBits(k == 0 ? Math.min(x, y) : Math.max(x, y));
                    if (zeros) {
                        d.unpinned(op + " of zeros of both signs", at, want2, got);
                    } else {
                        d.eq(op, at, want2, got);
                    }
                }
            }
            long xb = Double.doubleToRawLongBits(x);
            if (Double.isNaN(x)) {
                d.f64("fabs of a NaN", at, Double.NaN, out[10 * n + i]);
                d.f64("-a of a NaN", at, Double.NaN, out[11 * n + i]);
            } else {
                d.eq("fabs", at, xb & Long.MAX_VALUE, out[10 * n + i]);
                d.eq("-a", at, xb ^ Long.MIN_VALUE, out[11 * n + i]);
            }
        }
        d.done();
    }

    // ---- conversions --------------------------------------------------------------------------

    /** Float to every integer type in each rounding (saturating, NaN as PTX 9.0 says), to integral floats, {@code __saturatef}, to half and to double. */
    @Test
    public void floatConversionsSaturateAndRound() {
        float[] in = PtxInputs.f32Converts(4000);
        int n = in.length;
        long[] out = run("f2x_ops", n, 23, 8, seg(in));
        Diff d = new Diff("f2x_ops");
        for (int i = 0; i < n; i++) {
            float x = in[i];
            String at = f(x);
            for (Mode m : MODES) {
                int k = m.ordinal();
                d.eq("__float2int_" + m, at, PtxReference.toInt(x, m, 32, true, false), out[k * n + i]);
                d.eq("__float2uint_" + m, at, PtxReference.toInt(x, m, 32, false, false), out[(4 + k) * n + i]);
                d.eq("__float2ll_" + m, at, PtxReference.toInt(x, m, 64, true, false), out[(8 + k) * n + i]);
                d.eq("__float2ull_" + m, at, PtxReference.toInt(x, m, 64, false, false), out[(12 + k) * n + i]);
            }
            Mode[] integral = {RN, RZ, RD, RU};
            String[] names = {"rintf", "truncf", "floorf", "ceilf"};
            for (int k = 0; k < 4; k++) {
                d.eq(names[k], at, PtxReference.roundToIntegral(x, integral[k]) & M32, out[(16 + k) * n + i]);
            }
            if (x == 0 && Float.floatToRawIntBits(x) < 0) {
                d.unpinned("__saturatef(-0)", at, 0, out[20 * n + i]);
            } else {
                // PTX: .sat clamps to [0.0, 1.0] and makes a NaN +0.
                float s = Float.isNaN(x) ? 0f : Math.min(1f, Math.max(0f, x));
                d.eq("__saturatef", at, Float.floatToRawIntBits(s) & M32, out[20 * n + i]);
            }
            if (Float.isNaN(x)) {
                // The H200 gives the canonical half NaN whatever the payload (measured).
                d.eq("__float2half_rn of a NaN", at, 0x7fffL, out[21 * n + i]);
                d.f64("(double) of a float NaN", at, Double.NaN, out[22 * n + i]);
            } else {
                d.eq("__float2half_rn", at, PtxReference.toHalf(x), out[21 * n + i]);
                d.eq("(double)", at, Double.doubleToRawLongBits(x), out[22 * n + i]);
            }
        }
        d.done();
    }

    /** Double to float in each rounding, and to every integer type (saturating, NaN as PTX 9.0 says). */
    @Test
    public void doubleConversionsSaturateAndRound() {
        double[] in = PtxInputs.f64Converts(4000);
        int n = in.length;
        long[] out = run("d2x_ops", n, 20, 8, seg(in));
        Diff d = new Diff("d2x_ops");
        for (int i = 0; i < n; i++) {
            double x = in[i];
            String at = f(x);
            for (Mode m : MODES) {
                int k = m.ordinal();
                d.eq("__double2float_" + m, at, PtxReference.toFloat(x, m) & M32, out[k * n + i]);
                d.eq("__double2int_" + m, at, PtxReference.toInt(x, m, 32, true, true), out[(4 + k) * n + i]);
                d.eq("__double2uint_" + m, at, PtxReference.toInt(x, m, 32, false, true), out[(8 + k) * n + i]);
                d.eq("__double2ll_" + m, at, PtxReference.toInt(x, m, 64, true, true), out[(12 + k) * n + i]);
                d.eq("__double2ull_" + m, at, PtxReference.toInt(x, m, 64, false, true), out[(16 + k) * n + i]);
            }
        }
        d.done();
    }

    /** Every integer type to float and to double, in each rounding. */
    @Test
    public void integerToFloatConversionsRoundInEveryMode() {
        long[] in = PtxInputs.intConverts(4000);
        int n = in.length;
        long[] out = run("i2f_ops", n, 26, 8, seg(in));
        Diff d = new Diff("i2f_ops");
        for (int i = 0; i < n; i++) {
            long v = in[i];
            String at = "0x" + Long.toHexString(v);
            BigInteger s = BigInteger.valueOf((int) v);
            BigInteger u = BigInteger.valueOf(v & M32);
            BigInteger ll = BigInteger.valueOf(v);
            BigInteger ull = PtxReference.unsigned(v);
            for (Mode m : MODES) {
                int k = m.ordinal();
                d.eq("__int2float_" + m, at, PtxReference.intToFloat(s, m) & M32, out[k * n + i]);
                d.eq("__uint2float_" + m, at, PtxReference.intToFloat(u, m) & M32, out[(4 + k) * n + i]);
                d.eq("__ll2float_" + m, at, PtxReference.intToFloat(ll, m) & M32, out[(8 + k) * n + i]);
                d.eq("__ull2float_" + m, at, PtxReference.intToFloat(ull, m) & M32, out[(12 + k) * n + i]);
                d.eq("__ll2double_" + m, at, PtxReference.intToDouble(ll, m), out[(16 + k) * n + i]);
                d.eq("__ull2double_" + m, at, PtxReference.intToDouble(ull, m), out[(20 + k) * n + i]);
            }
            d.eq("__int2double_rn", at, Double.doubleToRawLongBits((int) v), out[24 * n + i]);
            d.eq("__uint2double_rn", at, Double.doubleToRawLongBits(v & M32), out[25 * n + i]);
        }
        d.done();
    }

    /** Every one of the 65536 half bit patterns widens to the float of the same value. */
    @Test
    public void everyHalfWidensExactly() {
        int n = 1 << 16;
        short[] h = new short[n];
        for (int i = 0; i < n; i++) {
            h[i] = (short) i;
        }
        DevicePtr in = gpu.alloc(2L * n);
        DevicePtr out = gpu.alloc(4L * n);
        int[] got = new int[n];
        try {
            gpu.copyH2D(MemorySegment.ofArray(h), in);
            gpu.launch(gpu.kernel(OPS_MODULE, "h2f"), LaunchConfig.forElements(n, 256), Stream.DEFAULT,
                    args.clear().ptr(in).ptr(out).i32(n));
            gpu.copyD2H(out, got);
        } finally {
            gpu.free(in);
            gpu.free(out);
        }
        Diff d = new Diff("h2f");
        for (int i = 0; i < n; i++) {
            float want = PtxReference.halfValue(i);
            String at = String.format("half 0x%04x", i);
            if (Float.isNaN(want)) {
                nan32(d, "cvt.f32.f16 of a NaN", at, NAN32, got[i] & M32);
            } else {
                d.eq("__half2float", at, Float.floatToRawIntBits(want) & M32, got[i] & M32);
            }
        }
        d.done();
    }

    /** {@code cvt} between integer types: {@code .sat} clamps, without it the value is truncated and extended. */
    @Test
    public void integerNarrowingSaturatesOrTruncates() {
        PtxInputs.I64 in = PtxInputs.ints(3000);
        int n = in.n();
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = (int) in.a()[i];
        }
        long[] out = run("narrow_ops", n, 10, 4, seg(a));
        Diff d = new Diff("narrow_ops");
        for (int i = 0; i < n; i++) {
            int x = a[i];
            String at = "0x" + Integer.toHexString(x);
            long[] want = {
                clamp(x, -128, 127), clamp(x, 0, 255), clamp(x, -32768, 32767), clamp(x, 0, 65535), Math.max(0, x),
                x < 0 ? Integer.MAX_VALUE : x, (byte) x, x & 0xff, (short) x, x & 0xffff,
            };
            String[] ops = {"cvt.sat.s8.s32", "cvt.sat.u8.s32", "cvt.sat.s16.s32", "cvt.sat.u16.s32", "cvt.sat.u32.s32",
                "cvt.sat.s32.u32", "cvt.s8.s32", "cvt.u8.s32", "cvt.s16.s32", "cvt.u16.s32"};
            for (int k = 0; k < want.length; k++) {
                d.eq(ops[k], at, want[k] & M32, out[k * n + i]);
            }
        }
        d.done();
    }

    private static long clamp(long v, long lo, long hi) {
        return Math.max(lo, Math.min(hi, v));
    }

    // ---- integer operations -------------------------------------------------------------------

    /** 32-bit multiply-high, bit counts, byte permutes, funnel shifts, bit fields, divisions, unclamped shift counts, saturating adds. */
    @Test
    public void integer32OperationsMatchPtx() {
        PtxInputs.I64 in = PtxInputs.ints(4000);
        int n = in.n();
        int[] a = low(in.a());
        int[] b = low(in.b());
        int[] c = low(in.c());
        long[] out = run("i32_ops", n, 35, 4, seg(a), seg(b), seg(c));
        Diff d = new Diff("i32_ops");
        for (int i = 0; i < n; i++) {
            int x = a[i];
            int y = b[i];
            int z = c[i];
            String at = String.format("0x%x, 0x%x, 0x%x", x, y, z);
            int q = y == 0 ? 1 : y;
            long ux = x & M32;
            long uy = y & M32;
            long funnel = (uy << 32) | ux;
            int wrap = z & 31;
            long cl = Math.min(z & M32, 32);
            int[] want = {
                (int) (((long) x * y) >> 32), (int) ((ux * uy) >>> 32), Integer.bitCount(x), Integer.numberOfLeadingZeros(x),
                Integer.reverse(x), (int) IntOps.prmt(x, y, z & 0x7777), (int) ((funnel << wrap) >>> 32), (int) (funnel >>> wrap),
                (int) (cl == 32 ? ux : (funnel << cl) >>> 32), (int) (cl == 32 ? uy : funnel >>> cl),
                (int) IntOps.bfe(ux, y, z, 32, false), (int) IntOps.bfe(x, y, z, 32, true),
                (int) IntOps.bfi(ux, uy, z, z >>> 8, 32),
                x / q, x % q, Integer.divideUnsigned(x, q), Integer.remainderUnsigned(x, q),
                uy >= 32 ? 0 : x << y, uy >= 32 ? x >> 31 : x >> y, uy >= 32 ? 0 : x >>> y,
                ((x << 8) >> 8) * ((y << 8) >> 8), (x & 0xffffff) * (y & 0xffffff),
                z + (x < y ? y - x : x - y), z + (Integer.compareUnsigned(x, y) < 0 ? y - x : x - y),
                (int) clamp((long) x + y, Integer.MIN_VALUE, Integer.MAX_VALUE),
                (int) clamp((long) x - y, Integer.MIN_VALUE, Integer.MAX_VALUE),
                Math.min(x, y), Math.max(x, y), Integer.compareUnsigned(x, y) < 0 ? x : y,
                Integer.compareUnsigned(x, y) > 0 ? x : y, Math.abs(x),
                (int) (((long) x + y) >> 1), (int) (((long) x + y + 1) >> 1), (int) ((ux + uy) >>> 1),
                (int) IntOps.prmt(x, y, z),
            };
            for (int k = 0; k < want.length; k++) {
                d.eq(IntOps.I32_NAMES[k], at, want[k] & M32, out[k * n + i]);
            }
        }
        d.done();
    }

    /** 64-bit multiply-high, bit counts, divisions, unclamped shift counts, bit fields, min/max, widening multiplies. */
    @Test
    public void integer64OperationsMatchPtx() {
        PtxInputs.I64 in = PtxInputs.ints(4000);
        int n = in.n();
        long[] out = run("i64_ops", n, 21, 8, seg(in.a()), seg(in.b()), seg(in.c()));
        Diff d = new Diff("i64_ops");
        for (int i = 0; i < n; i++) {
            long x = in.a()[i];
            long y = in.b()[i];
            long z = in.c()[i];
            String at = String.format("0x%x, 0x%x, 0x%x", x, y, z);
            long q = y == 0 ? 1 : y;
            long sh = y & M32;
            long[] want = {
                Math.multiplyHigh(x, y), Math.unsignedMultiplyHigh(x, y), Long.bitCount(x), Long.numberOfLeadingZeros(x),
                Long.reverse(x), x / q, x % q, Long.divideUnsigned(x, q), Long.remainderUnsigned(x, q),
                sh >= 64 ? 0 : x << sh, sh >= 64 ? x >> 63 : x >> sh, sh >= 64 ? 0 : x >>> sh,
                IntOps.bfe(x, (int) y, (int) z, 64, false), IntOps.bfe(x, (int) y, (int) z, 64, true),
                IntOps.bfi(x, y, (int) z, (int) (z >>> 8), 64),
                Math.min(x, y), Math.max(x, y), Long.compareUnsigned(x, y) < 0 ? x : y, Long.compareUnsigned(x, y) > 0 ? x : y,
                (long) (int) x * (int) y, (x & M32) * (y & M32),
            };
            for (int k = 0; k < want.length; k++) {
                d.eq(IntOps.I64_NAMES[k], at, want[k], out[k * n + i]);
            }
        }
        d.done();
    }

    // ---- atomics ------------------------------------------------------------------------------

    /** Every atomic on global counters from 1024 threads in 8 blocks: finals and returned values as any order gives them. */
    @Test
    public void globalAtomicsEndWhereEveryOrderEnds() {
        Atomics.check(this, false);
    }

    /** The same atomics on shared counters, one set per block. */
    @Test
    public void sharedAtomicsEndWhereEveryOrderEnds() {
        Atomics.check(this, true);
    }

    /** Float atomicAdd rounds to nearest; on global memory it flushes subnormals to zero, on shared memory it keeps them (PTX ISA, atom). */
    @Test
    public void floatAtomicAddFlushesSubnormalsOnGlobalMemoryOnly() {
        Atomics.checkFloatAdd(this);
    }

    // ---- warp operations ----------------------------------------------------------------------

    /** Shuffles of every kind and width, votes, the active mask and reductions, over eight whole warps. */
    @Test
    public void warpShufflesVotesAndReductionsMatchCuda() {
        Warps.check(this);
    }

    /** Votes, reductions and a shuffle in a block whose last warp has 16 lanes, then 8. */
    @Test
    public void partialWarpsVoteOverTheLanesThatExist() {
        Warps.checkPartial(this, 48);
        Warps.checkPartial(this, 40);
    }

    // ---- running kernels ----------------------------------------------------------------------

    /**
     * {@return the results of an element-wise kernel of {@code ops.cu}, each widened to a long}
     *
     * @param func      the kernel, whose parameters are the inputs, the output and n
     * @param n         the elements
     * @param results   results per element
     * @param outBytes  the bytes of one result (4 or 8)
     * @param inputs    the input arrays, n elements each
     */
    final long[] run(String func, int n, int results, int outBytes, MemorySegment... inputs) {
        List<DevicePtr> held = new ArrayList<>();
        try {
            args.clear();
            for (MemorySegment s : inputs) {
                DevicePtr p = gpu.alloc(s.byteSize());
                held.add(p);
                gpu.copyH2D(s, p);
                args.ptr(p);
            }
            DevicePtr out = gpu.alloc((long) outBytes * results * n);
            held.add(out);
            args.ptr(out).i32(n);
            gpu.launch(gpu.kernel(OPS_MODULE, func), LaunchConfig.forElements(n, BLOCK), Stream.DEFAULT, args);
            long[] r = new long[results * n];
            if (outBytes == 8) {
                gpu.copyD2H(out, r);
            } else {
                int[] w = new int[results * n];
                gpu.copyD2H(out, w);
                for (int i = 0; i < w.length; i++) {
                    r[i] = w[i] & M32;
                }
            }
            return r;
        } finally {
            for (DevicePtr p : held) {
                gpu.free(p);
            }
        }
    }

    static MemorySegment seg(float[] a) {
        return MemorySegment.ofArray(a);
    }

    static MemorySegment seg(double[] a) {
        return MemorySegment.ofArray(a);
    }

    static MemorySegment seg(int[] a) {
        return MemorySegment.ofArray(a);
    }

    static MemorySegment seg(long[] a) {
        return MemorySegment.ofArray(a);
    }

    private static int[] low(long[] a) {
        int[] r = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = (int) a[i];
        }
        return r;
    }

    /** {@return the unsigned value of 32 bits} */
    static long u(int bits) {
        return bits & M32;
    }

    static String f(float x) {
        return String.format("%s[0x%08x]", x, Float.floatToRawIntBits(x));
    }

    static String f(double x) {
        return String.format("%s[0x%016x]", x, Double.doubleToRawLongBits(x));
    }

    /** A float result that must be {@code want}'s bits, or a NaN whose bits PTX leaves open where {@code want} is NaN. */
    private void nan32OrExact(Diff d, String op, String at, float want, long actual) {
        if (Float.isNaN(want)) {
            nan32(d, op + " NaN bits", at, NAN32, actual);
        } else {
            d.eq(op, at, Float.floatToRawIntBits(want) & M32, actual);
        }
    }

    /** A float result that must be a NaN, whose bits PTX leaves open: the simulator gives {@code simulator}. */
    private void nan32(Diff d, String op, String at, long simulator, long actual) {
        if (!Float.isNaN(Float.intBitsToFloat((int) actual))) {
            d.fail(op, at, "a NaN", actual);
        } else {
            d.unpinned(op, at, simulator, actual);
        }
    }

    /**
     * The results of one kernel that differ from the reference, gathered so a failure lists many
     * at once instead of the first alone.
     */
    final class Diff {
        private final String kernel;
        private final List<String> first = new ArrayList<>();
        private int count;

        Diff(String kernel) {
            this.kernel = kernel;
        }

        void eq(String op, String input, long expected, long actual) {
            if (expected != actual) {
                fail(op, input, "0x" + Long.toHexString(expected), actual);
            }
        }

        /** A double result: its bits, or any NaN (recorded through {@link #nanBits}) where {@code expected} is NaN. */
        void f64(String op, String input, double expected, long actual) {
            if (!Double.isNaN(expected)) {
                eq(op, input, Double.doubleToRawLongBits(expected), actual);
            } else if (!Double.isNaN(Double.longBitsToDouble(actual))) {
                fail(op, input, "a NaN", actual);
            } else {
                nanBits(op + " NaN bits", input, actual);
            }
        }

        void unpinned(String op, String input, long simulator, long actual) {
            if (!PtxSemanticsContract.this.unpinned(op, input, simulator, actual)) {
                fail(op + " (not fixed by PTX; the simulator's choice)", input, "0x" + Long.toHexString(simulator), actual);
            }
        }

        void fail(String op, String input, String expected, long actual) {
            count++;
            if (first.size() < 30) {
                first.add(op + "(" + input + "): expected " + expected + ", got 0x" + Long.toHexString(actual));
            }
        }

        void done() {
            assertThat(first).as("%s: %d results differ from the reference, the first of them", kernel, count).isEmpty();
        }
    }
}
