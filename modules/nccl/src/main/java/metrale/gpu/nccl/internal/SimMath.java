// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.nccl.NcclDataType;
import metrale.gpu.nccl.NcclRedOp;

/** The simulated communicator's arithmetic: reductions over little-endian element arrays, in rank order. */
final class SimMath {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    private SimMath() {
    }

    /**
     * {@return the element-wise reduction of {@code count} elements starting at element {@code from}
     * of each input, in rank order}
     */
    static byte[] reduce(byte[][] inputs, long from, long count, NcclDataType type, NcclRedOp op) {
        int sz = type.bytes();
        byte[] out = new byte[Math.toIntExact(count * sz)];
        MemorySegment o = MemorySegment.ofArray(out);
        MemorySegment[] in = new MemorySegment[inputs.length];
        for (int r = 0; r < inputs.length; r++) {
            in[r] = MemorySegment.ofArray(inputs[r]);
        }
        int n = inputs.length;
        for (long i = 0; i < count; i++) {
            long at = (from + i) * sz;
            long to = i * sz;
            switch (type) {
                case INT8, UINT8 -> {
                    long acc = intValue(in[0].get(ValueLayout.JAVA_BYTE, at), type);
                    for (int r = 1; r < n; r++) {
                        acc = combine(acc, intValue(in[r].get(ValueLayout.JAVA_BYTE, at), type), op, type);
                    }
                    o.set(ValueLayout.JAVA_BYTE, to, (byte) avg(acc, n, op, type));
                }
                case INT32, UINT32 -> {
                    long acc = intValue(in[0].get(I32, at), type);
                    for (int r = 1; r < n; r++) {
                        acc = combine(acc, intValue(in[r].get(I32, at), type), op, type);
                    }
                    o.set(I32, to, (int) avg(acc, n, op, type));
                }
                case INT64, UINT64 -> {
                    long acc = in[0].get(I64, at);
                    for (int r = 1; r < n; r++) {
                        acc = combine(acc, in[r].get(I64, at), op, type);
                    }
                    o.set(I64, to, avg(acc, n, op, type));
                }
                case FLOAT32 -> {
                    float acc = in[0].get(F32, at);
                    for (int r = 1; r < n; r++) {
                        acc = (float) combine(acc, in[r].get(F32, at), op);
                    }
                    o.set(F32, to, op == NcclRedOp.AVG ? acc / n : acc);
                }
                case FLOAT64 -> {
                    double acc = in[0].get(F64, at);
                    for (int r = 1; r < n; r++) {
                        acc = combine(acc, in[r].get(F64, at), op);
                    }
                    o.set(F64, to, op == NcclRedOp.AVG ? acc / n : acc);
                }
                case FLOAT16, BFLOAT16 -> {
                    float acc = toFloat(in[0].get(I16, at), type);
                    for (int r = 1; r < n; r++) {
                        acc = (float) combine(acc, toFloat(in[r].get(I16, at), type), op);
                    }
                    o.set(I16, to, fromFloat(op == NcclRedOp.AVG ? acc / n : acc, type));
                }
            }
        }
        return out;
    }

    private static long intValue(long raw, NcclDataType t) {
        return switch (t) {
            case UINT8 -> raw & 0xFF;
            case UINT32 -> raw & 0xFFFF_FFFFL;
            default -> raw;
        };
    }

    private static boolean unsigned(NcclDataType t) {
        return t == NcclDataType.UINT8 || t == NcclDataType.UINT32 || t == NcclDataType.UINT64;
    }

    private static long combine(long a, long b, NcclRedOp op, NcclDataType t) {
        return switch (op) {
            case SUM, AVG -> a + b;
            case PROD -> a * b;
            case MAX -> (unsigned(t) ? Long.compareUnsigned(a, b) : Long.compare(a, b)) >= 0 ? a : b;
            case MIN -> (unsigned(t) ? Long.compareUnsigned(a, b) : Long.compare(a, b)) <= 0 ? a : b;
        };
    }

    private static long avg(long acc, int n, NcclRedOp op, NcclDataType t) {
        if (op != NcclRedOp.AVG) {
            return acc;
        }
        return unsigned(t) ? Long.divideUnsigned(acc, n) : acc / n;
    }

    private static double combine(double a, double b, NcclRedOp op) {
        return switch (op) {
            case SUM, AVG -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    private static float toFloat(short bits, NcclDataType t) {
        return t == NcclDataType.FLOAT16 ? Float.float16ToFloat(bits) : Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    private static short fromFloat(float v, NcclDataType t) {
        if (t == NcclDataType.FLOAT16) {
            return Float.floatToFloat16(v);
        }
        int bits = Float.floatToRawIntBits(v);
        if (Float.isNaN(v)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        // Round to nearest, ties to even, as NCCL's __float2bfloat16 does.
        int rounded = bits + 0x7FFF + ((bits >>> 16) & 1);
        return (short) (rounded >>> 16);
    }
}
