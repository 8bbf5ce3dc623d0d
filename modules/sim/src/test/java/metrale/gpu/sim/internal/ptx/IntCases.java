// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** An integer PTX type as the tests see it ({@code s32}, {@code u64}, ...), and input rows over it. */
record IntCases(String name, int bits, boolean signed) {

    static IntCases of(String name) {
        return new IntCases(name, Integer.parseInt(name.substring(1)), name.charAt(0) == 's');
    }

    /** {@return the word's low {@code bits} read as this type: sign- or zero-extended} */
    long v(long word) {
        if (bits == 64) {
            return word;
        }
        int shift = 64 - bits;
        return signed ? (word << shift) >> shift : (word << shift) >>> shift;
    }

    /** {@return {@code v} as an output word of this width} */
    long out(long v) {
        return PtxRig.w(bits, v);
    }

    long min() {
        return signed ? (bits == 64 ? Long.MIN_VALUE : -(1L << (bits - 1))) : 0;
    }

    long max() {
        return signed ? (bits == 64 ? Long.MAX_VALUE : (1L << (bits - 1)) - 1) : (bits == 64 ? -1L : (1L << bits) - 1);
    }

    /** {@return values at this type's edges and a few random ones, as words} */
    List<Long> edges(long seed) {
        List<Long> e = new ArrayList<>(List.of(0L, 1L, -1L, 2L, -2L, 7L, min(), max(), min() + 1, max() - 1,
                0x5555_5555_5555_5555L, 0xaaaa_aaaa_aaaa_aaaaL));
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < 8; i++) {
            e.add(r.nextLong());
            e.add((long) r.nextInt(-100, 100));
        }
        return e;
    }

    /** {@return every pair of {@link #edges} values plus random pairs} */
    long[][] pairs(long seed) {
        List<Long> e = edges(seed);
        List<long[]> rows = new ArrayList<>();
        for (long a : e) {
            for (long b : e) {
                rows.add(new long[] {a, b});
            }
        }
        return rows.toArray(new long[0][]);
    }

    /** {@return random triples, edges among them} */
    long[][] triples(long seed) {
        List<Long> e = edges(seed);
        SplittableRandom r = new SplittableRandom(seed + 1);
        long[][] rows = new long[600][];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = new long[] {e.get(r.nextInt(e.size())), e.get(r.nextInt(e.size())), r.nextBoolean() ? r.nextLong()
                    : e.get(r.nextInt(e.size()))};
        }
        return rows;
    }

    @Override
    public String toString() {
        return name;
    }
}
