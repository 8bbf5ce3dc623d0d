// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A stream handle ({@code CUstream}): an ordered queue of device work.
 *
 * <p>{@link #DEFAULT} ({@code 0}) is the legacy default stream, which synchronizes with every
 * blocking stream; {@link #LEGACY} names it explicitly; {@link #PER_THREAD} is the per-thread
 * default stream. Other streams come from {@link Gpu#createStream} and are destroyed with
 * {@link Gpu#destroyStream}.
 *
 * @param handle the backend's stream handle
 */
public record Stream(long handle) {

    /** The legacy default stream, handle {@code 0}. */
    public static final Stream DEFAULT = new Stream(0);

    /** {@code CU_STREAM_LEGACY} ({@code 0x1}): the legacy default stream by its explicit name. */
    public static final Stream LEGACY = new Stream(0x1);

    /** {@code CU_STREAM_PER_THREAD} ({@code 0x2}): the calling thread's default stream. */
    public static final Stream PER_THREAD = new Stream(0x2);

    /** {@return whether this names the legacy default stream ({@code 0} or {@code LEGACY})} */
    public boolean isLegacyDefault() {
        return handle == 0 || handle == 0x1;
    }

    @Override
    public String toString() {
        return handle == 0 ? "stream(default)" : "stream@0x" + Long.toHexString(handle);
    }
}
