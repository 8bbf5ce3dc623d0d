// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that run a grid's blocks at once ({@link metrale.gpu.sim.SimBlockOrder#PARALLEL}):
 * the launching thread and {@code parallelism - 1} daemon helpers, one pool for the whole process.
 *
 * <p><b>Chunks.</b> A launch cuts its grid into contiguous chunks of blocks, about
 * {@value #CHUNKS_PER_SLOT} per participant, and gives each participant slot a home range of
 * consecutive chunks: the launching thread is slot 0, helper {@code i} slot {@code i}. A
 * participant claims its home range's chunks in order, then what is left of the other ranges. So
 * a helper that wakes late or is descheduled holds no block up, a thread walks memory in long
 * runs, and the same thread tends to run the same blocks launch after launch, their memory still
 * in its core's cache.
 *
 * <p><b>Failures.</b> A block that throws stops the launch: blocks at or past the lowest failing
 * block so far do not start, and every block below it runs. So the failure {@link #run} throws is
 * that of the lowest-indexed block that fails, the block an in-order run stops at, however the
 * threads are timed (for blocks that do not race).
 *
 * <p>Thread-safe: launches from several threads share the helpers; one that finds every job slot
 * taken runs on its own thread alone.
 */
final class BlockPool implements AutoCloseable {

    /** Chunks per participant slot: enough to even out a slow thread, few enough to stay long. */
    private static final int CHUNKS_PER_SLOT = 8;
    /**
     * Longs from one counter of a job to the next, with as many before the first and after the last:
     * each counter alone on its 64-byte cache line, so claims share no line with each other or with
     * what every participant reads.
     */
    private static final int PAD = 8;
    /** Launches that can have helpers at once; more run on their own threads. */
    private static final int MAX_JOBS = 8;
    /** Helpers one newly working thread wakes: the owner wakes two, each of them two more. */
    private static final int FAN_OUT = 2;
    /**
     * How long an idle helper, or an owner waiting for the last chunks, spins before it parks, when
     * every participant has a processor of its own. A launch that follows within this time finds
     * the helpers awake: waking a parked thread is a system call and a wait for the scheduler,
     * longer on a virtual machine, as long as a small grid's whole run.
     */
    private static final long SPIN_NANOS = 20_000;

    private static final VarHandle COUNTER = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle JOBS = MethodHandles.arrayElementVarHandle(Job[].class);
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Helper.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int RUNNING = 0;
    private static final int PARKED = 1;
    private static final int STOPPED = 2;

    /** The process's pool: a participant per available processor, at least two so blocks really race. */
    private static final class Shared {
        static final BlockPool POOL = new BlockPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
    }

    /** {@return the process's pool, its helpers started on first use} */
    static BlockPool shared() {
        return Shared.POOL;
    }

    /** A launch's blocks as the pool runs them. */
    interface Work {
        /**
         * {@return the state one thread runs its blocks with} Called on that thread, before its
         * first block, at most once per thread and launch.
         */
        Participant participant();
    }

    /** One thread's part of a launch. */
    interface Participant {
        /** Runs the block of linear index {@code block} (x fastest) to its end. */
        void run(long block);

        /** Releases what {@link Work#participant} made; called on the same thread after its last block. */
        default void done() {
        }
    }

    private final int parallelism;
    /** {@link #SPIN_NANOS}, or 0 where participants outnumber processors: a spinner would hold the core the work needs. */
    private final long spinNanos;
    private final Helper[] helpers;
    private final Job[] jobs = new Job[MAX_JOBS];

    /** A pool of {@code parallelism} participants: the launching thread and {@code parallelism - 1} helpers. */
    BlockPool(int parallelism) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism " + parallelism + " < 1");
        }
        this.parallelism = parallelism;
        this.spinNanos = parallelism <= Runtime.getRuntime().availableProcessors() ? SPIN_NANOS : 0;
        this.helpers = new Helper[parallelism - 1];
        for (int i = 0; i < helpers.length; i++) {
            helpers[i] = new Helper(i + 1);
        }
        for (Helper h : helpers) {
            h.thread.start();
        }
    }

    /**
     * Runs blocks {@code 0 .. blocks - 1} of a launch, each once, on this thread and whichever
     * helpers join, and returns when none runs any more. A block's failure stops the launch (see
     * the class comment) and is thrown here; a checked one wrapped in an
     * {@link UndeclaredThrowableException}.
     */
    void run(long blocks, Work work) {
        if (blocks <= 0) {
            return;
        }
        Job j = new Job(blocks, parallelism, work, Thread.currentThread());
        int at = j.chunks > 1 && helpers.length > 0 ? publish(j) : -1;
        if (at >= 0) {
            wake((int) Math.min(FAN_OUT, j.chunks - 1));
        }
        try {
            j.work(0);
        } finally {
            if (at >= 0) {
                JOBS.setVolatile(jobs, at, null);
            }
            j.await(spinNanos);
        }
        Throwable f = j.failure();
        if (f instanceof RuntimeException r) {
            throw r;
        }
        if (f instanceof Error e) {
            throw e;
        }
        if (f != null) {
            throw new UndeclaredThrowableException(f);
        }
    }

    /** Stops the helpers once they are idle; the process's pool is never closed. */
    @Override
    public void close() {
        for (Helper h : helpers) {
            if ((int) STATE.getAndSet(h, STOPPED) == PARKED) {
                LockSupport.unpark(h.thread);
            }
        }
    }

    /** {@return the job slot {@code j} took, or -1 when every slot is taken} */
    private int publish(Job j) {
        for (int i = 0; i < MAX_JOBS; i++) {
            if (JOBS.compareAndSet(jobs, i, null, j)) {
                return i;
            }
        }
        return -1;
    }

    /** {@return a published job with chunks left to claim, looking from slot {@code from}, or {@code null}} */
    private Job find(int from) {
        for (int i = 0; i < MAX_JOBS; i++) {
            Job j = (Job) JOBS.getVolatile(jobs, (from + i) % MAX_JOBS);
            if (j != null && j.hasWork()) {
                return j;
            }
        }
        return null;
    }

    /** Unparks up to {@code count} parked helpers. */
    private void wake(int count) {
        for (int i = 0; i < helpers.length && count > 0; i++) {
            Helper h = helpers[i];
            if (h.state == PARKED && STATE.compareAndSet(h, PARKED, RUNNING)) {
                LockSupport.unpark(h.thread);
                count--;
            }
        }
    }

    /**
     * One step of a spin: mostly a spin-wait hint, now and then a yield, so that on fewer cores
     * than participants the thread that has the work gets the core.
     */
    private static void pause(int spins) {
        if ((spins & 63) == 0) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
    }

    /** A daemon thread that joins published jobs as participant {@link #slot}. */
    private final class Helper implements Runnable {
        final int slot;
        final Thread thread;
        /** {@link #RUNNING}, {@link #PARKED} (only a waker or the helper itself moves it back) or {@link #STOPPED}. */
        volatile int state;

        Helper(int slot) {
            this.slot = slot;
            this.thread = new Thread(this, "metrale-sim-blocks-" + slot);
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            while (state != STOPPED) {
                Job j = find(slot);
                if (j == null) {
                    idle();
                    continue;
                }
                wake(FAN_OUT);
                try {
                    j.work(slot);
                } catch (Throwable t) {
                    // Only a participant's done() gets here, after the job's blocks; the helper lives on.
                    j.fail(j.blocks, t);
                }
            }
        }

        /** Spins for a while, then parks until a waker or {@link #close} moves {@link #state} on. */
        private void idle() {
            long until = System.nanoTime() + spinNanos;
            for (int spins = 1; System.nanoTime() - until < 0; spins++) {
                if (find(slot) != null) {
                    return;
                }
                pause(spins);
            }
            if (!STATE.compareAndSet(this, RUNNING, PARKED)) {
                return;
            }
            // Announced before this look, so a job published after it finds this helper parked and wakes it.
            if (find(slot) != null) {
                STATE.compareAndSet(this, PARKED, RUNNING);
                return;
            }
            while (state == PARKED) {
                LockSupport.park(this);
            }
        }
    }

    /** One launch's blocks, chunks and claims. */
    private static final class Job {
        final long blocks;
        final int slots;
        final long chunks;
        /** Chunk {@code c} starts at block {@code c * perChunk + min(c, chunksWithOneMore)}. */
        final long perChunk;
        final long chunksWithOneMore;
        /** Range {@code r} starts at chunk {@code r * perRange + min(r, rangesWithOneMore)}. */
        final long perRange;
        final long rangesWithOneMore;
        final Work work;
        final Thread owner;
        /**
         * The next unclaimed chunk of range {@code r} at {@code [(r + 1) * PAD]}, and the chunks not
         * yet finished at {@link #unfinished}; each on its own cache line.
         */
        final long[] counters;
        final int unfinished;
        /** Blocks at or past it do not start: the lowest failing block so far, else {@link #blocks}. */
        volatile long limit;
        /** Whether the owner is parked, or about to, waiting for the last chunks: only then is it unparked. */
        volatile boolean ownerParked;
        /** The failure of block {@link #limit}; guarded by this. */
        private Throwable failure;

        Job(long blocks, int slots, Work work, Thread owner) {
            this.blocks = blocks;
            this.slots = slots;
            this.chunks = Math.min(blocks, (long) slots * CHUNKS_PER_SLOT);
            this.perChunk = blocks / chunks;
            this.chunksWithOneMore = blocks % chunks;
            this.perRange = chunks / slots;
            this.rangesWithOneMore = chunks % slots;
            this.work = work;
            this.owner = owner;
            this.counters = new long[(slots + 2) * PAD];
            for (int r = 0; r < slots; r++) {
                counters[(r + 1) * PAD] = rangeStart(r);
            }
            this.unfinished = (slots + 1) * PAD;
            counters[unfinished] = chunks;
            this.limit = blocks;
        }

        long chunkStart(long c) {
            return c * perChunk + Math.min(c, chunksWithOneMore);
        }

        long rangeStart(int r) {
            return r * perRange + Math.min(r, rangesWithOneMore);
        }

        boolean hasWork() {
            for (int r = 0; r < slots; r++) {
                if ((long) COUNTER.getAcquire(counters, (r + 1) * PAD) < rangeStart(r + 1)) {
                    return true;
                }
            }
            return false;
        }

        /** Claims and runs chunks as participant {@code slot} until none is left to claim. */
        void work(int slot) {
            Participant p = null;
            try {
                for (int i = 0; i < slots; i++) {
                    int r = (slot + i) % slots;
                    int at = (r + 1) * PAD;
                    long end = rangeStart(r + 1);
                    while ((long) COUNTER.getAcquire(counters, at) < end) {
                        long c = (long) COUNTER.getAndAdd(counters, at, 1L);
                        if (c >= end) {
                            break;
                        }
                        p = runChunk(c, p);
                    }
                }
            } finally {
                if (p != null) {
                    p.done();
                }
            }
        }

        /** {@return the participant, made at the first block this thread runs} */
        private Participant runChunk(long c, Participant p) {
            long b = chunkStart(c);
            long end = chunkStart(c + 1);
            try {
                for (; b < end && b < limit; b++) {
                    if (p == null) {
                        p = work.participant();
                    }
                    p.run(b);
                }
            } catch (Throwable t) {
                fail(b, t);
            } finally {
                if ((long) COUNTER.getAndAdd(counters, unfinished, -1L) == 1L && ownerParked) {
                    LockSupport.unpark(owner);
                }
            }
            return p;
        }

        synchronized void fail(long block, Throwable t) {
            if (failure == null || block < limit) {
                failure = t;
                limit = Math.min(limit, block);
            }
        }

        synchronized Throwable failure() {
            return failure;
        }

        /** Waits, uninterruptibly, until every claimed chunk has finished; spins {@code spinNanos} first. */
        void await(long spinNanos) {
            int at = unfinished;
            boolean interrupted = false;
            long spinUntil = System.nanoTime() + spinNanos;
            for (int spins = 1; (long) COUNTER.getVolatile(counters, at) != 0; spins++) {
                if (System.nanoTime() - spinUntil < 0) {
                    pause(spins);
                } else if (!ownerParked) {
                    // Announced before the loop looks again, so the last chunk's finisher sees it and unparks.
                    ownerParked = true;
                } else {
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
            }
            ownerParked = false;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
