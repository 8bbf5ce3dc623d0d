// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Random straight-line PTX programs of integer and float operations (guards, immediates, every
 * rounding and comparison the engine takes, {@code %clock}) run compiled and interpreted: each
 * thread's registers and the memory they store come out identical. One allowance: the payload of
 * an {@code .f64} NaN is the JVM's, which the engine does not fix (an intrinsic {@code Math.fma}
 * keeps an operand's NaN, the library one returns {@code Double.NaN}, and either may run, in either
 * mode), so {@code .f64} registers and stores compare any NaN equal to any other; an {@code .f32}
 * NaN is the canonical {@code 0x7fffffff} both ways and compares exactly.
 */
class PtxCompilerProperties {

    private static final int THREADS = 3;
    /** Bytes of input and output per thread: the input at 0, the output at {@value #OUT}. */
    private static final int AREA = 1024, OUT = 512;
    private static final int N = 6;

    private static final String[] INT_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"};
    private static final String[] FLOAT_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu",
            "geu", "num", "nan"};
    private static final String[] F32_ROUND = {"rn", "rz", "rm", "rp"};
    private static final int[] SPECIAL_F32 = {0x7fc00000, 0xffc00001, 0x7f800000, 0xff800000, 0x00000001, 0x80000001,
            0x007fffff, 0x80000000, 0x00000000, 0x3f800000, 0x4f000000, 0xcf000000};
    private static final long[] SPECIAL_F64 = {0x7ff8000000000000L, 0x7ff0000000000000L, 0xfff0000000000000L, 1L,
            0x8000000000000000L, 0x000fffffffffffffL, 0x3ff0000000000000L, 0x43e0000000000000L};

    /** One program's text from its instruction choices. */
    static String program(List<Integer> choices) {
        StringBuilder b = new StringBuilder();
        b.append(".version 9.0\n.target sm_90\n.address_size 64\n");
        b.append(".visible .entry prog(.param .u64 prog_mem)\n{\n");
        b.append(".reg .pred %p<" + (N + 1) + ">;\n.reg .b32 %r<" + (N + 1) + ">;\n.reg .b64 %rd<" + (N + 1) + ">;\n");
        b.append(".reg .f32 %f<" + (N + 1) + ">;\n.reg .f64 %fd<" + (N + 1) + ">;\n.reg .b64 %a<3>;\n.reg .b32 %t;\n");
        b.append("ld.param.u64 %a1, [prog_mem];\nmov.u32 %t, %tid.x;\nmul.wide.u32 %a2, %t, " + AREA + ";\n");
        b.append("add.s64 %a1, %a1, %a2;\n");
        for (int k = 1; k <= N; k++) {
            b.append("ld.global.u32 %r" + k + ", [%a1+" + 4 * (k - 1) + "];\n");
            b.append("ld.global.u64 %rd" + k + ", [%a1+" + (64 + 8 * (k - 1)) + "];\n");
            b.append("ld.global.f32 %f" + k + ", [%a1+" + (128 + 4 * (k - 1)) + "];\n");
            b.append("ld.global.f64 %fd" + k + ", [%a1+" + (192 + 8 * (k - 1)) + "];\n");
            b.append("setp.ne.u32 %p" + k + ", %r" + k + ", " + k + ";\n");
        }
        for (int c : choices) {
            b.append(insn(new Random(c))).append('\n');
        }
        for (int k = 1; k <= N; k++) {
            b.append("st.global.u32 [%a1+" + (OUT + 4 * (k - 1)) + "], %r" + k + ";\n");
            b.append("st.global.u64 [%a1+" + (OUT + 64 + 8 * (k - 1)) + "], %rd" + k + ";\n");
            b.append("st.global.f32 [%a1+" + (OUT + 128 + 4 * (k - 1)) + "], %f" + k + ";\n");
            b.append("st.global.f64 [%a1+" + (OUT + 192 + 8 * (k - 1)) + "], %fd" + k + ";\n");
            b.append("selp.u32 %t, 1, 0, %p" + k + ";\n");
            b.append("st.global.u8 [%a1+" + (OUT + 256 + k) + "], %t;\n");
        }
        b.append("ret;\n}\n");
        return b.toString();
    }

    private static String pick(Random r, String... s) {
        return s[r.nextInt(s.length)];
    }

    private static String reg(Random r, String prefix) {
        return prefix + (1 + r.nextInt(N));
    }

    private static String r32(Random r) {
        return r.nextInt(5) == 0 ? String.valueOf(r.nextInt(200) - 100) : reg(r, "%r");
    }

    private static String r64(Random r) {
        return r.nextInt(5) == 0 ? String.valueOf(r.nextLong() >> r.nextInt(64)) : reg(r, "%rd");
    }

    private static String f32(Random r) {
        return r.nextInt(6) == 0 ? String.format("0f%08X", SPECIAL_F32[r.nextInt(SPECIAL_F32.length)]) : reg(r, "%f");
    }

    private static String f64(Random r) {
        return r.nextInt(6) == 0 ? String.format("0d%016X", SPECIAL_F64[r.nextInt(SPECIAL_F64.length)]) : reg(r, "%fd");
    }

    private static String pred(Random r) {
        return (r.nextInt(3) == 0 ? "!" : "") + reg(r, "%p");
    }

    /** One random instruction. */
    static String insn(Random r) {
        String guard = r.nextInt(4) == 0 ? "@" + pred(r) + " " : "";
        String s32 = pick(r, "s32", "u32", "b32");
        String s64 = pick(r, "s64", "u64", "b64");
        String i32 = pick(r, "s32", "u32");
        String i64 = pick(r, "s64", "u64");
        String body = switch (r.nextInt(34)) {
            case 0 -> pick(r, "add", "sub") + "." + s32 + " " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r);
            case 1 -> pick(r, "add", "sub") + "." + s64 + " " + reg(r, "%rd") + ", " + r64(r) + ", " + r64(r);
            case 2 -> pick(r, "add.sat.s32", "sub.sat.s32") + " " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r);
            case 3 -> "mul." + pick(r, "lo", "hi") + "." + i32 + " " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r);
            case 4 -> "mul." + pick(r, "lo", "hi") + "." + i64 + " " + reg(r, "%rd") + ", " + r64(r) + ", " + r64(r);
            case 5 -> "mul.wide." + i32 + " " + reg(r, "%rd") + ", " + r32(r) + ", " + r32(r);
            case 6 -> "mad." + pick(r, "lo", "hi") + "." + i32 + " " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r) + ", "
                    + r32(r);
            case 7 -> "mad.wide." + i32 + " " + reg(r, "%rd") + ", " + r32(r) + ", " + r32(r) + ", " + r64(r);
            case 8 -> "mad.hi.sat.s32 " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r) + ", " + r32(r);
            case 9 -> pick(r, "and", "or", "xor") + ".b32 " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r);
            case 10 -> pick(r, "and", "or", "xor") + ".b64 " + reg(r, "%rd") + ", " + r64(r) + ", " + r64(r);
            case 11 -> pick(r, "and", "or", "xor") + ".pred " + reg(r, "%p") + ", " + reg(r, "%p") + ", " + reg(r, "%p");
            case 12 -> "not." + pick(r, "b32", "b64", "pred") + " " + switch (r.nextInt(3)) {
                case 0 -> reg(r, "%r") + ", " + reg(r, "%r");
                case 1 -> reg(r, "%rd") + ", " + reg(r, "%rd");
                default -> reg(r, "%p") + ", " + reg(r, "%p");
            };
            case 13 -> pick(r, "shl", "shr") + "." + pick(r, "b32", "u32", "s32") + " " + reg(r, "%r") + ", " + reg(r, "%r")
                    + ", " + (r.nextBoolean() ? String.valueOf(r.nextInt(70)) : reg(r, "%r"));
            case 14 -> pick(r, "shl", "shr") + "." + pick(r, "b64", "u64", "s64") + " " + reg(r, "%rd") + ", "
                    + reg(r, "%rd") + ", " + (r.nextBoolean() ? String.valueOf(r.nextInt(70)) : reg(r, "%r"));
            case 15 -> pick(r, "min", "max", "div", "rem") + "." + i32 + " " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r);
            case 16 -> pick(r, "min", "max", "div", "rem") + "." + i64 + " " + reg(r, "%rd") + ", " + r64(r) + ", " + r64(r);
            case 17 -> "setp." + pick(r, INT_CMP) + "." + s32.replace("b32", "u32") + boolOp(r, reg(r, "%p"), r32(r), r32(r));
            case 18 -> "setp." + pick(r, INT_CMP) + "." + s64.replace("b64", "s64") + boolOp(r, reg(r, "%p"), r64(r), r64(r));
            case 19 -> "setp." + pick(r, FLOAT_CMP) + (r.nextInt(4) == 0 ? ".ftz" : "") + ".f32"
                    + boolOp(r, reg(r, "%p") + (r.nextInt(4) == 0 ? "|" + reg(r, "%p") : ""), f32(r), f32(r));
            case 20 -> "setp." + pick(r, FLOAT_CMP) + ".f64" + boolOp(r, reg(r, "%p"), f64(r), f64(r));
            case 21 -> switch (r.nextInt(3)) {
                case 0 -> "selp.b32 " + reg(r, "%r") + ", " + r32(r) + ", " + r32(r) + ", " + reg(r, "%p");
                case 1 -> "selp.b64 " + reg(r, "%rd") + ", " + r64(r) + ", " + r64(r) + ", " + reg(r, "%p");
                default -> "selp.f32 " + reg(r, "%f") + ", " + f32(r) + ", " + f32(r) + ", " + reg(r, "%p");
            };
            case 22 -> switch (r.nextInt(8)) {
                case 0 -> "cvt.u32.u64 " + reg(r, "%r") + ", " + reg(r, "%rd");
                case 1 -> "cvt." + pick(r, "s64", "u64") + "." + pick(r, "s32", "u32", "s16", "u8", "s8") + " "
                        + reg(r, "%rd") + ", " + reg(r, "%r");
                case 2 -> "cvt." + pick(r, "", "sat.") + pick(r, "s32", "u32", "u16", "s8") + "." + pick(r, "s64", "u64")
                        + " " + reg(r, "%r") + ", " + reg(r, "%rd");
                case 3 -> "cvt." + pick(r, F32_ROUND) + ".f32." + pick(r, "s32", "u32") + " " + reg(r, "%f") + ", " + reg(r, "%r");
                case 4 -> "cvt." + pick(r, "rni", "rzi", "rmi", "rpi") + "." + pick(r, "s32", "u32") + ".f32 " + reg(r, "%r")
                        + ", " + reg(r, "%f");
                case 5 -> "cvt.f64.f32 " + reg(r, "%fd") + ", " + reg(r, "%f");
                case 6 -> "cvt." + pick(r, F32_ROUND) + pick(r, "", ".ftz", ".sat") + ".f32.f64 " + reg(r, "%f") + ", "
                        + reg(r, "%fd");
                default -> "cvt." + pick(r, "rni", "rzi") + ".s64.f64 " + reg(r, "%rd") + ", " + reg(r, "%fd");
            };
            case 23 -> pick(r, "popc", "clz", "brev") + ".b32 " + reg(r, "%r") + ", " + reg(r, "%r");
            case 24 -> pick(r, "popc", "clz") + ".b64 " + reg(r, "%r") + ", " + reg(r, "%rd");
            case 25 -> pick(r, "mov.u32 " + reg(r, "%r") + ", " + r32(r), "mov.u64 " + reg(r, "%rd") + ", " + r64(r),
                    "mov.f32 " + reg(r, "%f") + ", " + f32(r), "mov.u32 " + reg(r, "%r") + ", %clock",
                    "mov.u64 " + reg(r, "%rd") + ", %clock64", "mov.u32 " + reg(r, "%r") + ", %laneid");
            case 26, 27 -> pick(r, "add", "sub", "mul") + "." + pick(r, F32_ROUND) + (r.nextInt(4) == 0 ? ".ftz" : "")
                    + (r.nextInt(4) == 0 ? ".sat" : "") + ".f32 " + reg(r, "%f") + ", " + f32(r) + ", " + f32(r);
            case 28 -> pick(r, "add", "sub", "mul") + (r.nextBoolean() ? ".rn" : "") + ".f64 " + reg(r, "%fd") + ", "
                    + f64(r) + ", " + f64(r);
            case 29 -> "fma." + pick(r, F32_ROUND) + (r.nextInt(4) == 0 ? ".ftz" : "") + (r.nextInt(4) == 0 ? ".sat" : "")
                    + ".f32 " + reg(r, "%f") + ", " + f32(r) + ", " + f32(r) + ", " + f32(r);
            case 30 -> pick(r, "fma.rn.f64", "mad.rn.f64") + " " + reg(r, "%fd") + ", " + f64(r) + ", " + f64(r) + ", "
                    + f64(r);
            case 31 -> pick(r, "div.rn.f32", "div.approx.f32", "div.full.f32", "min.f32", "max.f32", "min.ftz.f32")
                    + " " + reg(r, "%f") + ", " + f32(r) + ", " + f32(r);
            case 32 -> pick(r, "abs", "neg", "sqrt.rn", "rcp.rn", "ex2.approx", "sin.approx") + ".f32 " + reg(r, "%f")
                    + ", " + f32(r);
            default -> pick(r, "div.rn.f64", "min.f64", "max.f64") + " " + reg(r, "%fd") + ", " + f64(r) + ", " + f64(r);
        };
        return guard + body + ";";
    }

    private static String boolOp(Random r, String dst, String a, String b) {
        if (r.nextInt(3) == 0) {
            return "." + pick(r, "and", "or", "xor") + " " + dst + ", " + a + ", " + b + ", " + pred(r);
        }
        return " " + dst + ", " + a + ", " + b;
    }

    /** Input memory for every thread: integers of every size, and floats with NaNs, infinities, subnormals. */
    private static byte[] memory(long seed) {
        Random r = new Random(seed);
        byte[] m = new byte[THREADS * AREA];
        r.nextBytes(m);
        for (int t = 0; t < THREADS; t++) {
            int a = t * AREA;
            for (int k = 0; k < N; k++) {
                if (r.nextBoolean()) {
                    PtxLaunch.put(m, a + 4 * k, 4, r.nextInt(9) - 4);
                }
                if (r.nextBoolean()) {
                    PtxLaunch.put(m, a + 128 + 4 * k, 4, r.nextBoolean() ? SPECIAL_F32[r.nextInt(SPECIAL_F32.length)]
                            : Float.floatToRawIntBits((r.nextFloat() - 0.5f) * 10));
                }
                if (r.nextBoolean()) {
                    PtxLaunch.put(m, a + 192 + 8 * k, 8, r.nextBoolean() ? SPECIAL_F64[r.nextInt(SPECIAL_F64.length)]
                            : Double.doubleToRawLongBits((r.nextDouble() - 0.5) * 10));
                }
            }
        }
        return m;
    }

    /** The first register slot of {@code %fd0}: the special registers, then %p, %r, %rd and %f, declared in that order. */
    private static final int FD = Special.COUNT + 4 * (N + 1);

    private static long nan(long v) {
        return Double.isNaN(Double.longBitsToDouble(v)) ? 0x7ff8000000000000L : v;
    }

    /** {@code r} with the .f64 registers' NaNs made one. */
    private static long[] f64NaNs(long[] r) {
        long[] o = r.clone();
        for (int k = 0; k <= N; k++) {
            o[FD + k] = nan(o[FD + k]);
        }
        return o;
    }

    /** {@code m} with the stored .f64 results' NaNs made one. */
    private static byte[] f64NaNs(byte[] m) {
        byte[] o = m.clone();
        for (int t = 0; t < THREADS; t++) {
            for (int k = 0; k < N; k++) {
                int at = t * AREA + OUT + 192 + 8 * k;
                PtxLaunch.put(o, at, 8, nan(PtxLaunch.get(o, at, 8)));
            }
        }
        return o;
    }

    /** The registers of each thread after the run, and the memory. */
    private record State(List<long[]> registers, byte[] memory, String fault) {
    }

    private static State run(String ptx, byte[] mem, boolean compiled) {
        PtxModule m = PtxModule.parse(ptx);
        PtxFunction fn = m.function("prog");
        assertThat(fn.unsupported()).as("the generated program:\n%s", ptx).isNull();
        byte[] params = new byte[8];
        PtxLaunch.put(params, 0, 8, PtxCompilerTest.BASE);
        FlatGlobal g = new FlatGlobal(PtxCompilerTest.BASE, mem.clone());
        PtxLaunch l = new PtxLaunch(m, fn, "prop::prog", params, new int[] {1, 1, 1}, new int[] {THREADS, 1, 1}, 0, g, 0,
                132, compiled);
        assertThat(l.runsCompiled()).as("compiled: %s", PtxCompiler.refusal(fn)).isEqualTo(compiled);
        PtxLaunch.Block b = new PtxLaunch.Block(l, 0, 0, 0);
        String fault = null;
        try {
            b.run();
        } catch (PtxFault f) {
            fault = f.getMessage();
        }
        List<long[]> regs = new ArrayList<>();
        for (PtxLaunch.Thr t : b.threads) {
            regs.add(t.frame.r);
        }
        return new State(regs, g.bytes, fault);
    }

    @Property(tries = 250)
    void aStraightLineProgramGivesTheSameRegistersAndMemoryCompiledAsInterpreted(
            @ForAll @Size(min = 1, max = 48) List<@IntRange(min = 0, max = 1 << 30) Integer> choices,
            @ForAll long memorySeed) {
        String ptx = program(choices);
        byte[] mem = memory(memorySeed);
        State i = run(ptx, mem, false);
        State c = run(ptx, mem, true);
        assertThat(i.fault()).as(ptx).isNull();
        assertThat(c.fault()).as(ptx).isNull();
        for (int t = 0; t < THREADS; t++) {
            assertThat(f64NaNs(c.registers().get(t))).as("thread %d's registers after\n%s", t, ptx)
                    .isEqualTo(f64NaNs(i.registers().get(t)));
        }
        assertThat(f64NaNs(c.memory())).as(ptx).isEqualTo(f64NaNs(i.memory()));
    }
}
