// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.ArrayDeque;

/**
 * What the runtime told the device about memory whose end waits for earlier work: pool blocks
 * released back to the pool ({@code Driver.poolBlockReleased}) and memory the runtime's quarantine
 * holds ({@code Driver.memoryHeld}). Each takes effect once every operation enqueued before it, on
 * any stream, has run: a released block then faults as pool memory no block holds, a held one as
 * freed memory. Not thread-safe: the device lock guards it.
 */
final class BlockEnds {

    /** A released pool block, or held memory, and the last operation enqueued before the release or the hold. */
    private record End(Alloc block, long upTo, boolean hold) {
    }

    private final DeviceMemory memory;
    private final Scheduler scheduler;
    private final ArrayDeque<End> pending = new ArrayDeque<>();

    BlockEnds(DeviceMemory memory, Scheduler scheduler) {
        this.memory = memory;
        this.scheduler = scheduler;
    }

    /** The pool block based at {@code ptr} goes back to the pool; an address that is no block is ignored. */
    void release(long ptr) {
        Alloc b = memory.releaseBlock(ptr);
        if (b != null) {
            pending.addLast(new End(b, scheduler.lastSeq(), false));
        }
        finish();
    }

    /** The allocation or pool block based at {@code ptr} is held by the quarantine; other addresses are ignored. */
    void hold(long ptr) {
        Alloc a = memory.heldAt(ptr);
        if (a != null) {
            pending.addLast(new End(a, scheduler.lastSeq(), true));
        }
        finish();
    }

    /** Ends the releases and holds whose earlier work has all run. */
    void finish() {
        for (var it = pending.iterator(); it.hasNext(); ) {
            End e = it.next();
            if (!scheduler.pendingUpTo(e.upTo())) {
                if (e.hold()) {
                    e.block().held = true;
                } else {
                    memory.released(e.block());
                }
                it.remove();
            }
        }
    }
}
