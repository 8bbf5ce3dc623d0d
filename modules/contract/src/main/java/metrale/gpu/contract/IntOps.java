// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

/**
 * The integer operations of {@code ops.cu} that Java has no method for, written from the PTX
 * ISA's pseudocode ({@code prmt}, {@code bfe}, {@code bfi}), and the names of the kernels' results.
 */
final class IntOps {

    /** The results of {@code i32_ops}, in order. */
    static final String[] I32_NAMES = {
        "__mulhi", "__umulhi", "__popc", "__clz", "__brev", "__byte_perm", "__funnelshift_l",
        "__funnelshift_r", "__funnelshift_lc", "__funnelshift_rc", "bfe.u32", "bfe.s32", "bfi.b32", "div.s32",
        "rem.s32", "div.u32", "rem.u32", "shl.b32", "shr.s32", "shr.u32", "__mul24", "__umul24", "__sad", "__usad",
        "add.sat.s32", "sub.sat.s32", "min.s32", "max.s32", "min.u32", "max.u32", "abs.s32", "__hadd", "__rhadd",
        "__uhadd",
        "prmt.b32",
    };

    /** The results of {@code i64_ops}, in order. */
    static final String[] I64_NAMES = {
        "__mul64hi", "__umul64hi", "__popcll", "__clzll", "__brevll", "div.s64", "rem.s64", "div.u64", "rem.u64",
        "shl.b64", "shr.s64", "shr.u64", "bfe.u64", "bfe.s64", "bfi.b64", "min.s64", "max.s64", "min.u64", "max.u64",
        "mul.wide.s32", "mul.wide.u32",
    };

    private IntOps() {
    }

    /**
     * {@return {@code prmt.b32 d, a, b, c}, the default mode} The bytes of {@code b:a} are numbered
     * 0 to 7 from a's lowest; each nibble of {@code c} picks one by its low three bits, and its
     * fourth bit replicates the picked byte's sign bit over the whole byte instead.
     */
    static long prmt(int a, int b, int c) {
        long bytes = (a & 0xffffffffL) | ((long) b << 32);
        long d = 0;
        for (int i = 0; i < 4; i++) {
            int sel = (c >>> (4 * i)) & 0xf;
            long v = (bytes >>> (8 * (sel & 7))) & 0xff;
            if ((sel & 8) != 0) {
                v = (v & 0x80) == 0 ? 0 : 0xff;
            }
            d |= v << (8 * i);
        }
        return d;
    }

    /**
     * {@return {@code bfe} on a {@code width}-bit value} Position and length are the low bytes of
     * {@code b} and {@code c} for 32 bits and the whole unsigned values for 64 bits, as the H200
     * reads them; bits past the value's top read as the sign bit, which is the
     * field's top bit (clamped to the value's top) for a signed field of nonzero length, else 0.
     */
    static long bfe(long a, int b, int c, int width, boolean signed) {
        int msb = width - 1;
        // PTX's text reads the low bytes; the H200 reads whole unsigned values for 64 bits (measured).
        long pos = width == 64 ? b & 0xffffffffL : b & 0xff;
        long len = width == 64 ? c & 0xffffffffL : c & 0xff;
        long sbit = !signed || len == 0 ? 0 : (a >>> Math.min(pos + len - 1, msb)) & 1;
        long d = 0;
        for (int i = 0; i <= msb; i++) {
            long bit = i < len && pos + i <= msb ? (a >>> (pos + i)) & 1 : sbit;
            d |= bit << i;
        }
        return width == 32 ? (signed ? (long) (int) d : d & 0xffffffffL) : d;
    }

    /**
     * {@return {@code bfi}: {@code b} with the low {@code len} bits of {@code a} put at {@code pos}}
     * Position and length are the low bytes of {@code c} and {@code dLen}; bits that would land past
     * the value's top are dropped.
     */
    static long bfi(long a, long b, int c, int dLen, int width) {
        int msb = width - 1;
        long pos = width == 64 ? c & 0xffffffffL : c & 0xff;
        long len = width == 64 ? dLen & 0xffffffffL : dLen & 0xff;
        long f = b;
        for (int i = 0; i < len && pos + i <= msb; i++) {
            long bit = (a >>> i) & 1;
            f = (f & ~(1L << (pos + i))) | (bit << (pos + i));
        }
        return width == 32 ? f & 0xffffffffL : f;
    }
}
