// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.pool;

import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * The caching allocator's bookkeeping: the chunks it holds from the driver, their blocks (a chunk's
 * blocks are a doubly linked list in address order, so a free block coalesces with free neighbours),
 * and each stream's lane of bins and fence. Guarded by the allocator's monitor.
 */
final class CachingBlocks {

    private CachingBlocks() {
    }

    /** Bins order blocks by size, then by address, so a best fit is the first at or above a size. */
    static final Comparator<Block> BY_SIZE = (a, b) -> {
        int c = Long.compare(a.size, b.size);
        return c != 0 ? c : Long.compareUnsigned(a.ptr, b.ptr);
    };

    /** One chunk from the driver. */
    static final class Chunk {
        final long base;
        final long bytes;
        final boolean small;
        final long stream;
        Block first;

        Chunk(long base, long bytes, boolean small, long stream) {
            this.base = base;
            this.bytes = bytes;
            this.small = small;
            this.stream = stream;
        }
    }

    /** A block of a chunk: live, free in a bin, or free and waiting for events. */
    static final class Block {
        final Chunk chunk;
        long ptr;
        long size;
        Block prev;
        Block next;
        boolean allocated;
        /** Live: the stream it was allocated on. Free: the stream it was freed on. */
        long stream;
        /** Live: the bytes asked for. */
        long requested;
        String site = "";
        long index = -1;
        /** Free: the sequence number of its free. */
        long freeSeq;
        /** Live: other streams that use it ({@link #recordStream}). */
        long[] uses;
        int useCount;
        /** Free and pending: the events it waits for. */
        long[] events;
        /**
         * Free and pending: the extra streams whose events are not yet recorded, since a capture was
         * live at the free (a record on a capturing stream would join its graph), or {@code null}.
         */
        long[] deferred;
        /** The bins it is in, or {@code null}. */
        Lane lane;

        Block(Chunk chunk, long ptr, long size) {
            this.chunk = chunk;
            this.ptr = ptr;
            this.size = size;
        }

        /** {@return whether {@code s} is one of the extra streams that use this live block} */
        boolean uses(long s) {
            for (int i = 0; i < useCount; i++) {
                if (uses[i] == s) {
                    return true;
                }
            }
            return false;
        }

        /** Forgets {@code s} as a user of this live block. */
        void dropUse(long s) {
            for (int i = 0; i < useCount; i++) {
                if (uses[i] == s) {
                    uses[i] = uses[--useCount];
                    return;
                }
            }
        }
    }

    /** The bins and the fence of one stream. */
    static final class Lane {
        final long stream;
        final TreeSet<Block> small = new TreeSet<>(BY_SIZE);
        final TreeSet<Block> large = new TreeSet<>(BY_SIZE);
        /** Blocks freed on this stream with a sequence number up to this are reusable by every stream. */
        long safeSeq;
        /** The highest sequence number of a free on this stream. */
        long lastFreeSeq;
        /** A recorded fence not yet seen complete: its event, and the last free it covers; 0 when none. */
        long fenceEvent;
        long fenceSeq;
        /** The stream was destroyed: no more fences can be recorded on it. */
        boolean retired;

        Lane(long stream) {
            this.stream = stream;
        }

        TreeSet<Block> bins(boolean small) {
            return small ? this.small : large;
        }

        boolean empty() {
            return small.isEmpty() && large.isEmpty();
        }

        /** {@return the size of the largest free block in this lane's bins} */
        long largest() {
            long m = small.isEmpty() ? 0 : small.last().size;
            return large.isEmpty() ? m : Math.max(m, large.last().size);
        }
    }

    /** {@return the better fit of two candidates, either of which may be {@code null}} */
    static Block better(Block a, Block b) {
        return a == null ? b : b == null ? a : BY_SIZE.compare(a, b) <= 0 ? a : b;
    }

    /** {@return the live blocks' bytes by allocation site} */
    static Map<String, Long> bySite(Collection<Block> live) {
        Map<String, Long> m = new HashMap<>();
        for (Block b : live) {
            m.merge(b.site, b.size, Long::sum);
        }
        return m;
    }
}
