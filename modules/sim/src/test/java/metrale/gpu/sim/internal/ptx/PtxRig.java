// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Runs small PTX texts on the engine against a {@link HeapGlobal}, for instruction-level tests.
 *
 * <p>{@link #run} wraps an instruction sequence in a kernel with one thread per row of inputs: the
 * thread loads its inputs into registers {@code %a %b %c %e} (declared with the given types; a
 * {@code pred} input is true when the low 32 bits of its word are not zero), runs the body, and stores {@code %d} and
 * {@code %q} (the outputs, likewise typed) to its output slot. Each input and output is one 8-byte
 * word, zeroed before, so an output narrower than 64 bits comes back zero-extended.
 */
final class PtxRig {

    static final String HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n\n";
    private static final String[] IN = {"%a", "%b", "%c", "%e"};
    private static final String[] OUT = {"%d", "%q"};

    private PtxRig() {
    }

    /** {@return the module, every function of it checked to be one the engine runs} */
    static PtxModule parse(String ptx) {
        // As the simulator's module loader does: comments out, line breaks kept.
        String plain = java.util.regex.Pattern.compile("/\\*.*?\\*/", java.util.regex.Pattern.DOTALL).matcher(ptx)
                .replaceAll(r -> r.group().replaceAll("[^\n]", " ")).replaceAll("//[^\n]*", "");
        PtxModule m = PtxModule.parse(plain);
        for (PtxFunction f : m.functions().values()) {
            assertThat(f.unsupported()).as("%s of\n%s", f, ptx).isNull();
        }
        return m;
    }

    /**
     * Runs {@code entry} of {@code ptx} over a grid.
     *
     * @param args   the kernel's arguments, each an 8-byte word (pointers, or the low bytes used)
     */
    static PtxLaunch launch(String ptx, String entry, HeapGlobal mem, int grid, int block, int dynShared, long... args) {
        PtxModule m = parse(ptx);
        PtxFunction f = m.function(entry);
        byte[] params = new byte[f.paramBytes()];
        int[] off = f.paramOffsets();
        int[] size = f.paramSizes();
        ByteBuffer p = ByteBuffer.wrap(params).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < args.length; i++) {
            for (int k = 0; k < size[i]; k++) {
                p.put(off[i] + k, (byte) (args[i] >>> (8 * k)));
            }
        }
        PtxLaunch l = new PtxLaunch(m, f, "test::" + entry, params, new int[] {grid, 1, 1}, new int[] {block, 1, 1},
                dynShared, mem, 0, 132);
        for (int b = 0; b < grid; b++) {
            l.runBlock(b, 0, 0);
        }
        return l;
    }

    private static String ldType(String t) {
        return t.equals("pred") ? "u32" : t;
    }

    /** {@return the kernel text {@link #run} runs} */
    static String kernel(List<String> ins, List<String> outs, String body) {
        StringBuilder s = new StringBuilder(HEAD);
        s.append(".visible .entry t(\n\t.param .u64 t_in,\n\t.param .u64 t_out,\n\t.param .u32 t_n\n)\n{\n");
        s.append("\t.reg .pred %p<4>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<10>;\n");
        for (int k = 0; k < ins.size(); k++) {
            s.append("\t.reg .").append(ins.get(k)).append(' ').append(IN[k]).append(";\n");
        }
        for (int k = 0; k < outs.size(); k++) {
            s.append("\t.reg .").append(outs.get(k)).append(' ').append(OUT[k]).append(";\n");
        }
        s.append("""
                	ld.param.u64 %rd1, [t_in];
                	ld.param.u64 %rd2, [t_out];
                	ld.param.u32 %r1, [t_n];
                	mov.u32 %r2, %ctaid.x;
                	mov.u32 %r3, %ntid.x;
                	mov.u32 %r4, %tid.x;
                	mad.lo.s32 %r5, %r2, %r3, %r4;
                	setp.ge.u32 %p0, %r5, %r1;
                	@%p0 bra $DONE;
                	cvta.to.global.u64 %rd1, %rd1;
                	cvta.to.global.u64 %rd2, %rd2;
                	mul.wide.u32 %rd3, %r5, 32;
                	add.s64 %rd4, %rd1, %rd3;
                	mul.wide.u32 %rd5, %r5, 16;
                	add.s64 %rd6, %rd2, %rd5;
                """);
        for (int k = 0; k < ins.size(); k++) {
            if (ins.get(k).equals("pred")) {
                s.append("\tld.global.u32 %r6, [%rd4+").append(8 * k).append("];\n");
                s.append("\tsetp.ne.u32 ").append(IN[k]).append(", %r6, 0;\n");
            } else {
                s.append("\tld.global.").append(ldType(ins.get(k))).append(' ').append(IN[k]).append(", [%rd4+")
                        .append(8 * k).append("];\n");
            }
        }
        for (String line : body.strip().split("\n")) {
            s.append('\t').append(line.strip()).append('\n');
        }
        for (int k = 0; k < outs.size(); k++) {
            if (outs.get(k).equals("pred")) {
                s.append("\tselp.u32 %r7, 1, 0, ").append(OUT[k]).append(";\n");
                s.append("\tst.global.u32 [%rd6+").append(8 * k).append("], %r7;\n");
            } else {
                s.append("\tst.global.").append(outs.get(k)).append(" [%rd6+").append(8 * k).append("], ").append(OUT[k])
                        .append(";\n");
            }
        }
        s.append("$DONE:\n\tret;\n}\n");
        return s.toString();
    }

    /**
     * Runs {@code body} once per row of {@code rows} (each row the input words, in order) and
     * {@return the output words of each row}
     */
    static long[][] run(List<String> ins, List<String> outs, String body, long[][] rows) {
        HeapGlobal mem = new HeapGlobal();
        int n = rows.length;
        long in = mem.alloc(Math.max(32, 32 * n));
        long out = mem.alloc(Math.max(16, 16 * n));
        ByteBuffer ib = mem.region(in);
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < rows[i].length; k++) {
                ib.putLong(32 * i + 8 * k, rows[i][k]);
            }
        }
        int block = 128;
        launch(kernel(ins, outs, body), "t", mem, (n + block - 1) / block, block, 0, in, out, n);
        ByteBuffer ob = mem.region(out);
        long[][] r = new long[n][outs.size()];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < outs.size(); k++) {
                r[i][k] = ob.getLong(16 * i + 8 * k);
            }
        }
        return r;
    }

    /** {@return the one output of {@code body} per row, every input of type {@code in}, the output of type {@code out}} */
    static long[] run1(String in, String out, String body, long[]... rows) {
        int arity = rows.length == 0 ? 0 : rows[0].length;
        List<String> ins = java.util.Collections.nCopies(arity, in);
        long[][] r = run(ins, List.of(out), body, rows);
        long[] o = new long[r.length];
        for (int i = 0; i < r.length; i++) {
            o[i] = r[i][0];
        }
        return o;
    }

    /** {@return {@code v} cut to {@code bits}, zero-extended: what an output word of that width holds} */
    static long w(int bits, long v) {
        return bits == 64 ? v : v & ((1L << bits) - 1);
    }

    /** {@return the float's bits as an input word} */
    static long fb(float f) {
        return Float.floatToRawIntBits(f) & 0xffffffffL;
    }

    /** {@return the double's bits as an input word} */
    static long db(double d) {
        return Double.doubleToRawLongBits(d);
    }
}
