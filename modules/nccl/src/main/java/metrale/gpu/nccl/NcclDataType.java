// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

/** {@code ncclDataType_t}: the element type of a collective's buffers, with its size. */
public enum NcclDataType {
    /** {@code ncclInt8}. */
    INT8(0, 1),
    /** {@code ncclUint8}. */
    UINT8(1, 1),
    /** {@code ncclInt32}. */
    INT32(2, 4),
    /** {@code ncclUint32}. */
    UINT32(3, 4),
    /** {@code ncclInt64}. */
    INT64(4, 8),
    /** {@code ncclUint64}. */
    UINT64(5, 8),
    /** {@code ncclFloat16} (IEEE half). */
    FLOAT16(6, 2),
    /** {@code ncclFloat32}. */
    FLOAT32(7, 4),
    /** {@code ncclFloat64}. */
    FLOAT64(8, 8),
    /** {@code ncclBfloat16}. */
    BFLOAT16(9, 2);

    private final int code;
    private final int bytes;

    NcclDataType(int code, int bytes) {
        this.code = code;
        this.bytes = bytes;
    }

    /** {@return the {@code ncclDataType_t} number} */
    public int code() {
        return code;
    }

    /** {@return the size of one element in bytes} */
    public int bytes() {
        return bytes;
    }
}
