// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * {@code ncclUniqueId}: the 128 bytes every rank of a communicator must be given, made once by
 * {@link Collectives#uniqueId} on one rank and carried to the others through the application's
 * own channel (a file, a socket, a launcher's environment); {@link #toHex()} and
 * {@link #fromHex(String)} give it a text form.
 *
 * @param bytes the id, exactly {@value #BYTES} bytes
 */
public record NcclUniqueId(byte[] bytes) {

    /** {@code NCCL_UNIQUE_ID_BYTES}. */
    public static final int BYTES = 128;

    /** Checks the length and copies. */
    public NcclUniqueId {
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("an NCCL unique id has " + BYTES + " bytes, not " + bytes.length);
        }
        bytes = bytes.clone();
    }

    /** {@return a copy of the bytes} */
    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    /** {@return the id as 256 lowercase hex digits} */
    public String toHex() {
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * {@return the id {@link #toHex()} wrote}
     *
     * @param hex 256 hex digits; surrounding white space is ignored
     * @throws IllegalArgumentException if it is not 256 hex digits
     */
    public static NcclUniqueId fromHex(String hex) {
        String h = hex.strip();
        if (h.length() != 2 * BYTES) {
            throw new IllegalArgumentException("an NCCL unique id is " + 2 * BYTES + " hex digits, not " + h.length());
        }
        return new NcclUniqueId(HexFormat.of().parseHex(h));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NcclUniqueId other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "NcclUniqueId[" + toHex().substring(0, 16) + "...]";
    }
}
