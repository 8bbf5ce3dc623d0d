// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A block the pool handed to a stream that is not ordered after work of the block's previous life.
 *
 * @param ptr          the new block's base
 * @param bytes        its size
 * @param stream       the stream it was allocated for
 * @param site         where it was allocated
 * @param previous     the previous block(s) at that memory: size, creation index, where allocated, where and on which stream freed
 * @param unorderedWith the pending device work that used the memory and that {@code stream} is not ordered after
 */
public record PoolRace(DevicePtr ptr, long bytes, Stream stream, String site, String previous, String unorderedWith) {

    @Override
    public String toString() {
        return "stream-order race: " + ptr + " (" + bytes + " B) allocated at " + site + " for " + stream
                + " reuses memory of " + previous + ", still used by " + unorderedWith
                + ", which " + stream + " is not ordered after (free it with recordStream for every stream that used it)";
    }
}
