// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * atom and red, every operation and type, on global and on shared memory: the value each returns
 * and the one it leaves, against Java. (Many blocks at once: {@code PtxAtomicsParallelTest}.)
 */
class PtxAtomicsTest {

    /** One atomic: the operation and type as PTX spells them, the word's value before, the operand(s). */
    private record Case(String op, String type, long init, long b, long c) {
        int bits() {
            return Integer.parseInt(type.substring(1));
        }

        long mask() {
            return bits() == 64 ? -1L : 0xffffffffL;
        }

        String imm(long v) {
            return switch (type) {
                case "f32" -> String.format("0f%08X", v & 0xffffffffL);
                case "f64" -> String.format("0d%016X", v);
                default -> "0x" + Long.toHexString(v & mask());
            };
        }

        /**
         * {@return the value the word holds after the atomic, from the ISA's description of each
         * operation} {@code atom.add.f32} flushes subnormals on global memory only (PTX's "current
         * implementation"; the H200 keeps them on shared memory, as the PTX-semantics contract shows).
         */
        long after(boolean shared) {
            long o = init & mask();
            long x = b & mask();
            boolean signed = type.startsWith("s");
            long so = bits() == 32 ? (int) o : o;
            long sx = bits() == 32 ? (int) x : x;
            long r = switch (op) {
                case "add" -> switch (type) {
                    case "f32" -> {
                        float a = Float.intBitsToFloat((int) o);
                        float y = Float.intBitsToFloat((int) x);
                        float z = a + y;
                        // atom.add.f32 on global memory flushes subnormal inputs and results to zero.
                        if (!shared && Math.abs(a) < Float.MIN_NORMAL) {
                            z = y;
                        }
                        if (!shared && Math.abs(z) < Float.MIN_NORMAL) {
                            z = Math.copySign(0f, z);
                        }
                        yield Float.floatToRawIntBits(z);
                    }
                    case "f64" -> Double.doubleToRawLongBits(Double.longBitsToDouble(o) + Double.longBitsToDouble(x));
                    default -> o + x;
                };
                case "min" -> (signed ? Long.compare(so, sx) : Long.compareUnsigned(o, x)) <= 0 ? o : x;
                case "max" -> (signed ? Long.compare(so, sx) : Long.compareUnsigned(o, x)) >= 0 ? o : x;
                case "and" -> o & x;
                case "or" -> o | x;
                case "xor" -> o ^ x;
                case "exch" -> x;
                case "cas" -> o == x ? c & mask() : o;
                case "inc" -> Long.compareUnsigned(o, x) >= 0 ? 0 : o + 1;
                default -> o == 0 || Long.compareUnsigned(o, x) > 0 ? x : o - 1;
            };
            return r & mask();
        }
    }

    private static long f32(float f) {
        return Float.floatToRawIntBits(f) & 0xffffffffL;
    }

    private static List<Case> cases() {
        List<Case> c = new ArrayList<>();
        c.add(new Case("add", "u32", 0xffffffffL, 2, 0));
        c.add(new Case("add", "s32", -5, 3, 0));
        c.add(new Case("add", "u64", -1, 1, 0));
        c.add(new Case("add", "s64", Long.MIN_VALUE, -1, 0));
        c.add(new Case("add", "f32", f32(1.5f), f32(2.25f), 0));
        c.add(new Case("add", "f32", f32(Float.MIN_NORMAL / 4), f32(0f), 0));
        c.add(new Case("add", "f32", f32(Float.MIN_NORMAL * 1.5f), f32(-Float.MIN_NORMAL), 0));
        c.add(new Case("add", "f64", Double.doubleToRawLongBits(0.1), Double.doubleToRawLongBits(0.2), 0));
        c.add(new Case("add", "f64", Double.doubleToRawLongBits(Double.MIN_NORMAL * 1.5), Double.doubleToRawLongBits(-Double.MIN_NORMAL), 0));
        for (String t : new String[] {"s32", "u32", "s64", "u64"}) {
            c.add(new Case("min", t, -5, 3, 0));
            c.add(new Case("max", t, -5, 3, 0));
            c.add(new Case("min", t, 3, -5, 0));
            c.add(new Case("max", t, 3, -5, 0));
        }
        for (String t : new String[] {"b32", "b64"}) {
            long a = 0xf0f0_1234_5678_9abcL;
            long b = 0x0ff0_ffff_0000_1111L;
            c.add(new Case("and", t, a, b, 0));
            c.add(new Case("or", t, a, b, 0));
            c.add(new Case("xor", t, a, b, 0));
            c.add(new Case("exch", t, a, b, 0));
            c.add(new Case("cas", t, a, a, b));
            c.add(new Case("cas", t, a, a + 1, b));
        }
        c.add(new Case("inc", "u32", 5, 10, 0));
        c.add(new Case("inc", "u32", 10, 10, 0));
        c.add(new Case("inc", "u32", 11, 10, 0));
        c.add(new Case("dec", "u32", 5, 10, 0));
        c.add(new Case("dec", "u32", 0, 10, 0));
        c.add(new Case("dec", "u32", 11, 10, 0));
        return c;
    }

