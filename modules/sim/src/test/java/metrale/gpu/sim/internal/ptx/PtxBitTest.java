// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bit instructions of the PTX engine against Java: and, or, xor, not, cnot, shl and shr (shift
 * counts at and past the width), popc, clz, brev, bfe, bfi, prmt and shf.
 */
class PtxBitTest {

    private static long mask(int bits) {
        return bits >= 64 ? -1L : (1L << bits) - 1;
    }

    private static long[][] randomRows(int n, int arity, long seed, long... extra) {
        SplittableRandom r = new SplittableRandom(seed);
        List<long[]> rows = new ArrayList<>();
        for (long e : extra) {
            long[] row = new long[arity];
            java.util.Arrays.fill(row, e);
            rows.add(row);
        }
        for (int i = 0; i < n; i++) {
            long[] row = new long[arity];
            for (int k = 0; k < arity; k++) {
                row[k] = switch (r.nextInt(4)) {
                    case 0 -> r.nextLong() & 0xffL;
                    case 1 -> r.nextLong() >>> r.nextInt(64);
                    default -> r.nextLong();
                };
            }
            rows.add(row);
        }
        return rows.toArray(new long[0][]);
    }

    @ParameterizedTest
    @ValueSource(ints = {16, 32, 64})
    void logicOpsAndNotAndCnot(int bits) {
        String b = "b" + bits;
        long[][] rows = randomRows(300, 2, bits, 0, -1, 1);
        long[][] got = PtxRig.run(List.of(b, b), List.of(b, b), "and." + b + " %d, %a, %b;\nor." + b + " %q, %a, %b;", rows);
        long[][] got2 = PtxRig.run(List.of(b, b), List.of(b, b), "xor." + b + " %d, %a, %b;\nnot." + b + " %q, %a;", rows);
        long[][] got3 = PtxRig.run(List.of(b), List.of(b), "cnot." + b + " %d, %a;", rows);
        long m = mask(bits);
        for (int i = 0; i < rows.length; i++) {
            long x = rows[i][0] & m;
            long y = rows[i][1] & m;
            assertThat(got[i]).as("and/or 0x%x 0x%x", x, y).containsExactly(x & y, x | y);
            assertThat(got2[i]).as("xor/not 0x%x 0x%x", x, y).containsExactly(x ^ y, ~x & m);
            assertThat(got3[i][0]).as("cnot 0x%x", x).isEqualTo(x == 0 ? 1 : 0);
        }
    }

