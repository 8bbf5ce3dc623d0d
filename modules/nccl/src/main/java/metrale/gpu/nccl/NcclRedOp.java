// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

/** {@code ncclRedOp_t}: how a reduction combines the ranks' elements. */
public enum NcclRedOp {
    /** {@code ncclSum}. */
    SUM(0),
    /** {@code ncclProd}. */
    PROD(1),
    /** {@code ncclMax}. */
    MAX(2),
    /** {@code ncclMin}. */
    MIN(3),
    /** {@code ncclAvg}: the sum divided by the rank count (integer types divide, truncating). */
    AVG(4);

    private final int code;

    NcclRedOp(int code) {
        this.code = code;
    }

    /** {@return the {@code ncclRedOp_t} number} */
    public int code() {
        return code;
    }
}