    private static String reg(Case k, int i) {
        return switch (k.type) {
            case "f32" -> "%f" + i;
            case "f64" -> "%fd" + i;
            default -> k.bits() == 64 ? "%rd" + i : "%r" + i;
        };
    }

    /**
     * A one-thread kernel that runs every case on its own 8-byte word of {@code p} (or of shared
     * memory, copied in from {@code p} and back), storing what each atom returned at {@code old}.
     */
    private static String kernel(List<Case> cases, String space, boolean red) {
        int n = cases.size();
        StringBuilder s = new StringBuilder(PtxRig.HEAD);
        if (space.equals("shared")) {
            s.append(".shared .align 8 .b8 sm[").append(8 * n).append("];\n");
        }
        s.append(".visible .entry atoms(\n\t.param .u64 atoms_p,\n\t.param .u64 atoms_old\n)\n{\n");
        s.append("\t.reg .b32 %r<").append(n).append(">;\n\t.reg .b64 %rd<").append(n + 4).append(">;\n");
        s.append("\t.reg .f32 %f<").append(n).append(">;\n\t.reg .f64 %fd<").append(n).append(">;\n");
        s.append("\t.reg .b64 %p;\n\t.reg .b64 %o;\n\t.reg .b64 %t;\n");
        s.append("\tld.param.u64 %p, [atoms_p];\n\tld.param.u64 %o, [atoms_old];\n");
        for (int i = 0; i < n; i++) {
            String addr = space.equals("shared") ? "[sm+" + 8 * i + "]" : "[%p+" + 8 * i + "]";
            if (space.equals("shared")) {
                s.append("\tld.global.u64 %t, [%p+").append(8 * i).append("];\n\tst.shared.u64 [sm+").append(8 * i)
                        .append("], %t;\n");
            }
            Case k = cases.get(i);
            String operands = k.imm(k.b) + (k.op.equals("cas") ? ", " + k.imm(k.c) : "");
            if (red) {
                s.append("\tred.").append(space).append('.').append(k.op).append('.').append(k.type).append(' ').append(addr)
                        .append(", ").append(operands).append(";\n");
            } else {
                s.append("\tatom.").append(space).append('.').append(k.op).append('.').append(k.type).append(' ')
                        .append(reg(k, i)).append(", ").append(addr).append(", ").append(operands).append(";\n");
                s.append("\tst.global.").append(k.type).append(" [%o+").append(8 * i).append("], ").append(reg(k, i)).append(";\n");
            }
            if (space.equals("shared")) {
                s.append("\tld.shared.u64 %t, [sm+").append(8 * i).append("];\n\tst.global.u64 [%p+").append(8 * i)
                        .append("], %t;\n");
            }
        }
        s.append("\tret;\n}\n");
        return s.toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"global", "shared"})
    void everyOperationAndTypeReturnsTheOldValueAndLeavesTheNewOne(String space) {
        List<Case> cases = cases();
        for (boolean red : new boolean[] {false, true}) {
            List<Case> run = red ? cases.stream().filter(k -> !k.op.equals("cas") && !k.op.equals("exch")).toList() : cases;
            HeapGlobal mem = new HeapGlobal();
            long p = mem.alloc(8 * run.size());
            long old = mem.alloc(8 * run.size());
            ByteBuffer pb = mem.region(p);
            for (int i = 0; i < run.size(); i++) {
                pb.putLong(8 * i, run.get(i).init & run.get(i).mask());
            }
            PtxRig.launch(kernel(run, space, red), "atoms", mem, 1, 1, 0, p, old);
            for (int i = 0; i < run.size(); i++) {
                Case k = run.get(i);
                String what = (red ? "red." : "atom.") + space + "." + k.op + "." + k.type + " on 0x" + Long.toHexString(k.init)
                        + " with 0x" + Long.toHexString(k.b);
                assertThat(pb.getLong(8 * i)).as("%s leaves", what).isEqualTo(k.after(space.equals("shared")));
                if (!red) {
                    assertThat(mem.region(old).getLong(8 * i) & k.mask()).as("%s returns", what).isEqualTo(k.init & k.mask());
                }
            }
        }
    }
}