    @Test
    void predicateLogic() {
        long[][] rows = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
        long[][] got = PtxRig.run(List.of("pred", "pred"), List.of("pred", "pred"),
                "and.pred %d, %a, %b;\nor.pred %q, %a, %b;", rows);
        long[][] got2 = PtxRig.run(List.of("pred", "pred"), List.of("pred", "pred"),
                "xor.pred %d, %a, %b;\nnot.pred %q, %a;", rows);
        for (int i = 0; i < rows.length; i++) {
            long x = rows[i][0];
            long y = rows[i][1];
            assertThat(got[i]).containsExactly(x & y, x | y);
            assertThat(got2[i]).containsExactly(x ^ y, 1 - x);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {16, 32, 64})
    void shiftsAtAndPastTheWidth(int bits) {
        String b = "b" + bits;
        List<long[]> rows = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(bits);
        long[] values = {1, -1, 0x8000_0000_0000_0000L >> (64 - bits), 0x1234_5678_9abc_def0L, r.nextLong(), r.nextLong()};
        long[] counts = {0, 1, bits - 1, bits, bits + 1, 63, 64, 65, 200, 0xffffffffL, 0x1_0000_0001L};
        for (long v : values) {
            for (long c : counts) {
                rows.add(new long[] {v, c});
            }
        }
        long[][] in = rows.toArray(new long[0][]);
        String s = "s" + bits;
        String u = "u" + bits;
        long[][] got = PtxRig.run(List.of(b, "u32"), List.of(b, b), "shl." + b + " %d, %a, %b;\nshr." + u + " %q, %a, %b;", in);
        long[][] gotS = PtxRig.run(List.of(s, "u32"), List.of(s, b), "shr." + s + " %d, %a, %b;\nshr." + b + " %q, %a, %b;", in);
        IntCases st = IntCases.of(s);
        long m = mask(bits);
        for (int i = 0; i < in.length; i++) {
            long x = in[i][0] & m;
            long k = in[i][1] & 0xffffffffL;
            long shl = k >= bits ? 0 : (x << k) & m;
            long shrU = k >= bits ? 0 : x >>> k;
            long sx = st.v(x);
            long shrS = (k >= bits ? (sx < 0 ? -1 : 0) : sx >> k) & m;
            assertThat(got[i]).as("shl/shr.u 0x%x by %d", x, k).containsExactly(shl, shrU);
            assertThat(gotS[i]).as("shr.s/shr.b 0x%x by %d", x, k).containsExactly(shrS, shrU);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 64})
    void popcClzBrev(int bits) {
        String b = "b" + bits;
        long[][] rows = randomRows(300, 1, 40 + bits, 0, -1, 1, Long.MIN_VALUE, 1L << 31);
        long[][] got = PtxRig.run(List.of(b), List.of("u32", "u32"), "popc." + b + " %d, %a;\nclz." + b + " %q, %a;", rows);
        long[][] rev = PtxRig.run(List.of(b), List.of(b), "brev." + b + " %d, %a;", rows);
        for (int i = 0; i < rows.length; i++) {
            long x = rows[i][0] & mask(bits);
            long clz = bits == 64 ? Long.numberOfLeadingZeros(x) : Long.numberOfLeadingZeros(x) - 32;
            long brev = 0;
            for (int k = 0; k < bits; k++) {
                brev |= ((x >>> k) & 1) << (bits - 1 - k);
            }
            assertThat(got[i]).as("popc/clz 0x%x", x).containsExactly((long) Long.bitCount(x), clz);
            assertThat(rev[i][0]).as("brev 0x%x", x).isEqualTo(brev);
        }
    }

    /**
     * The field bfe extracts, from the ISA's description: {@code len} bits at {@code pos},
     * sign-extended for .s types. Position and length are the low bytes for 32 bits and, as the
     * H200 reads them, the whole unsigned 32-bit values for 64 bits.
     */
    private static long bfeRef(int bits, boolean signed, long a, long b, long c) {
        int msb = bits - 1;
        long pos = bits == 64 ? b & 0xffffffffL : b & 0xff;
        long len = bits == 64 ? c & 0xffffffffL : c & 0xff;
        long x = a & mask(bits);
        int taken = pos > msb ? 0 : (int) Math.min(len, bits - pos);
        long field = taken == 0 ? 0 : (x >>> (int) pos) & mask(taken);
        if (!signed || len == 0) {
            return field;
        }
        boolean sbit = ((x >>> Math.min(pos + len - 1, msb)) & 1) != 0;
        return sbit ? (field | ~mask(taken)) & mask(bits) : field;
    }

    private static long bfiRef(int bits, long a, long b, long c, long d) {
        long pos = bits == 64 ? c & 0xffffffffL : c & 0xff;
        long len = bits == 64 ? d & 0xffffffffL : d & 0xff;
        int taken = pos >= bits ? 0 : (int) Math.min(len, bits - pos);
        long m = taken == 0 ? 0 : mask(taken) << pos;
        return ((b & ~m) | ((a << pos) & m)) & mask(bits);
    }

    @ParameterizedTest
    @ValueSource(strings = {"u32", "s32", "u64", "s64"})
    void bfeExtractsAndSignExtends(String name) {
        IntCases t = IntCases.of(name);
        SplittableRandom r = new SplittableRandom(name.hashCode());
        List<long[]> rows = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            long pos = i < 40 ? i % 8 * 10 : r.nextInt(80) | (r.nextBoolean() ? 0 : (long) r.nextInt(4) << 8);
            long len = i < 40 ? i / 8 * 9 : r.nextInt(80) | (r.nextBoolean() ? 0 : (long) r.nextInt(4) << 8);
            rows.add(new long[] {r.nextLong(), pos, len});
        }
        long[][] in = rows.toArray(new long[0][]);
        long[][] got = PtxRig.run(List.of(name, "u32", "u32"), List.of(name), "bfe." + name + " %d, %a, %b, %c;", in);
        for (int i = 0; i < in.length; i++) {
            assertThat(got[i][0]).as("bfe 0x%x pos %d len %d", in[i][0], in[i][1], in[i][2])
                    .isEqualTo(bfeRef(t.bits(), t.signed(), in[i][0], in[i][1], in[i][2]));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 64})
    void bfiInsertsAField(int bits) {
        String b = "b" + bits;
        SplittableRandom r = new SplittableRandom(bits * 7L);
        long[][] in = new long[400][];
        for (int i = 0; i < in.length; i++) {
            in[i] = new long[] {r.nextLong(), r.nextLong(), r.nextInt(80) | (i % 3 == 0 ? 0x100 : 0), r.nextInt(80)};
        }
        long[][] got = PtxRig.run(List.of(b, b, "u32", "u32"), List.of(b), "bfi." + b + " %d, %a, %b, %c, %e;", in);
        for (int i = 0; i < in.length; i++) {
            assertThat(got[i][0]).as("bfi 0x%x into 0x%x at %d len %d", in[i][0], in[i][1], in[i][2], in[i][3])
                    .isEqualTo(bfiRef(bits, in[i][0], in[i][1], in[i][2], in[i][3]));
        }
    }

    @Test
    void prmtPicksAndSignReplicatesBytes() {
        SplittableRandom r = new SplittableRandom(11);
        long[][] in = new long[300][];
        for (int i = 0; i < in.length; i++) {
            in[i] = new long[] {r.nextLong(), r.nextLong(), i == 0 ? 0x3210 : i == 1 ? 0x7654 : r.nextInt(0x10000)};
        }
        long[][] got = PtxRig.run(List.of("b32", "b32", "b32"), List.of("b32"), "prmt.b32 %d, %a, %b, %c;", in);
        for (int i = 0; i < in.length; i++) {
            ByteBuffer bytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            bytes.putInt(0, (int) in[i][0]).putInt(4, (int) in[i][1]);
            long want = 0;
            for (int k = 0; k < 4; k++) {
                int sel = (int) (in[i][2] >>> (4 * k)) & 0xf;
                byte chosen = bytes.get(sel & 7);
                int out = (sel & 8) != 0 ? (chosen < 0 ? 0xff : 0) : chosen & 0xff;
                want |= (long) out << (8 * k);
            }
            assertThat(got[i][0]).as("prmt 0x%x 0x%x sel 0x%x", in[i][0], in[i][1], in[i][2]).isEqualTo(want);
        }
        assertThat(got[0][0]).isEqualTo(in[0][0] & 0xffffffffL);
        assertThat(got[1][0]).isEqualTo(in[1][1] & 0xffffffffL);
    }

    @Test
    void funnelShiftsWrapAndClamp() {
        SplittableRandom r = new SplittableRandom(12);
        List<long[]> rows = new ArrayList<>();
        for (long n : new long[] {0, 1, 5, 31, 32, 33, 63, 64, 100, 0xffffffffL}) {
            rows.add(new long[] {r.nextLong(), r.nextLong(), n});
        }
        long[][] in = rows.toArray(new long[0][]);
        long[][] wrap = PtxRig.run(List.of("b32", "b32", "u32"), List.of("b32", "b32"),
                "shf.l.wrap.b32 %d, %a, %b, %c;\nshf.r.wrap.b32 %q, %a, %b, %c;", in);
        long[][] clamp = PtxRig.run(List.of("b32", "b32", "u32"), List.of("b32", "b32"),
                "shf.l.clamp.b32 %d, %a, %b, %c;\nshf.r.clamp.b32 %q, %a, %b, %c;", in);
        for (int i = 0; i < in.length; i++) {
            long a = in[i][0] & 0xffffffffL;
            long b = in[i][1] & 0xffffffffL;
            long c = in[i][2];
            for (boolean isClamp : new boolean[] {false, true}) {
                int n = (int) (isClamp ? Math.min(c, 32) : c & 31);
                // The ISA: shf.l gives the high word of {b:a} << n, shf.r the low word of {b:a} >> n.
                long left = n == 0 ? b : n == 32 ? a : ((b << n) | (a >>> (32 - n))) & 0xffffffffL;
                long right = n == 0 ? a : n == 32 ? b : ((b << (32 - n)) | (a >>> n)) & 0xffffffffL;
                long[] g = isClamp ? clamp[i] : wrap[i];
                assertThat(g).as("shf %s 0x%x 0x%x by %d", isClamp ? "clamp" : "wrap", a, b, c).containsExactly(left, right);
            }
        }
    }
}
